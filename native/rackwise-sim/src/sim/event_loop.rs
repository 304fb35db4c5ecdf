//! The event loop: one heap of timed events, and the NodeManager heartbeats that turn a node's
//! free containers into offers.
//!
//! Events are ordered by (time, sequence), so equal times resolve in insertion order and a run
//! is a pure function of its inputs and seed. A node is offered only at its heartbeat ticks and
//! only while it has a free container and the cluster has pending demand; a node with nothing
//! to do is parked until demand appears, so no idle heartbeat costs an event.
//!
//! A progress watchdog ends a run that, with work pending, neither allocates a container nor
//! completes a task for `watchdog_ms` of simulated time (or runs out of events): its error
//! names the state (containers held by kind, pending asks by kind, jobs by phase).

use super::{JobPhase, PolicyMetrics, RunCounters, Sim};
use crate::metrics::Collector;
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Ev {
    Arrive(u32),
    AmReady(u32),
    AmHeartbeat(u32),
    MapCpuDone(u32, u32),
    ReduceCpuDone(u32, u32),
    FlowDone(u32, u64),
    NetTick,
    Sample,
    Speculate(u32),
    /// An interference window starts or ends.
    Interference,
    Heartbeat(u32),
}

/// An event in the heap, keyed by (time, sequence) packed into one integer: the time in the
/// high half, so the packed order is the pair's order. The heap is popped once per event (tens
/// of millions per simulated day), and comparing one `u128` is cheaper than comparing the
/// pair field by field. Sequences are unique, so the event itself never decides the order.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scheduled {
    key: u128,
    ev: Ev,
}

impl Scheduled {
    fn new(at: u64, seq: u64, ev: Ev) -> Scheduled {
        Scheduled {
            key: (u128::from(at) << 64) | u128::from(seq),
            ev,
        }
    }

    fn at(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

/// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest event first.
impl Ord for Scheduled {
    fn cmp(&self, other: &Scheduled) -> Ordering {
        other.key.cmp(&self.key)
    }
}

impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Scheduled) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Scheduled) -> bool {
        self.key == other.key
    }
}

impl Eq for Scheduled {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hb {
    None,
    Scheduled,
    Idle,
}

impl Sim<'_> {
    pub(super) fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Scheduled::new(at, self.seq, ev));
    }

    /// Runs to the end; `progress(now_ms, jobs_done)` is called every so many events. A run that
    /// stops making progress with work pending ends with the watchdog's error.
    pub fn run(
        mut self,
        progress: &mut dyn FnMut(u64, usize),
    ) -> Result<(PolicyMetrics, RunCounters, Collector), String> {
        while self.jobs_done < self.jobs.len() {
            let Some(next) = self.heap.pop() else {
                return Err(self.stall("no event is left"));
            };
            let (at, ev) = (next.at(), next.ev);
            if self.watchdog_ms > 0
                && at.saturating_sub(self.last_progress_ms) > self.watchdog_ms
                && self.total_pending > 0
            {
                self.now = self.last_progress_ms + self.watchdog_ms;
                return Err(self.stall(&format!(
                    "no container was allocated and no task completed for {} s of simulated \
                     time (watchdog_ms {})",
                    self.watchdog_ms / 1000,
                    self.watchdog_ms
                )));
            }
            self.now = at;
            self.counters.events += 1;
            if self.counters.events % 65_536 == 0 {
                progress(self.now, self.jobs_done);
            }
            match ev {
                Ev::Arrive(j) => self.arrive(j),
                Ev::AmReady(j) => self.am_ready(j),
                Ev::AmHeartbeat(j) => self.am_heartbeat(j),
                Ev::MapCpuDone(j, m) => self.map_cpu_done(j, m),
                Ev::ReduceCpuDone(j, r) => self.reduce_cpu_done(j, r),
                Ev::FlowDone(f, gen) => self.flow_done(f as usize, gen),
                Ev::NetTick => self.net_tick(),
                Ev::Sample => self.sample(),
                Ev::Speculate(j) => self.speculate(j),
                Ev::Interference => self.interference_changed(),
                Ev::Heartbeat(n) => self.heartbeat(n),
            }
        }
        progress(self.now, self.jobs_done);
        let metrics = self.collector.finish(self.specs);
        Ok((metrics, self.counters, self.collector))
    }

    /// The watchdog's error: why the run stopped and the state it stopped in.
    fn stall(&self, why: &str) -> String {
        let (mut am, mut map, mut reduce) = (0u64, 0u64, 0u64);
        let (mut ask_am, mut ask_map, mut ask_reduce) = (0u64, 0u64, 0u64);
        let mut phases = [0usize; 5];
        for (j, job) in self.jobs.iter().enumerate() {
            phases[job.phase as usize] += 1;
            // Only a job whose AM has a container holds any; a finished job's task lists are
            // freed (`job_done`).
            let holds = matches!(job.phase, JobPhase::AmStarting | JobPhase::Running);
            let am_held = holds as u32;
            let reduces_held = if holds {
                self.reduces_held(j as u32)
            } else {
                0
            };
            am += am_held as u64;
            reduce += reduces_held as u64;
            map += (job.running - am_held - reduces_held) as u64;
            ask_am += job.am_pending as u64;
            ask_map += job.pending_maps as u64;
            ask_reduce += job.pending_reduces as u64;
        }
        let total = self.nodes.len() as u64 * self.cluster.containers_per_node as u64;
        format!(
            "{policy:?} stalled at {now:.1} s: {why}; no progress since {last:.1} s. Containers \
             held: AM {am}, map {map}, reduce {reduce} ({free} of {total} free). Pending asks: \
             AM {ask_am}, map {ask_map}, reduce {ask_reduce}. Jobs: not arrived {}, waiting \
             for an AM container {}, AM starting {}, running {}, done {}",
            phases[JobPhase::NotArrived as usize],
            phases[JobPhase::AwaitAm as usize],
            phases[JobPhase::AmStarting as usize],
            phases[JobPhase::Running as usize],
            phases[JobPhase::Done as usize],
            policy = self.policy,
            now = self.now as f64 / 1000.0,
            last = self.last_progress_ms as f64 / 1000.0,
            free = total - self.running_containers,
        )
    }

    fn next_heartbeat(&self, node: u32) -> u64 {
        let hb = self.cluster.heartbeat_ms;
        let phase = self.nodes[node as usize].phase_ms;
        let k = (self.now + hb - phase) / hb;
        let mut t = k * hb + phase;
        while t <= self.now {
            t += hb;
        }
        t
    }

    pub(super) fn wake(&mut self, node: u32) {
        let state = &self.nodes[node as usize];
        if state.free == 0 || state.hb == Hb::Scheduled {
            return;
        }
        if self.total_pending > 0 {
            let at = self.next_heartbeat(node);
            self.nodes[node as usize].hb = Hb::Scheduled;
            self.push(at, Ev::Heartbeat(node));
        } else if state.hb == Hb::None {
            self.nodes[node as usize].hb = Hb::Idle;
            self.idle.push(node);
        }
    }

    pub(super) fn demand_appeared(&mut self) {
        if self.total_pending == 0 {
            return;
        }
        let idle = std::mem::take(&mut self.idle);
        for node in idle {
            if self.nodes[node as usize].hb == Hb::Idle {
                self.nodes[node as usize].hb = Hb::None;
                self.wake(node);
            }
        }
    }

    fn heartbeat(&mut self, node: u32) {
        self.nodes[node as usize].hb = Hb::None;
        if self.nodes[node as usize].free > 0 && self.total_pending > 0 {
            self.offer(node);
        }
        self.wake(node);
    }
}
