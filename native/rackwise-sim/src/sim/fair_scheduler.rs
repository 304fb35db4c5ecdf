//! The ResourceManager's side of an offer: what FairScheduler (or FIFO) places on the offered
//! node, delay scheduling, and allocating and releasing containers.
//!
//! Queues are one per user, ordered by running containers; a queue's apps by running
//! containers, then age. The fair-share bookkeeping keeps both orders as sorted sets, taken out
//! and put back around every change of a job's running or pending counts. Under a core policy
//! the same loop runs with the core's plan, as the RM shim's scheduler does: a steered app
//! waits for its queue's head entry, which places at its priority under its locality cap.

use super::core_link::OfferPlan;
use super::event_loop::Ev;
use super::{Job, JobPhase, Policy, Sim, PRIORITY_AM, PRIORITY_MAP, PRIORITY_REDUCE};
use rackwise_core::mapreduce::{self, Placement};
use rackwise_core::protocol::{ContainerId, Event, Locality, Priority};

/// Delay scheduling waits (FairScheduler time-based locality delay), node then rack.
pub const NODE_LOCALITY_DELAY_MS: u64 = 5000;
pub const RACK_LOCALITY_DELAY_MS: u64 = 5000;

impl Sim<'_> {
    pub(super) fn fs_remove(&mut self, j: u32) {
        let job = &self.jobs[j as usize];
        let u = job.user as usize;
        if job.pending() > 0 {
            self.user_apps[u].remove(&(job.running, j));
            self.fifo.remove(&j);
        }
        if self.user_pending[u] > 0 {
            self.users_demand.remove(&(self.user_running[u], u as u32));
        }
        self.user_pending[u] -= job.pending();
        self.total_pending -= job.pending() as u64;
    }

    pub(super) fn fs_insert(&mut self, j: u32) {
        let job = &self.jobs[j as usize];
        let u = job.user as usize;
        let before = self.total_pending;
        if job.pending() > 0 {
            self.user_apps[u].insert((job.running, j));
            self.fifo.insert(j);
        }
        self.user_pending[u] += job.pending();
        self.total_pending += job.pending() as u64;
        if self.user_pending[u] > 0 {
            self.users_demand.insert((self.user_running[u], u as u32));
        }
        if self.total_pending > before {
            self.demand_appeared();
        }
    }

    pub(super) fn offer(&mut self, node: u32) {
        self.counters.offers += 1;
        self.offer_seq += 1;
        let containers_before = self.counters.containers;
        match self.policy {
            Policy::Fifo => self.offer_fifo(node),
            Policy::Fair => self.offer_fair(node, false, None),
            Policy::Delay => self.offer_fair(node, true, None),
            Policy::Core(_) => {
                let plan = self.ask_core(node);
                self.offer_fair(node, false, Some(plan));
            }
        }
        self.collector
            .offer_done(self.counters.containers - containers_before);
    }

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
    /// than its head entry's app are vetoed and the head places at its priority and cap.
    fn offer_fair(&mut self, node: u32, delay: bool, mut plan: Option<OfferPlan>) {
        let rack = self.nodes[node as usize].rack;
        // Snapshots of the queue and app orders, which placing changes; the buffers are kept
        // between offers.
        let mut users = std::mem::take(&mut self.fair_users);
        let mut apps = std::mem::take(&mut self.fair_apps);
        while self.nodes[node as usize].free > 0 && self.total_pending > 0 {
            users.clear();
            users.extend(self.users_demand.iter().map(|&(_, u)| u));
            let mut chosen: Option<(u32, i32, Locality, Option<usize>)> = None;
            'queues: for &u in &users {
                apps.clear();
                apps.extend(self.user_apps[u as usize].iter().map(|&(_, j)| j));
                let head = plan
                    .as_ref()
                    .and_then(|p| p.head(u, |e| self.satisfiable(e, node, rack)));
                for &j in &apps {
                    let steered =
                        plan.is_some() && self.jobs[j as usize].steered_stamp == self.offer_seq;
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
                            let allowed = if delay {
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
                Some((j, p, l, _)) => self.allocate(j, node, p, l),
            }
        }
        self.fair_users = users;
        self.fair_apps = apps;
    }

    /// FairScheduler's `getAllowedLocalityLevelByTime` for the map key of a job.
    fn delay_level(&mut self, j: u32) -> Locality {
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        let waited = now.saturating_sub(job.allowed_since);
        match job.allowed {
            Locality::NodeLocal if waited > NODE_LOCALITY_DELAY_MS => {
                job.allowed = Locality::RackLocal;
                job.allowed_since = now;
            }
            Locality::RackLocal if waited > RACK_LOCALITY_DELAY_MS => {
                job.allowed = Locality::OffSwitch;
            }
            _ => {}
        }
        job.allowed
    }

    /// What stock FairScheduler would place of job `j` on `node`: keys by priority (AM,
    /// reduce, map); asks without locations go off-switch at once, maps at the allowed level.
    fn stock_choice(&self, j: u32, node: u32, allowed: Locality) -> Option<(i32, Locality)> {
        let job = &self.jobs[j as usize];
        if job.am_pending {
            return Some((PRIORITY_AM, Locality::OffSwitch));
        }
        if job.pending_reduces > 0 {
            return Some((PRIORITY_REDUCE, Locality::OffSwitch));
        }
        if job.pending_maps > 0 {
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
        self.fs_remove(j);
        let u = self.jobs[j as usize].user as usize;
        self.user_running[u] += 1;
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
                let at = self.now + (self.cluster.am_startup_s * 1000.0) as u64;
                self.push(at, Ev::AmReady(j));
            }
            PRIORITY_REDUCE => {
                self.jobs[j as usize].pending_reduces -= 1;
                self.start_reduce(j, node, container);
            }
            _ => {
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
        if priority == PRIORITY_MAP {
            self.jobs[j as usize].allowed_since = self.now;
        }
    }

    pub(super) fn release(&mut self, j: u32, node: u32, container: u32) {
        self.fs_remove(j);
        let u = self.jobs[j as usize].user as usize;
        self.user_running[u] -= 1;
        self.jobs[j as usize].running -= 1;
        self.fs_insert(j);
        self.running_containers -= 1;
        self.nodes[node as usize].free += 1;
        self.ramp_reduces(j);
        if self.engine.is_some() {
            self.core_events.push(Event::ContainerFinished {
                app: self.app_ids[j as usize].clone(),
                container: ContainerId(format!("c{container}")),
                time_ms: self.now,
            });
        }
        self.wake(node);
    }
}
