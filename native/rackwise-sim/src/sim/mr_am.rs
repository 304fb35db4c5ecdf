//! The MapReduce ApplicationMaster and its tasks: a job's arrival, the AM's allocate heartbeat
//! (its asks reach the RM and granted containers reach it one round-trip late), its map asks
//! with their block locations, choosing which map runs in a granted container, the reduce
//! schedule on the RM's headroom (slow-start, ramp-up, ramp-down) and reducer preemption, and
//! each task's phases (streamed split read alongside compute, spill, shuffle fetch, merge,
//! output write) through to the job's end.
//!
//! The AM is modelled because its asks, counts per host and rack that shrink as maps are
//! placed, are what every scheduler places from, and its reduce schedule decides how many
//! containers a job's reduces hold while its maps wait: Hadoop's `RMContainerAllocator`
//! keeps that from deadlocking a full cluster by ramping reduces on the headroom and by
//! preempting them for maps that cannot run.

use super::core_link::Split;
use super::event_loop::Ev;
use super::hdfs::{read_source, InputWriters};
use super::sampling::SAMPLE_MS;
use super::speculator::SpeculatorOptions;
use super::transfers::{
    owner, OWN_MAP_READ, OWN_MAP_REPL, OWN_RED_LOCAL, OWN_RED_REMOTE, OWN_RED_REPL,
};
use super::{
    true_ratio_hint, JobPhase, MapTask, ReduceTask, Sim, PRIORITY_AM, PRIORITY_MAP, PRIORITY_REDUCE,
};
use crate::cluster::{Cluster, Device};
use crate::oracle::{job_bounds, JobShuffle, ReduceLaunch};
use crate::rng::Rng;
use rackwise_core::protocol::{Event, Locality};
use std::collections::BTreeMap;

/// MapReduce `mapreduce.job.reduce.slowstart.completedmaps` default.
pub const SLOWSTART: f64 = 0.05;
/// MapReduce `yarn.app.mapreduce.am.job.reduce.rampup.limit` default: while maps are pending,
/// reduces may take at most this fraction of the job's resource limit (its headroom plus its
/// running tasks), in proportion to the fraction of maps completed.
pub const REDUCE_RAMPUP_LIMIT: f64 = 0.5;
/// MapReduce `yarn.app.mapreduce.am.job.reduce.preemption.limit` default: one reducer
/// preemption kills up to this fraction of the job's resource limit in reduces.
pub const REDUCE_PREEMPTION_LIMIT: f64 = 0.5;
/// MapReduce `mapreduce.job.reducer.unconditional-preempt.delay.sec` default (300 s): a map
/// ask waiting this long has reduces preempted for it whatever the headroom says.
pub const REDUCER_UNCONDITIONAL_PREEMPT_DELAY_MS: u64 = 300_000;
/// MapReduce `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms` default: the AM's
/// allocate call to the ResourceManager.
pub const AM_HEARTBEAT_MS: u64 = 1000;

/// The MR AM's allocator settings (`RMContainerAllocator`, `RMContainerRequestor`).
#[derive(Debug, Clone, PartialEq)]
pub struct AmOptions {
    /// `yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`.
    pub heartbeat_ms: u64,
    /// The allocate round-trip: asks reach the RM on the AM's next heartbeat, and granted
    /// containers reach the AM (and are launched) on its next heartbeat. `false` keeps the
    /// simulator's earlier instant model: asks take effect and containers launch the moment
    /// they change, and the reduce schedule is recomputed on every allocation and release.
    pub round_trip: bool,
    /// `mapreduce.job.reduce.slowstart.completedmaps`.
    pub slowstart: f64,
    /// `yarn.app.mapreduce.am.job.reduce.rampup.limit`.
    pub rampup_limit: f64,
    /// `yarn.app.mapreduce.am.job.reduce.preemption.limit`.
    pub preemption_limit: f64,
    /// `mapreduce.job.reducer.preempt.delay.sec` (default 0), in ms: how long a map ask waits
    /// with no headroom before reduces are preempted for it. `None`: never (Hadoop has no
    /// such value; it is the switch that shows what the simulator did without preemption).
    pub reducer_preempt_delay_ms: Option<u64>,
    /// `mapreduce.job.reducer.unconditional-preempt.delay.sec` in ms; `None` is Hadoop's
    /// negative value, which disables it.
    pub reducer_unconditional_preempt_delay_ms: Option<u64>,
    /// `mapreduce.map.speculative` (on by default) and the speculator's settings; `None`
    /// switches speculative execution off.
    pub speculator: Option<SpeculatorOptions>,
}

impl Default for AmOptions {
    fn default() -> Self {
        AmOptions {
            heartbeat_ms: AM_HEARTBEAT_MS,
            round_trip: true,
            slowstart: SLOWSTART,
            rampup_limit: REDUCE_RAMPUP_LIMIT,
            preemption_limit: REDUCE_PREEMPTION_LIMIT,
            reducer_preempt_delay_ms: Some(0),
            reducer_unconditional_preempt_delay_ms: Some(REDUCER_UNCONDITIONAL_PREEMPT_DELAY_MS),
            speculator: Some(SpeculatorOptions::default()),
        }
    }
}

