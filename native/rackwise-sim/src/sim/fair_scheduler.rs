//! The ResourceManager's side of an offer: what FairScheduler (or FIFO) places on the offered
//! node, delay scheduling, `maxAMShare`, and allocating and releasing containers.
//!
//! Queues are one per user, ordered by running containers; a queue's apps by running
//! containers, then age (FIFO leaf queues: by submission). The fair-share bookkeeping keeps
//! both orders as sorted sets, taken out and put back around every change of a job's running
//! or pending counts. Under a core policy the same loop runs with the core's plan, as the RM
//! shim's scheduler does: a steered app waits for its queue's head entry (for the first of its
//! own entries, where the plan leaves the order between the queue's apps to FairScheduler),
//! which places at its priority under its locality cap. Every FairScheduler policy (baselines
//! and core) places as many containers per heartbeat as `HeartbeatAssignment` allows and
//! starts no AM beyond its queue's `maxAMShare`; docs/simulator.md ("Fidelity to Hadoop 3.4")
//! gives the sources.

use super::core_link::OfferPlan;
use super::event_loop::Ev;
use super::{
    Job, JobPhase, Policy, Sim, CAPACITY_MAX_SHARE, PRIORITY_AM, PRIORITY_MAP, PRIORITY_REDUCE,
};
use rackwise_core::mapreduce::{self, Placement};
use rackwise_core::protocol::{ContainerId, Event, Locality, Priority};

/// FairScheduler's `maxAMShare` default (`queueMaxAMShareDefault`, Hadoop 3.4: 0.5).
pub const MAX_AM_SHARE: f64 = 0.5;

/// The `delay` baseline's `yarn.scheduler.fair.locality.threshold.node` and `.rack` (Hadoop's
/// default is -1, off; that is `fair`). The earlier time-based baseline waited 5 s per level
/// ("Delay Scheduling's setting"); counted in opportunities, Hadoop caps a threshold at 1.0,
/// one missed offer per node of the cluster, about one heartbeat interval for an app every
/// heartbeat reaches. The cap is the closest Hadoop 3.4 comes to the intended wait.
pub const DELAY_LOCALITY_THRESHOLD_NODE: f64 = 1.0;
pub const DELAY_LOCALITY_THRESHOLD_RACK: f64 = 1.0;

/// FairScheduler's per-heartbeat assignment (`FairScheduler.attemptScheduling` and
/// `shouldContinueAssigning`; `yarn.scheduler.fair.assignmultiple`, `.max.assign`,
/// `.dynamic.max.assign`). The default is Hadoop 3.4's: one container per heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatAssignment {
    pub assign_multiple: bool,
    /// With `assign_multiple` and not `dynamic_max_assign`: at most this many (≤ 0: no limit).
    pub max_assign: i32,
    /// With `assign_multiple`: stop once the heartbeat's containers exceed half of the node's
    /// unallocated resources at its start.
    pub dynamic_max_assign: bool,
    /// Not Hadoop: every free container of the node at every heartbeat, the simulator's
    /// behaviour before it followed Hadoop 3.4, kept to compare with earlier results.
    pub fill_node: bool,
}

impl Default for HeartbeatAssignment {
    fn default() -> Self {
        HeartbeatAssignment {
            assign_multiple: false,
            max_assign: -1,
            dynamic_max_assign: true,
            fill_node: false,
        }
    }
}

impl HeartbeatAssignment {
    /// The containers one heartbeat may place on a node with `free` containers. Hadoop keeps
    /// assigning while the resources assigned fit in half the unallocated resources (each
    /// figure rounded down), so with equal containers that is `free / 2 + 1` of them.
    pub fn limit(&self, free: u32) -> u32 {
        let limit = if self.fill_node {
            free
        } else if !self.assign_multiple {
            1
        } else if self.dynamic_max_assign {
            free / 2 + 1
        } else if self.max_assign <= 0 {
            free
        } else {
            self.max_assign as u32
        };
        limit.min(free)
    }
}

