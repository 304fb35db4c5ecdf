//! The event loop: one heap of timed events, and the NodeManager heartbeats that turn a node's
//! free containers into offers.
//!
//! Events are ordered by (time, sequence), so equal times resolve in insertion order and a run
//! is a pure function of its inputs and seed. A node is offered only at its heartbeat ticks and
//! only while it has a free container and the cluster has pending demand; a node with nothing
//! to do is parked until demand appears, so no idle heartbeat costs an event.

use super::{PolicyMetrics, RunCounters, Sim};
use crate::metrics::Collector;
use std::cmp::Reverse;

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
    Heartbeat(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hb {
    None,
    Scheduled,
    Idle,
}

impl Sim<'_> {
    pub(super) fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    /// Runs to the end; `progress(now_ms, jobs_done)` is called every so many events.
    pub fn run(
        mut self,
        progress: &mut dyn FnMut(u64, usize),
    ) -> (PolicyMetrics, RunCounters, Collector) {
        while let Some(Reverse((at, _, ev))) = self.heap.pop() {
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
                Ev::Heartbeat(n) => self.heartbeat(n),
            }
            if self.jobs_done == self.jobs.len() {
                break;
            }
        }
        progress(self.now, self.jobs_done);
        let metrics = self.collector.finish(self.specs);
        (metrics, self.counters, self.collector)
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