impl AmOptions {
    /// Refuses settings Hadoop would not run with, naming the setting, its value and why.
    pub fn validate(&self) -> Result<(), String> {
        if self.heartbeat_ms == 0 {
            return Err(
                "AM option heartbeat_ms: value 0 is not an interval; expected at least 1 ms".into(),
            );
        }
        for (name, value) in [
            ("slowstart", self.slowstart),
            ("rampup_limit", self.rampup_limit),
            ("preemption_limit", self.preemption_limit),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(format!(
                    "AM option {name}: value {value} is not a fraction; expected 0 to 1"
                ));
            }
        }
        match &self.speculator {
            Some(speculator) => speculator.validate(),
            None => Ok(()),
        }
    }
}

/// A container the RM granted that the AM receives on its next heartbeat.
#[derive(Clone, Copy)]
enum Grant {
    Map {
        m: u32,
        node: u32,
        container: u32,
        locality: Locality,
    },
    Reduce {
        node: u32,
        container: u32,
    },
}

/// The AM's side of a job's asks.
#[derive(Default)]
pub(super) struct AmState {
    /// The map asks were sent to the RM (on the AM's first heartbeat after registering).
    maps_asked: bool,
    /// When the AM created its map asks: a map ask's age decides reducer preemption.
    maps_requested_ms: u64,
    /// Reduce asks the AM holds in its ask table (`scheduledRequests.reduces`); the rest of
    /// the reduces not yet running wait in the AM (`pendingReduces`) for the ramp-up.
    reduces_scheduled: u32,
    granted: Vec<Grant>,
    heartbeat_scheduled: bool,
    heartbeat_phase_ms: u64,
}