impl Sim<'_> {
    /// A job's place in its user queue: by running containers (fair), or by submission
    /// (FIFO leaf queues).
    fn app_order(&self, j: u32) -> u32 {
        match self.policy {
            Policy::FairFifo | Policy::Capacity => self.submit_rank[j as usize],
            _ => self.jobs[j as usize].running,
        }
    }

    /// A user queue's place among the queues with demand: FairScheduler's fair-share
    /// comparator orders by usage over weight, a queue of weight 0 last. With every weight 1
    /// this is the running count (scaled), so unweighted runs order as before.
    fn demand_key(&self, u: usize) -> u64 {
        const SCALE: f64 = 1024.0;
        let running = self.user_running[u];
        match &self.weights {
            None => u64::from(running) * SCALE as u64,
            Some(weights) if weights[u] > 0.0 => (f64::from(running) / weights[u] * SCALE) as u64,
            Some(_) => u64::MAX,
        }
    }

    /// The core set user `u`'s queue weight: its place among the queues with demand moves.
    pub(super) fn set_weight(&mut self, u: u32, weight: f64) {
        let users = self.user_running.len();
        let u = u as usize;
        if u >= users {
            return;
        }
        let demanding = self.user_pending[u] > 0;
        if demanding {
            self.users_demand.remove(&(self.demand_key(u), u as u32));
        }
        self.weights.get_or_insert_with(|| vec![1.0; users])[u] = weight;
        if demanding {
            self.users_demand.insert((self.demand_key(u), u as u32));
        }
    }

    /// User `u`'s instantaneous fair share in containers: the cluster divided among the
    /// active queues by weight (all weights 1 unless the core set them).
    pub(super) fn fair_share(&self, u: u32) -> f64 {
        let total = self.nodes.len() as f64 * f64::from(self.cluster.containers_per_node);
        match &self.weights {
            None => total / f64::from(self.active_queues.max(1)),
            Some(weights) => {
                let active: f64 = weights
                    .iter()
                    .zip(&self.user_active_apps)
                    .filter(|(_, apps)| **apps > 0)
                    .map(|(weight, _)| weight)
                    .sum();
                if active > 0.0 {
                    total * weights[u as usize] / active
                } else {
                    0.0
                }
            }
        }
    }

    pub(super) fn fs_remove(&mut self, j: u32) {
        let order = self.app_order(j);
        let full_node_heartbeats = self.full_node_heartbeats();
        let job = &mut self.jobs[j as usize];
        if misses_full_node_offers(job) {
            job.missed += full_node_heartbeats - job.full_node_base;
        }
        let job = &self.jobs[j as usize];
        let u = job.user as usize;
        if job.pending() > 0 {
            self.user_apps[u].remove(&(order, j));
            self.fifo.remove(&j);
        }
        if self.user_pending[u] > 0 {
            self.users_demand.remove(&(self.demand_key(u), u as u32));
        }
        self.user_pending[u] -= job.pending();
        self.total_pending -= job.pending() as u64;
    }

    pub(super) fn fs_insert(&mut self, j: u32) {
        let order = self.app_order(j);
        let full_node_heartbeats = self.full_node_heartbeats();
        let job = &mut self.jobs[j as usize];
        if misses_full_node_offers(job) {
            job.full_node_base = full_node_heartbeats;
        }
        let u = job.user as usize;
        let job = &self.jobs[j as usize];
        let before = self.total_pending;
        if job.pending() > 0 {
            self.user_apps[u].insert((order, j));
            self.fifo.insert(j);
        }
        self.user_pending[u] += job.pending();
        self.total_pending += job.pending() as u64;
        if self.user_pending[u] > 0 {
            self.users_demand.insert((self.demand_key(u), u as u32));
        }
        if before == 0 && self.total_pending > 0 {
            // The watchdog's clock starts when work appears, not at the last progress before
            // an idle spell.
            self.last_progress_ms = self.now;
        }
        if self.total_pending > before {
            self.demand_appeared();
        }
    }

    pub(super) fn offer(&mut self, node: u32) {
        self.counters.offers += 1;
        self.offer_seq += 1;
        let containers_before = self.counters.containers;
        let free = self.nodes[node as usize].free;
        match self.policy {
            Policy::Fifo => self.offer_fifo(node),
            Policy::Fair | Policy::FairFifo | Policy::FairSplit { .. } | Policy::Capacity => {
                self.offer_fair(node, false, None)
            }
            Policy::Delay => self.offer_fair(node, true, None),
            Policy::Core(_) => {
                let plan = self.ask_core(node);
                self.offer_fair(node, false, Some(plan));
            }
        }
        self.collector.offer_done(
            self.counters.containers - containers_before,
            free,
            self.cluster.heartbeat_ms,
        );
    }

    /// Hadoop's FifoScheduler: it has no `assignmultiple` or `maxAMShare`; every heartbeat
    /// fills the node (`FifoScheduler.assignContainersOnNode`).
    fn offer_fifo(&mut self, node: u32) {
        while self.nodes[node as usize].free > 0 && self.total_pending > 0 {
            let mut chosen = None;
            for &j in &self.fifo {
                if let Some((p, l)) = self.stock_choice(j, node, Locality::OffSwitch) {
                    chosen = Some((j, p, l));
                    break;
                }
            }
            let Some((j, p, l)) = chosen else { break };
            self.allocate(j, node, p, l);
        }
    }

    /// FairScheduler: queues (one per user) by usage, apps of the queue by usage then age; the
    /// first app that can place on this node does. With a plan, steered apps of a queue other
    /// than its head entry's app are vetoed and the head places at its priority and cap; where
    /// the plan leaves the order between the queue's apps to FairScheduler, each steered app's
    /// head is the first of its own entries.
    fn offer_fair(&mut self, node: u32, delay: bool, mut plan: Option<OfferPlan>) {
        let rack = self.nodes[node as usize].rack;
        // Snapshots of the queue and app orders, which placing changes; the buffers are kept
        // between offers.
        let mut users = std::mem::take(&mut self.fair_users);
        let mut apps = std::mem::take(&mut self.fair_apps);
        let limit = self
            .heartbeat_assignment
            .limit(self.nodes[node as usize].free);
        let mut placed = 0;
        while placed < limit && self.nodes[node as usize].free > 0 && self.total_pending > 0 {
            users.clear();
            users.extend(self.users_demand.iter().map(|&(_, u)| u));
            let mut chosen: Option<(u32, i32, Locality, Option<usize>)> = None;
            'queues: for &u in &users {
                if self.over_capacity(u) {
                    continue;
                }
                apps.clear();
                apps.extend(self.user_apps[u as usize].iter().map(|&(_, j)| j));
                // Where the core orders the queue's apps, one head serves every app of it;
                // where FairScheduler does, each steered app has its own.
                let apps_ordered = plan.as_ref().is_some_and(|p| p.scheduler_orders_apps(u));
                let queue_head = if apps_ordered {
                    None
                } else {
                    plan.as_ref()
                        .and_then(|p| p.head(u, None, |e| self.satisfiable(e, node, rack)))
                };
                for &j in &apps {
                    // `FSAppAttempt.isOverAMShareLimit`: the app offers nothing.
                    if self.jobs[j as usize].am_pending && !self.am_share_allows(u) {
                        continue;
                    }
                    let steered =
                        plan.is_some() && self.jobs[j as usize].steered_stamp == self.offer_seq;
                    let head = if apps_ordered && steered {
                        plan.as_ref()
                            .and_then(|p| p.head(u, Some(j), |e| self.satisfiable(e, node, rack)))
                    } else {
                        queue_head
                    };
                    let head_entry = head
                        .as_ref()
                        .map(|(_, e)| (&e.job, Priority(e.priority), e.locality));
                    match mapreduce::placement(&j, steered, head_entry) {
                        Placement::Vetoed => continue,
                        Placement::Place { priority, cap } => {
                            let idx = head.map_or(0, |(idx, _)| idx);
                            match self.capped_choice(j, node, priority.0, cap) {
                                Some(l) => chosen = Some((j, priority.0, l, Some(idx))),
                                None => {
                                    if let Some(p) = plan.as_mut() {
                                        p.entries[idx].failed = true;
                                    }
                                    chosen = Some((u32::MAX, 0, Locality::OffSwitch, None));
                                }
                            }
                            break 'queues;
                        }
                        Placement::Stock => {
                            let allowed =
                                if delay && misses_full_node_offers(&self.jobs[j as usize]) {
                                    self.delay_level(j)
                                } else {
                                    Locality::OffSwitch
                                };
                            if let Some((p, l)) = self.stock_choice(j, node, allowed) {
                                chosen = Some((j, p, l, None));
                                break 'queues;
                            }
                        }
                    }
                }
            }
            match chosen {
                None => break,
                // A head that failed to place: re-evaluate the plan from the next entry.
                Some((u32::MAX, ..)) => continue,
                Some((j, p, l, _)) => {
                    self.allocate(j, node, p, l);
                    placed += 1;
                }
            }
        }
        self.fair_users = users;
        self.fair_apps = apps;
    }

    /// FairScheduler's `getAllowedLocalityLevel` for the map key of a job offered a node:
    /// the offer is one more missed scheduling opportunity (`addSchedulingOpportunity`), and
    /// past `threshold × nodes` of them the level relaxes one step and the count restarts.
    fn delay_level(&mut self, j: u32) -> Locality {
        let (node_threshold, rack_threshold) = self.locality_thresholds;
        if node_threshold < 0.0 || rack_threshold < 0.0 {
            return Locality::OffSwitch;
        }
        let nodes = self.nodes.len() as f64;
        let full_node_heartbeats = self.full_node_heartbeats();
        let job = &mut self.jobs[j as usize];
        job.missed += 1.0;
        let missed = job.missed + full_node_heartbeats - job.full_node_base;
        let (threshold, relaxed) = match job.allowed {
            Locality::NodeLocal => (node_threshold, Locality::RackLocal),
            Locality::RackLocal => (rack_threshold, Locality::OffSwitch),
            Locality::OffSwitch => return Locality::OffSwitch,
        };
        if missed > nodes * threshold.min(1.0) {
            job.allowed = relaxed;
            job.missed = 0.0;
            job.full_node_base = full_node_heartbeats;
        }
        job.allowed
    }

    /// Heartbeats of nodes with no free container so far. Such a heartbeat reaches every app
    /// (none can place) and is a missed opportunity for each whose map key it gets to; the
    /// simulator does not run them as events, so they are counted as a rate.
    pub(super) fn full_node_heartbeats(&self) -> f64 {
        self.full_node_heartbeats
            + self.full_nodes as f64 * (self.now - self.full_nodes_since) as f64
                / self.cluster.heartbeat_ms as f64
    }

    fn count_full_node(&mut self, full: bool) {
        self.full_node_heartbeats = self.full_node_heartbeats();
        self.full_nodes_since = self.now;
        if full {
            self.full_nodes += 1;
        } else {
            self.full_nodes -= 1;
        }
    }

    /// `FSLeafQueue.canRunAppAM`: one more AM container fits in `maxAMShare` of the user
    /// queue's instantaneous fair share (the cluster split evenly between the queues with an
    /// app; a share of zero falls back to what is free), rounded up, memory and vcores alike.
    /// Under `capacity`, whether the user's queue holds its maximum share of the containers.
    fn over_capacity(&self, user: u32) -> bool {
        let containers = self.cluster.nodes() as f64 * self.cluster.containers_per_node as f64;
        matches!(self.policy, Policy::Capacity)
            && self.user_running[user as usize] as f64 >= CAPACITY_MAX_SHARE * containers
    }

    pub(super) fn am_share_allows(&self, user: u32) -> bool {
        if self.max_am_share < 0.0 {
            return true;
        }
        let total = self.cluster.nodes() as u64 * self.cluster.containers_per_node as u64;
        let container_mb = self.cluster.container_mb;
        let free = total - self.running_containers;
        let fair = self.fair_share(user);
        let mut fair_vcores = fair.floor() as u64;
        let mut fair_mb = (fair * container_mb as f64).floor() as u64;
        if fair_vcores == 0 {
            fair_vcores = free;
        }
        if fair_mb == 0 {
            fair_mb = free * container_mb;
        }
        let max_vcores = (fair_vcores as f64 * self.max_am_share).ceil();
        let max_mb = (fair_mb as f64 * self.max_am_share).ceil();
        let next = self.user_ams[user as usize] as f64 + 1.0;
        next <= max_vcores && next * container_mb as f64 <= max_mb
    }

    /// What stock FairScheduler would place of job `j` on `node`: keys by priority (AM,
    /// reduce, map); asks without locations go off-switch at once, maps at the allowed level.
    fn stock_choice(&self, j: u32, node: u32, allowed: Locality) -> Option<(i32, Locality)> {
        let job = &self.jobs[j as usize];
        if job.am_pending {
            return Some((PRIORITY_AM, Locality::OffSwitch));
        }
        let (map_cap, reduce_cap) = match self.policy {
            Policy::FairSplit { maps, reduces } => (maps, reduces),
            _ => (u32::MAX, u32::MAX),
        };
        let state = &self.nodes[node as usize];
        if job.pending_reduces > 0 && state.reduces < reduce_cap {
            return Some((PRIORITY_REDUCE, Locality::OffSwitch));
        }
        if job.pending_maps > 0 && state.maps < map_cap {
            return self
                .map_locality(job, node, allowed)
                .map(|l| (PRIORITY_MAP, l));
        }
        None
    }

    fn map_locality(&self, job: &Job, node: u32, allowed: Locality) -> Option<Locality> {
        let rack = self.nodes[node as usize].rack;
        if job.host_count.get(&node).is_some_and(|c| *c > 0) {
            Some(Locality::NodeLocal)
        } else if allowed >= Locality::RackLocal
            && job.rack_count.get(&rack).is_some_and(|c| *c > 0)
        {
            Some(Locality::RackLocal)
        } else if allowed == Locality::OffSwitch {
            Some(Locality::OffSwitch)
        } else {
            None
        }
    }

    /// A plan entry placing under its cap (FairScheduler with the key filtered and the allowed
    /// locality set to the cap, as `RackwiseAppAttempt` does).
    fn capped_choice(&self, j: u32, node: u32, priority: i32, cap: Locality) -> Option<Locality> {
        let job = &self.jobs[j as usize];
        match priority {
            PRIORITY_AM if job.am_pending => Some(Locality::OffSwitch),
            PRIORITY_REDUCE if job.pending_reduces > 0 => Some(Locality::OffSwitch),
            PRIORITY_MAP if job.pending_maps > 0 => self.map_locality(job, node, cap),
            _ => None,
        }
    }

    fn allocate(&mut self, j: u32, node: u32, priority: i32, locality: Locality) {
        let state = &mut self.nodes[node as usize];
        if state.free == 0 {
            self.counters.max_node_overallocation += 1;
            return;
        }
        state.free -= 1;
        if state.free == 0 {
            self.count_full_node(true);
        }
        self.last_progress_ms = self.now;
        self.fs_remove(j);
        let u = self.jobs[j as usize].user as usize;
        self.user_running[u] += 1;
        self.account_busy(j);
        self.jobs[j as usize].running += 1;
        self.running_containers += 1;
        self.counters.containers += 1;
        self.next_container += 1;
        let container = self.next_container;
        match priority {
            PRIORITY_AM => {
                let job = &mut self.jobs[j as usize];
                job.am_pending = false;
                job.am_node = node;
                job.am_container = container;
                job.phase = JobPhase::AmStarting;
                self.user_ams[u] += 1;
                let at = self.now + (self.cluster.am_startup_s * 1000.0) as u64;
                self.push(at, Ev::AmReady(j));
            }
            PRIORITY_REDUCE => {
                self.nodes[node as usize].reduces += 1;
                self.jobs[j as usize].pending_reduces -= 1;
                self.start_reduce(j, node, container);
            }
            _ => {
                self.nodes[node as usize].maps += 1;
                let m = self.take_map(j, node, locality);
                self.start_map(j, m, node, container, locality);
                self.collector.map_placed(locality);
            }
        }
        self.fs_insert(j);
        self.mark_asks(j);
        self.ramp_reduces(j);
        if self.engine.is_some() {
            self.core_events.push(Event::ContainerAllocated {
                app: self.app_ids[j as usize].clone(),
                container: ContainerId(format!("c{container}")),
                node: self.node_ids[node as usize].clone(),
                priority: Priority(priority),
                locality,
                resources: self.node_resources(1),
                time_ms: self.now,
            });
        }
        if self.jobs[j as usize].allowed > locality && priority == PRIORITY_MAP {
            self.jobs[j as usize].allowed = locality;
        }
    }

    /// Adds the job's container-time since its running count last changed (call before
    /// changing it).
    pub(super) fn account_busy(&mut self, j: u32) {
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        job.busy_ms += job.running as u64 * now.saturating_sub(job.busy_since_ms);
        job.busy_since_ms = now;
    }

    /// Releases a container that ran at `priority` (an AM, a map or a reduce). `task_completed`
    /// is what the shim derives from the container's exit status: false for a container the AM
    /// gives back unused (ABORTED); true for one the AM stops (KILLED_BY_APPMASTER), whether
    /// its task succeeded or the AM killed it. The model has no RM preemption (PREEMPTED).
    pub(super) fn release(
        &mut self,
        j: u32,
        node: u32,
        container: u32,
        priority: i32,
        task_completed: bool,
    ) {
        self.last_progress_ms = self.now;
        let state = &mut self.nodes[node as usize];
        match priority {
            PRIORITY_MAP => state.maps -= 1,
            PRIORITY_REDUCE => state.reduces -= 1,
            _ => {}
        }
        self.fs_remove(j);
        let u = self.jobs[j as usize].user as usize;
        let job = &mut self.jobs[j as usize];
        if container == job.am_container && job.phase >= JobPhase::AmStarting {
            // The AM's container is released when its job ends (before the phase is Done).
            self.user_ams[u] -= 1;
        }
        self.user_running[u] -= 1;
        self.account_busy(j);
        self.jobs[j as usize].running -= 1;
        self.fs_insert(j);
        self.running_containers -= 1;
        self.nodes[node as usize].free += 1;
        if self.nodes[node as usize].free == 1 {
            self.count_full_node(false);
        }
        self.ramp_reduces(j);
        if self.engine.is_some() {
            self.core_events.push(Event::ContainerFinished {
                app: self.app_ids[j as usize].clone(),
                container: ContainerId(format!("c{container}")),
                time_ms: self.now,
                task_completed,
            });
        }
        self.wake(node);
    }
}

/// Whether the job's map key is where FairScheduler's walk of the job's keys stops on a node
/// none can use (a pending AM or reduce key ends the walk first), i.e. whether a full node's
/// heartbeat is a missed opportunity for its maps.
fn misses_full_node_offers(job: &Job) -> bool {
    !job.am_pending && job.pending_reduces == 0 && job.pending_maps > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimOptions;
    use crate::workload::{JobSpec, ShuffleClass};
    use crate::Cluster;

    /// One rack of ten single-container nodes; one job of one map with its split on one node.
    fn ten_nodes() -> Cluster {
        Cluster {
            racks: 1,
            nodes_per_rack: 10,
            containers_per_node: 1,
            replication: 1,
            ..Cluster::preset("sw100").unwrap()
        }
    }

    fn one_map_job() -> Vec<JobSpec> {
        vec![JobSpec {
            name: "j".into(),
            submit_ms: 0,
            user: 0,
            input_bytes: 64 << 20,
            shuffle_bytes: 0,
            output_bytes: 0,
            maps: 1,
            reduces: 0,
            class: ShuffleClass::of_shuffle_bytes(0),
            task_s: None,
        }]
    }

    /// The job arrived, its AM holds a container (its node is full) and asked for the map at
    /// `now_ms`; returns the simulator and a free node without the split.
    fn map_asked<'a>(cluster: &'a Cluster, specs: &'a [JobSpec], now_ms: u64) -> (Sim<'a>, u32) {
        // The AM's asks take effect at once (no allocate round-trip): these tests count the
        // scheduler's missed opportunities, not the AM's heartbeats.
        let options = SimOptions {
            delay_locality_threshold_node: 0.5,
            am: super::super::AmOptions {
                round_trip: false,
                ..Default::default()
            },
            ..SimOptions::default()
        };
        let mut sim = Sim::new(cluster, specs, Policy::Delay, &options).unwrap();
        sim.arrive(0);
        sim.offer(0);
        assert!(
            sim.jobs[0].phase == JobPhase::AmStarting,
            "the AM is placed"
        );
        sim.am_ready(0);
        sim.now = now_ms;
        let split = sim.jobs[0].maps[0].replicas[0];
        let other = (1..10).find(|&n| n != split).unwrap();
        (sim, other)
    }

    /// `locality.threshold.node` 0.5 of 10 nodes: the level relaxes past 5 missed
    /// opportunities, however little time passed. Five offers of a node without the split at
    /// one instant place nothing; the sixth places the map rack-local.
    #[test]
    fn delay_relaxes_after_threshold_times_nodes_missed_offers_not_after_a_time() {
        let (cluster, specs) = (ten_nodes(), one_map_job());
        let (mut sim, other) = map_asked(&cluster, &specs, 0);
        for offer in 1..=5 {
            sim.offer(other);
            assert_eq!(sim.jobs[0].pending_maps, 1, "offer {offer} placed the map");
        }
        sim.offer(other);
        assert_eq!(sim.jobs[0].pending_maps, 0, "the sixth offer places it");
        assert_eq!(sim.collector.finish(&specs).map_locality["rack_local"], 1.0);
    }

    /// Each offer that places nothing leaves its node's free containers idle for one heartbeat:
    /// five held offers of a one-container node are 5 container-seconds, and the offer that
    /// places adds none.
    #[test]
    fn offers_placing_nothing_count_their_free_containers_idle_for_a_heartbeat() {
        let (cluster, specs) = (ten_nodes(), one_map_job());
        let (mut sim, other) = map_asked(&cluster, &specs, 0);
        for _ in 0..6 {
            sim.offer(other);
        }
        let metrics = sim.collector.finish(&specs);
        assert_eq!(metrics.offers_placing_nothing, 5);
        assert_eq!(metrics.idle_container_s_placing_nothing, 5.0);
    }

    /// The AM's full node beats once a second without running as an event; each beat is a
    /// missed opportunity too. 3.5 s later one offer makes 4.5 missed (held); 5.5 s later it
    /// makes 6.5 (placed).
    #[test]
    fn a_full_nodes_heartbeats_count_as_missed_opportunities() {
        let (cluster, specs) = (ten_nodes(), one_map_job());
        let (mut sim, other) = map_asked(&cluster, &specs, 3_500);
        sim.offer(other);
        assert_eq!(sim.jobs[0].pending_maps, 1, "4.5 missed must hold the map");
        let (mut sim, other) = map_asked(&cluster, &specs, 5_500);
        sim.offer(other);
        assert_eq!(sim.jobs[0].pending_maps, 0, "6.5 missed must place the map");
    }
}