impl Sim<'_> {
    /// Reduces neither running, done nor granted a container: asked or waiting in the AM.
    fn reduces_unstarted(&self, j: u32) -> u32 {
        let job = &self.jobs[j as usize];
        job.reduces_total - job.reduces_done - self.reduces_held(j)
    }

    fn reduces_running(&self, j: u32) -> u32 {
        let job = &self.jobs[j as usize];
        job.reduces.len() as u32 - job.reduces_done - job.reduces_killed
    }

    /// Containers job `j` holds for reduces: running, or granted and not yet received by its AM.
    pub(super) fn reduces_held(&self, j: u32) -> u32 {
        let granted = self.jobs[j as usize]
            .am
            .granted
            .iter()
            .filter(|g| matches!(g, Grant::Reduce { .. }))
            .count() as u32;
        self.reduces_running(j) + granted
    }

    /// Maps the AM still asks for: pending at the RM, or granted and not yet received.
    pub(super) fn maps_scheduled(&self, j: u32) -> u32 {
        let job = &self.jobs[j as usize];
        let granted = job
            .am
            .granted
            .iter()
            .filter(|g| matches!(g, Grant::Map { .. }))
            .count() as u32;
        job.pending_maps + granted
    }

    /// The headroom the RM returns on an allocate, in containers: FairScheduler's
    /// `FSAppAttempt.getHeadroom` under the fair-share policy, the queue's fair share less its
    /// usage, at most what the cluster has free. No user queue has a max share, so the fair
    /// share is the cluster divided among the active queues by weight.
    fn headroom(&self, j: u32) -> i64 {
        let total = self.nodes.len() as u64 * self.cluster.containers_per_node as u64;
        let free = total - self.running_containers;
        let user = self.jobs[j as usize].user;
        let fair_share = self.fair_share(user);
        let usage = self.user_running[user as usize] as f64;
        (fair_share - usage).max(0.0).min(free as f64).floor() as i64
    }

    /// The instant model's reduce schedule, recomputed on every allocation and release of the
    /// job (`AmOptions::round_trip = false`); with the round-trip it runs on the AM heartbeat.
    pub(super) fn ramp_reduces(&mut self, j: u32) {
        if self.am_options.round_trip || self.jobs[j as usize].phase != JobPhase::Running {
            return;
        }
        let headroom = self.headroom(j);
        self.schedule_reduces(j, headroom);
        self.send_reduce_asks(j);
    }

    /// `RMContainerAllocator.scheduleReduces`: after slow-start, the reduces' share of the
    /// job's resource limit (headroom plus running tasks) grows with the fraction of maps
    /// completed up to the ramp-up limit, and takes what the maps' share leaves unused; asks
    /// beyond it go back to waiting in the AM (ramp-down). Once no map is asked, every
    /// reduce is asked. Counts are containers: every task takes one.
    fn schedule_reduces(&mut self, j: u32, headroom: i64) {
        let unstarted = self.reduces_unstarted(j);
        let scheduled_maps = self.maps_scheduled(j) as i64;
        let assigned_reduces = self.reduces_running(j) as i64;
        let options = &self.am_options;
        let job = &mut self.jobs[j as usize];
        if job.reduces_total == 0 {
            return;
        }
        // Asks a preemption returned exceed what is left only transiently; never count them.
        job.am.reduces_scheduled = job.am.reduces_scheduled.min(unstarted);
        let waiting = unstarted - job.am.reduces_scheduled;
        if waiting == 0 {
            return;
        }
        if !job.reduces_requested {
            let needed = (options.slowstart * job.maps_total as f64).ceil() as u32;
            if job.maps_done < needed {
                return;
            }
            job.reduces_requested = true;
        }
        if scheduled_maps == 0 {
            job.am.reduces_scheduled = unstarted;
            return;
        }
        let completed = job.maps_done as f64 / job.maps_total as f64;
        let assigned_maps = job.maps_running as i64;
        let limit = headroom + assigned_maps + assigned_reduces;
        let ideal_reduces = (limit as f64 * completed.min(options.rampup_limit)) as i64;
        let ideal_maps = limit - ideal_reduces;
        let net_maps = scheduled_maps + assigned_maps;
        let net_reduces = job.am.reduces_scheduled as i64 + assigned_reduces;
        let reduce_limit = if ideal_maps >= net_maps {
            ideal_reduces + (ideal_maps - net_maps)
        } else {
            ideal_reduces
        };
        let ramp = reduce_limit - net_reduces;
        if ramp > 0 {
            job.am.reduces_scheduled += (ramp as u32).min(waiting);
        } else {
            job.am.reduces_scheduled -= ((-ramp) as u32).min(job.am.reduces_scheduled);
        }
    }

    /// The AM's reduce asks reach the RM's ask table.
    fn send_reduce_asks(&mut self, j: u32) {
        let asked = self.jobs[j as usize].am.reduces_scheduled;
        if asked == self.jobs[j as usize].pending_reduces {
            return;
        }
        self.fs_remove(j);
        self.jobs[j as usize].pending_reduces = asked;
        self.fs_insert(j);
        self.mark_asks(j);
    }

    /// `RMContainerAllocator.preemptReducesIfNeeded`: with maps asked and none running, the
    /// AM kills reduces when a map ask has waited past the unconditional delay, or when the
    /// headroom (less the reduces it asks for) holds no map and a map ask has waited past
    /// `reducer.preempt.delay`. Returns whether it preempted (the reduce schedule then waits
    /// for the next heartbeat).
    fn preempt_reduces_if_needed(&mut self, j: u32, headroom: i64) -> bool {
        let job = &self.jobs[j as usize];
        if job.reduces_total == 0 || job.maps_running > 0 || self.maps_scheduled(j) == 0 {
            return false;
        }
        let waited = self.now - job.am.maps_requested_ms;
        let hanging = |delay: Option<u64>| match delay {
            // Hadoop counts every ask as hanging for a delay of zero.
            Some(d) if d == 0 || waited > d => self.maps_scheduled(j),
            _ => 0,
        };
        let unconditional = hanging(self.am_options.reducer_unconditional_preempt_delay_ms);
        if unconditional > 0 {
            self.preempt_reducers(j, headroom, unconditional);
            return true;
        }
        if headroom - job.am.reduces_scheduled as i64 >= 1 {
            return false;
        }
        let no_headroom = hanging(self.am_options.reducer_preempt_delay_ms);
        if no_headroom > 0 {
            self.preempt_reducers(j, headroom, no_headroom);
            return true;
        }
        false
    }

    /// `RMContainerAllocator.preemptReducer`: withdraw every reduce ask, and kill the running
    /// reduces with the least progress, at least one, up to the preemption limit of the job's
    /// resource limit and at most one per hanging map.
    fn preempt_reducers(&mut self, j: u32, headroom: i64, hanging: u32) {
        self.jobs[j as usize].am.reduces_scheduled = 0;
        let limit =
            headroom + self.jobs[j as usize].maps_running as i64 + self.reduces_running(j) as i64;
        let by_limit = (limit as f64 * self.am_options.preemption_limit) as i64;
        let to_preempt = by_limit.max(1).min(hanging as i64) as usize;
        let job = &self.jobs[j as usize];
        let mut victims: Vec<(f64, u32)> = (0..job.reduces.len() as u32)
            .filter(|&r| !job.reduces[r as usize].ended)
            .map(|r| (self.reduce_progress(j, r), r))
            .collect();
        victims.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for &(_, r) in victims.iter().take(to_preempt) {
            self.kill_reduce(j, r);
        }
    }

    /// A reduce attempt's progress as MapReduce reports it: the shuffle is its first third,
    /// by the fraction of its input fetched; the merge and reduce the second; the output
    /// write the last.
    fn reduce_progress(&self, j: u32, r: u32) -> f64 {
        let job = &self.jobs[j as usize];
        let task = &job.reduces[r as usize];
        if task.output_flow.is_some() {
            return 2.0 / 3.0;
        }
        if !task.shuffling {
            return 1.0 / 3.0;
        }
        let pending: f64 = [task.local_flow, task.remote_flow]
            .into_iter()
            .flatten()
            .map(|f| self.net.remaining(f))
            .sum();
        let fetched = (task.received - pending).max(0.0);
        fetched / job.shuffle_per_reduce.max(1.0) / 3.0
    }

    /// Kills a reduce attempt for a map: its transfers stop, its container goes back to the
    /// RM at once, and the reduce waits in the AM to run again from the start of its shuffle.
    fn kill_reduce(&mut self, j: u32, r: u32) {
        let task = &mut self.jobs[j as usize].reduces[r as usize];
        task.ended = true;
        task.shuffling = false;
        let (node, container) = (task.node, task.container);
        let flows = [
            task.local_flow.take(),
            task.remote_flow.take(),
            task.output_flow.take(),
        ];
        let received = task.received;
        let mut unfetched = 0.0;
        for (i, f) in flows.into_iter().enumerate() {
            let Some(f) = f else { continue };
            let left = self.cancel_flow(f);
            // The first two are the shuffle fetches; the third writes the output.
            if i < 2 {
                unfetched += left;
            }
        }
        let fetched = (received - unfetched).max(0.0);
        self.counters.shuffle_fetched -= fetched;
        self.counters.shuffle_refetched += fetched;
        self.counters.reduces_preempted += 1;
        self.jobs[j as usize].reduces_killed += 1;
        // The AM stops the container itself, so the RM sees KILLED_BY_APPMASTER, the status of
        // a task that succeeded too: the shim reports it as completed (the core learns a short
        // reduce, and the rerun's ask makes room for it in the job's reduce count).
        self.release(j, node, container, PRIORITY_REDUCE, true);
        self.am_wake(j);
    }

    /// The AM's allocate call (`RMContainerAllocator.heartbeat`): its asks reach the RM, the
    /// containers granted since the last call reach it and are launched, and with the
    /// headroom of the response it preempts reduces or, if it did not, re-plans them.
    pub(super) fn am_heartbeat(&mut self, j: u32) {
        self.jobs[j as usize].am.heartbeat_scheduled = false;
        if self.jobs[j as usize].phase == JobPhase::Done {
            return;
        }
        if self.am_options.round_trip {
            if !self.jobs[j as usize].am.maps_asked {
                self.ask_maps(j);
            }
            self.send_reduce_asks(j);
            for grant in std::mem::take(&mut self.jobs[j as usize].am.granted) {
                match grant {
                    Grant::Map {
                        m,
                        node,
                        container,
                        locality,
                    } => self.launch_map(j, m, node, container, locality),
                    Grant::Reduce { node, container } => self.launch_reduce(j, node, container),
                }
                if self.jobs[j as usize].phase == JobPhase::Done {
                    return;
                }
            }
        }
        let headroom = self.headroom(j);
        if !self.preempt_reduces_if_needed(j, headroom) {
            self.schedule_reduces(j, headroom);
        }
        if !self.am_options.round_trip {
            self.send_reduce_asks(j);
        }
        self.am_wake(j);
    }

    /// Schedules the AM's next heartbeat while it can change anything: maps or reduces not
    /// yet running, asks the RM has not seen, or granted containers the AM has not received.
    pub(super) fn am_wake(&mut self, j: u32) {
        let job = &self.jobs[j as usize];
        if job.am.heartbeat_scheduled
            || job.phase < JobPhase::AmStarting
            || job.phase == JobPhase::Done
        {
            return;
        }
        let needed = !job.am.maps_asked
            || !job.am.granted.is_empty()
            || job.pending_maps > 0
            || job.pending_reduces != job.am.reduces_scheduled
            || self.reduces_unstarted(j) > job.am.reduces_scheduled;
        if !needed {
            return;
        }
        let hb = self.am_options.heartbeat_ms;
        let phase = self.jobs[j as usize].am.heartbeat_phase_ms;
        let at = (self.now.saturating_sub(phase) / hb + 1) * hb + phase;
        self.jobs[j as usize].am.heartbeat_scheduled = true;
        self.push(at, Ev::AmHeartbeat(j));
    }

    /// The MR AM's choice of which map runs in a container: one with data on the node, else on
    /// the rack, else any (`RMContainerAllocator.assignMapsWithLocality`).
    pub(super) fn take_map(&mut self, j: u32, node: u32, locality: Locality) -> u32 {
        let rack = self.nodes[node as usize].rack;
        let job = &mut self.jobs[j as usize];
        let pick = |list: Option<&mut Vec<u32>>, maps: &Vec<MapTask>| -> Option<u32> {
            let list = list?;
            while let Some(m) = list.pop() {
                if !maps[m as usize].assigned {
                    return Some(m);
                }
            }
            None
        };
        let mut m = pick(job.by_host.get_mut(&node), &job.maps);
        if m.is_none() && locality >= Locality::RackLocal {
            m = pick(job.by_rack.get_mut(&rack), &job.maps);
        }
        if m.is_none() {
            m = pick(Some(&mut job.any), &job.maps);
        }
        let m = m.expect("a pending map exists when a map container is placed");
        self.claim_map(j, m);
        m
    }

    /// Takes map attempt `m` out of the job's ask: it got a container, or its task finished
    /// before it got one.
    pub(super) fn claim_map(&mut self, j: u32, m: u32) {
        let replicas = self.jobs[j as usize].maps[m as usize].replicas;
        let (racks, rack_len) = self.split_racks(&replicas);
        let copies = self.cluster.replication as usize;
        let job = &mut self.jobs[j as usize];
        job.maps[m as usize].assigned = true;
        let tracked = job.core_holds_map_row;
        let mut hosts = Split::new(&mut job.ask_hosts, &mut job.hosts_moved, tracked);
        for &replica in replicas.iter().take(copies) {
            if let Some(c) = job.host_count.get_mut(&replica) {
                *c -= 1;
                hosts.take(&self.hosts[replica as usize]);
            }
        }
        let mut ask_racks = Split::new(&mut job.ask_racks, &mut job.racks_moved, tracked);
        for &r in &racks[..rack_len] {
            if let Some(c) = job.rack_count.get_mut(&r) {
                *c -= 1;
                ask_racks.take(&self.rack_names[r as usize]);
            }
        }
        job.pending_maps -= 1;
    }

    pub(super) fn arrive(&mut self, j: u32) {
        let spec = &self.specs[j as usize];
        if self.engine.is_some() {
            self.core_events.push(Event::AppAdded {
                app: self.app_ids[j as usize].clone(),
                name: spec.name.clone(),
                user: format!("u{}", spec.user),
                queue: self.queues[spec.user].clone(),
                app_type: "MAPREDUCE".to_string(),
                tags: if self.oracle_ratio_hints {
                    true_ratio_hint(spec).into_iter().collect()
                } else {
                    Vec::new()
                },
                submit_ms: spec.submit_ms,
            });
        }
        let user = spec.user;
        self.user_active_apps[user] += 1;
        if self.user_active_apps[user] == 1 {
            self.active_queues += 1;
        }
        self.fs_remove(j);
        let job = &mut self.jobs[j as usize];
        job.phase = JobPhase::AwaitAm;
        job.am_pending = true;
        self.fs_insert(j);
        self.mark_asks(j);
        if self.jobs_done == 0 && self.collector.first_submit_ms.is_none() {
            self.collector.first_submit_ms = Some(self.now);
            let at = (self.now / SAMPLE_MS + 1) * SAMPLE_MS;
            self.push(at, Ev::Sample);
        }
    }

    /// The AM registered: its map asks exist from now (their age counts for reducer
    /// preemption) and go to the RM on its first heartbeat, one interval later.
    pub(super) fn am_ready(&mut self, j: u32) {
        let hb = self.am_options.heartbeat_ms;
        let am = &mut self.jobs[j as usize].am;
        am.heartbeat_phase_ms = self.now % hb;
        am.maps_requested_ms = self.now;
        if !self.am_options.round_trip {
            self.ask_maps(j);
        }
        self.am_wake(j);
        self.start_speculator(j);
    }

    /// The AM's map asks reach the RM: the input blocks' replicas are placed as HDFS did when
    /// the input was written, and every map is asked with its block locations.
    fn ask_maps(&mut self, j: u32) {
        let n = self.nodes.len();
        let racks = self.cluster.racks;
        let per_rack = self.cluster.nodes_per_rack;
        let maps_total = self.jobs[j as usize].maps_total;
        let writers = InputWriters::draw(&mut self.rng, self.input_racks, racks);
        let maps = (0..maps_total)
            .map(|_| MapTask::new(writers.block(&mut self.rng, n, racks, per_rack)))
            .collect();
        self.fs_remove(j);
        let job = &mut self.jobs[j as usize];
        job.phase = JobPhase::Running;
        job.am.maps_asked = true;
        job.maps = maps;
        job.output_by_rack = vec![0.0; racks];
        job.allowed = Locality::NodeLocal;
        for m in 0..maps_total {
            self.ask_for_map(j, m);
        }
        let job = &mut self.jobs[j as usize];
        // Popped from the end: reverse so that maps start in index order.
        for list in job.by_host.values_mut().chain(job.by_rack.values_mut()) {
            list.reverse();
        }
        job.any.reverse();
        self.fs_insert(j);
        self.mark_asks(j);
        self.mark_stats(j);
    }

    /// Map attempt `m` joins the job's ask with its split's locations: on each replica's host
    /// and rack (a rack once however many replicas it holds) and anywhere.
    pub(super) fn ask_for_map(&mut self, j: u32, m: u32) {
        let replicas = self.jobs[j as usize].maps[m as usize].replicas;
        let (racks, rack_len) = self.split_racks(&replicas);
        let copies = self.cluster.replication as usize;
        let job = &mut self.jobs[j as usize];
        let tracked = job.core_holds_map_row;
        let mut hosts = Split::new(&mut job.ask_hosts, &mut job.hosts_moved, tracked);
        for &replica in replicas.iter().take(copies) {
            job.by_host.entry(replica).or_default().push(m);
            *job.host_count.entry(replica).or_insert(0) += 1;
            hosts.give(&self.hosts[replica as usize]);
        }
        let mut ask_racks = Split::new(&mut job.ask_racks, &mut job.racks_moved, tracked);
        for &r in &racks[..rack_len] {
            job.by_rack.entry(r).or_default().push(m);
            *job.rack_count.entry(r).or_insert(0) += 1;
            ask_racks.give(&self.rack_names[r as usize]);
        }
        job.any.push(m);
        job.pending_maps += 1;
    }

    /// The RM granted a map container: the AM launches it at once in the instant model, else
    /// when its next heartbeat receives it.
    pub(super) fn start_map(
        &mut self,
        j: u32,
        m: u32,
        node: u32,
        container: u32,
        locality: Locality,
    ) {
        if !self.am_options.round_trip {
            self.launch_map(j, m, node, container, locality);
            return;
        }
        self.jobs[j as usize].am.granted.push(Grant::Map {
            m,
            node,
            container,
            locality,
        });
        self.am_wake(j);
    }

    /// A map starts in its container. Its record reader streams the split while the map
    /// function consumes it: the launch overhead and the compute over the input run from the
    /// start, and a non-local split's read runs alongside as a flow; the spill (or a map-only
    /// job's output write) follows once both are through (`input_consumed`).
    fn launch_map(&mut self, j: u32, m: u32, node: u32, container: u32, locality: Locality) {
        if self.map_task_done(j, m) {
            // Its twin finished the task while this container was on its way: the AM gives
            // it back unused.
            self.jobs[j as usize].maps[m as usize].finished = true;
            self.release(j, node, container, PRIORITY_MAP, false);
            return;
        }
        let c = self.cluster;
        let speed = self.nodes[node as usize].speed;
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        job.maps_running += 1;
        job.maps_running_at_launch.push(job.maps_running);
        let task = &mut job.maps[m as usize];
        task.node = node;
        task.container = container;
        task.launched_ms = Some(now);
        let input = job.input_per_map;
        let remote =
            locality != Locality::NodeLocal && input > 0.0 && !self.placement_oracle.local_reads;
        task.inputs_left = 1 + remote as u8;
        let work_ms = match job.task_s {
            Some(profile) => profiled_ms(profile.map_s, profile.spread, &mut self.rng),
            None => {
                c.task_overhead_s * 1000.0
                    + input / Cluster::mib_per_s_to_bytes_per_ms(c.map_mib_per_s)
            }
        };
        // Reading the split and the map function run on the node's disk and CPU.
        let end = c.device_work_end_ms(node as usize, Device::Disk, now as f64, work_ms / speed);
        let spill_ms = self.spill_ms(j, node) as u64;
        self.jobs[j as usize].maps[m as usize].planned_ms = end - now + spill_ms;
        self.push(end, Ev::MapCpuDone(j, m));
        if !remote {
            return;
        }
        let rack = self.nodes[node as usize].rack;
        let replicas = self.jobs[j as usize].maps[m as usize].replicas;
        let copies = self.cluster.replication as usize;
        let nodes = &self.nodes;
        let source = read_source(
            &replicas[..copies],
            |r| nodes[r as usize].rack,
            rack,
            &mut self.read_rng,
        );
        let src_rack = self.nodes[source as usize].rack;
        let mut links = vec![(self.link_out(source), 1.0), (self.link_in(node), 1.0)];
        if src_rack != rack {
            links.push((self.link_up(src_rack), 1.0));
            links.push((self.link_down(rack), 1.0));
        }
        let flow = self.add_flow(input, &links, owner(OWN_MAP_READ, j, m));
        self.jobs[j as usize].maps[m as usize].flow = flow;
    }

    /// A map's spill (or a map-only job's output write) on `node`, undisturbed, in ms.
    fn spill_ms(&self, j: u32, node: u32) -> f64 {
        let c = self.cluster;
        let job = &self.jobs[j as usize];
        (job.shuffle_per_map / Cluster::mib_per_s_to_bytes_per_ms(c.spill_mib_per_s)
            + job.output_per_map / Cluster::mib_per_s_to_bytes_per_ms(c.write_mib_per_s))
            / self.nodes[node as usize].speed
    }

    /// The map's compute over its input, or its split's read, is through; when both are, it
    /// spills its output (or, for a map-only job, writes its output's first replica).
    pub(super) fn input_consumed(&mut self, j: u32, m: u32) {
        let job = &mut self.jobs[j as usize];
        let task = &mut job.maps[m as usize];
        task.inputs_left -= 1;
        if task.inputs_left > 0 {
            return;
        }
        let node = task.node;
        let end = self.cluster.device_work_end_ms(
            node as usize,
            Device::Disk,
            self.now as f64,
            self.spill_ms(j, node),
        );
        self.push(end, Ev::MapCpuDone(j, m));
    }

    /// A map's CPU step ended: its compute over the input, or its spill.
    pub(super) fn map_cpu_done(&mut self, j: u32, m: u32) {
        // Killed for its twin (the job may even be over, its maps freed).
        if self.jobs[j as usize]
            .maps
            .get(m as usize)
            .is_none_or(|task| task.finished)
        {
            return;
        }
        if self.jobs[j as usize].maps[m as usize].inputs_left > 0 {
            self.input_consumed(j, m);
            return;
        }
        let output = self.jobs[j as usize].output_per_map;
        if output > 0.0 && self.cluster.replication > 1 {
            let node = self.jobs[j as usize].maps[m as usize].node;
            let links = self.replication_links(node);
            let flow = self.add_flow(output, &links, owner(OWN_MAP_REPL, j, m));
            self.jobs[j as usize].maps[m as usize].flow = flow;
        } else {
            self.map_done(j, m);
        }
    }

    pub(super) fn map_done(&mut self, j: u32, m: u32) {
        let (node, container) = {
            let task = &mut self.jobs[j as usize].maps[m as usize];
            task.finished = true;
            task.won = true;
            (task.node, task.container)
        };
        self.map_attempt_won(j, m);
        self.release(j, node, container, PRIORITY_MAP, true);
        let rack = self.nodes[node as usize].rack;
        let job = &mut self.jobs[j as usize];
        job.maps_done += 1;
        job.maps_running -= 1;
        let produced = job.shuffle_per_map;
        if job.reduces_total > 0 {
            job.output_by_rack[rack as usize] += produced;
            self.counters.shuffle_produced += produced;
            let per_reduce = produced / job.reduces_total as f64;
            let running: Vec<u32> = (0..job.reduces.len() as u32)
                .filter(|&r| job.reduces[r as usize].shuffling)
                .collect();
            for r in running {
                self.reduce_receive(j, r, rack, per_reduce);
            }
        }
        self.mark_stats(j);
        let job = &self.jobs[j as usize];
        let (done, total) = (job.maps_done, job.maps_total);
        // Slow-start may be met now.
        self.ramp_reduces(j);
        if done == total {
            let job = &self.jobs[j as usize];
            if job.reduces_total == 0 {
                self.job_done(j);
            } else {
                self.record_preferred_output(j);
                let job = &self.jobs[j as usize];
                let shuffling: Vec<u32> = (0..job.reduces.len() as u32)
                    .filter(|&r| job.reduces[r as usize].shuffling)
                    .collect();
                for r in shuffling {
                    self.maybe_end_shuffle(j, r);
                }
            }
        }
    }

    /// The RM granted a reduce container; the AM's ask table has one reduce fewer. The AM
    /// launches it at once in the instant model, else when its next heartbeat receives it.
    pub(super) fn start_reduce(&mut self, j: u32, node: u32, container: u32) {
        let am = &mut self.jobs[j as usize].am;
        am.reduces_scheduled = am.reduces_scheduled.saturating_sub(1);
        if !self.am_options.round_trip {
            self.launch_reduce(j, node, container);
            return;
        }
        am.granted.push(Grant::Reduce { node, container });
        self.am_wake(j);
    }

    fn launch_reduce(&mut self, j: u32, node: u32, container: u32) {
        let rack = self.nodes[node as usize].rack;
        let launch = ReduceLaunch {
            time_ms: self.now,
            rack,
            free_by_rack: self.free_by_rack_with(node),
        };
        let job = &mut self.jobs[j as usize];
        let r = job.reduces.len() as u32;
        job.reduces.push(ReduceTask {
            node,
            rack,
            container,
            local_flow: None,
            remote_flow: None,
            links_stale: false,
            shuffling: true,
            output_flow: None,
            received: 0.0,
            ended: false,
            launch,
        });
        let reduces = job.reduces_total as f64;
        let available: Vec<(u32, f64)> = job
            .output_by_rack
            .iter()
            .enumerate()
            .filter(|(_, b)| **b > 0.0)
            .map(|(src, b)| (src as u32, *b / reduces))
            .collect();
        for (src, bytes) in available {
            self.reduce_receive(j, r, src, bytes);
        }
        self.maybe_end_shuffle(j, r);
    }

    /// A finished map's partition for reduce `r` became fetchable from rack `src`.
    fn reduce_receive(&mut self, j: u32, r: u32, src: u32, bytes: f64) {
        if bytes <= 0.0 {
            return;
        }
        let task = &mut self.jobs[j as usize].reduces[r as usize];
        task.received += bytes;
        let (node, rack) = (task.node, task.rack);
        // The placement oracle moves its share of a cross-rack partition onto the rack-local
        // path; with no oracle (share 0) a partition is all one or all the other.
        let local = if src == rack {
            bytes
        } else {
            bytes * self.placement_oracle.local_shuffle_share
        };
        if local > 0.0 {
            self.fetch_in_rack(j, r, node, local);
        }
        let remote = bytes - local;
        if remote > 0.0 {
            self.fetch_across_racks(j, r, node, rack, src, remote);
        }
    }

    /// Adds bytes to the reduce's fetch from its own rack: its NIC alone.
    fn fetch_in_rack(&mut self, j: u32, r: u32, node: u32, bytes: f64) {
        match self.jobs[j as usize].reduces[r as usize].local_flow {
            Some(f) => self.net.extend(f, bytes),
            None => {
                let links = [(self.link_in(node), 1.0)];
                let f = self.add_flow(bytes, &links, owner(OWN_RED_LOCAL, j, r));
                self.jobs[j as usize].reduces[r as usize].local_flow = f;
            }
        }
    }

    /// Adds bytes from rack `src` to the reduce's cross-rack fetch.
    fn fetch_across_racks(&mut self, j: u32, r: u32, node: u32, rack: u32, src: u32, bytes: f64) {
        let task = &mut self.jobs[j as usize].reduces[r as usize];
        match task.remote_flow {
            Some(f) => {
                self.remote_bytes[f * self.cluster.racks + src as usize] += bytes;
                // The composition changed; the new link shares are set at the next solve.
                if !task.links_stale {
                    task.links_stale = true;
                    self.stale_links.push((j, r));
                }
                self.net.extend(f, bytes);
            }
            None => {
                // A new fetch's composition: this rack alone.
                let mut composition = vec![0.0; self.cluster.racks];
                composition[src as usize] += bytes;
                let links = self.remote_links(node, rack, &composition);
                let f = self.add_flow(bytes, &links, owner(OWN_RED_REMOTE, j, r));
                self.jobs[j as usize].reduces[r as usize].remote_flow = f;
                if let Some(f) = f {
                    let racks = self.cluster.racks;
                    if self.remote_bytes.len() < (f + 1) * racks {
                        self.remote_bytes.resize((f + 1) * racks, 0.0);
                    }
                    self.remote_bytes[f * racks..(f + 1) * racks].copy_from_slice(&composition);
                }
            }
        }
    }

    pub(super) fn maybe_end_shuffle(&mut self, j: u32, r: u32) {
        let job = &self.jobs[j as usize];
        let task = &job.reduces[r as usize];
        if !task.shuffling
            || job.maps_done < job.maps_total
            || task.local_flow.is_some()
            || task.remote_flow.is_some()
        {
            return;
        }
        let node = task.node;
        self.jobs[j as usize].reduces[r as usize].shuffling = false;
        let c = self.cluster;
        let job = &self.jobs[j as usize];
        // The merge and reduce function are CPU work (the thesis measured reduces as CPU and
        // network bound); writing the output's first replica is disk work.
        let (cpu_ms, disk_ms) = match job.task_s {
            Some(profile) => (
                profiled_ms(profile.reduce_s, profile.spread, &mut self.rng),
                0.0,
            ),
            None => (
                c.task_overhead_s * 1000.0
                    + job.shuffle_per_reduce
                        / Cluster::mib_per_s_to_bytes_per_ms(c.merge_mib_per_s),
                job.output_per_reduce / Cluster::mib_per_s_to_bytes_per_ms(c.write_mib_per_s),
            ),
        };
        let speed = self.nodes[node as usize].speed;
        let written_from = self.now as f64 + cpu_ms / speed;
        let end = c.device_work_end_ms(node as usize, Device::Disk, written_from, disk_ms / speed);
        self.push(end, Ev::ReduceCpuDone(j, r));
    }

    pub(super) fn reduce_cpu_done(&mut self, j: u32, r: u32) {
        if self.jobs[j as usize].reduces[r as usize].ended {
            return; // killed by reducer preemption
        }
        let output = self.jobs[j as usize].output_per_reduce;
        if output > 0.0 && self.cluster.replication > 1 {
            let node = self.jobs[j as usize].reduces[r as usize].node;
            let links = self.replication_links(node);
            let flow = self.add_flow(output, &links, owner(OWN_RED_REPL, j, r));
            self.jobs[j as usize].reduces[r as usize].output_flow = flow;
        } else {
            self.reduce_done(j, r);
        }
    }

    pub(super) fn reduce_done(&mut self, j: u32, r: u32) {
        let task = &mut self.jobs[j as usize].reduces[r as usize];
        task.ended = true;
        let (node, container) = (task.node, task.container);
        let job = &mut self.jobs[j as usize];
        job.reduces_done += 1;
        let launch = job.reduces[r as usize].launch.clone();
        job.finished_reduces.push(launch);
        self.release(j, node, container, PRIORITY_REDUCE, true);
        let job = &self.jobs[j as usize];
        if job.reduces_done == job.reduces_total && job.maps_done == job.maps_total {
            self.job_done(j);
        }
    }

    /// Free containers per rack now, counting the one held on `own_node` as free: the racks a
    /// reduce launched there could have had instead.
    fn free_by_rack_with(&self, own_node: u32) -> Vec<u32> {
        let mut free = vec![0u32; self.cluster.racks];
        for node in &self.nodes {
            free[node.rack as usize] += node.free;
        }
        free[self.nodes[own_node as usize].rack as usize] += 1;
        free
    }

    /// The most of job `j`'s splits with a replica on any one rack (a split counted once per
    /// rack however many of its replicas the rack holds).
    fn most_splits_on_one_rack(&self, j: u32) -> u32 {
        let job = &self.jobs[j as usize];
        let mut splits = vec![0u32; self.cluster.racks];
        for map in &job.maps[..job.maps_total as usize] {
            let (racks, len) = self.split_racks(&map.replicas);
            for &rack in &racks[..len] {
                splits[rack as usize] += 1;
            }
        }
        splits.into_iter().max().unwrap_or(0)
    }

    /// The racks of a split's replicas, each once however many of them it holds, in the
    /// replicas' order: the first `len` of the array.
    fn split_racks(&self, replicas: &[u32; 3]) -> ([u32; 3], usize) {
        let mut racks = [u32::MAX; 3];
        let mut len = 0;
        for &node in replicas.iter().take(self.cluster.replication as usize) {
            let rack = self.nodes[node as usize].rack;
            if !racks[..len].contains(&rack) {
                racks[len] = rack;
                len += 1;
            }
        }
        (racks, len)
    }

    fn record_cross_rack_bounds(&mut self, j: u32) {
        let job = &self.jobs[j as usize];
        if job.reduces_total == 0 {
            return;
        }
        let bounds = job_bounds(&JobShuffle {
            output_by_rack: &job.output_by_rack,
            reduces: &job.finished_reduces,
            maps_running_at_launch: &job.maps_running_at_launch,
            rack_containers: self.cluster.nodes_per_rack as u32 * self.cluster.containers_per_node,
            most_splits_on_one_rack: (job.input_per_map > 0.0)
                .then(|| (self.most_splits_on_one_rack(j), job.maps_total)),
            input: job.input_per_map * f64::from(job.maps_total),
        });
        self.collector.cross_rack_bounds(&bounds);
    }

    fn job_done(&mut self, j: u32) {
        let (node, container) = (
            self.jobs[j as usize].am_node,
            self.jobs[j as usize].am_container,
        );
        self.release(j, node, container, PRIORITY_AM, true);
        self.record_cross_rack_bounds(j);
        let user = self.jobs[j as usize].user as usize;
        self.user_active_apps[user] -= 1;
        if self.user_active_apps[user] == 0 {
            self.active_queues -= 1;
        }
        let job = &mut self.jobs[j as usize];
        job.phase = JobPhase::Done;
        // Free the per-map structures of a finished job; big traces hold millions of maps.
        job.maps = Vec::new();
        job.by_host = BTreeMap::new();
        job.by_rack = BTreeMap::new();
        job.any = Vec::new();
        job.host_count = BTreeMap::new();
        job.rack_count = BTreeMap::new();
        job.ask_hosts = BTreeMap::new();
        job.ask_racks = BTreeMap::new();
        job.hosts_moved = Vec::new();
        job.racks_moved = Vec::new();
        job.reduces = Vec::new();
        job.maps_running_at_launch = Vec::new();
        job.finished_reduces = Vec::new();
        self.jobs_done += 1;
        self.collector
            .job_done(j as usize, self.now, self.jobs[j as usize].busy_ms);
        if self.engine.is_some() {
            self.core_events.push(Event::AppRemoved {
                app: self.app_ids[j as usize].clone(),
            });
        }
    }
}

/// One profiled task's time: its mean × a uniform factor in `[1 − spread, 1 + spread]` (no
/// draw without spread, so an exact batch consumes nothing of the run's random stream).
fn profiled_ms(mean_s: f64, spread: f64, rng: &mut Rng) -> f64 {
    let factor = if spread > 0.0 {
        1.0 + spread * (2.0 * rng.unit() - 1.0)
    } else {
        1.0
    };
    mean_s * 1000.0 * factor
}
