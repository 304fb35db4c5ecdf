//! The periodic measurement: every `SAMPLE_MS`, the rack links' utilization (fed to the core
//! as NetSat's rack loads when the run has a host agent's feed, `netsat.source=feed`), and the
//! congestion, fairness and utilization samples of the metrics.

use super::event_loop::Ev;
use super::Sim;

/// NetSat sampling period of the simulator's own measurement (also the congestion and
/// fairness sampling period). The core's default NetSat period is 2 s.
pub const SAMPLE_MS: u64 = 2000;

impl Sim<'_> {
    /// NetSat's measurement, the congestion count and the fairness/utilization samples.
    pub(super) fn sample(&mut self) {
        // Link bytes are booked at every network tick (each second, before this sample at the
        // same instant), so no extra sync of every flow is needed here.
        let bytes = self.net.take_link_bytes();
        let racks = self.cluster.racks;
        let base = 2 * self.nodes.len();
        let mut utilization = Vec::with_capacity(racks);
        for r in 0..racks {
            let up = bytes[base + r] / (self.net.capacity[base + r] * SAMPLE_MS as f64);
            let down =
                bytes[base + racks + r] / (self.net.capacity[base + racks + r] * SAMPLE_MS as f64);
            utilization.push(up.max(down));
        }
        if self.feeds_rack_loads() {
            // The core keeps only each rack's latest load, so a newer one replaces the queued
            // one: between two calls of the core at most one per rack waits.
            for (load, u) in self.rack_loads.iter_mut().zip(&utilization) {
                *load = Some((*u, self.now));
            }
        }
        if self.engine.is_some() {
            let queued =
                self.core_events.len() + self.rack_loads.iter().filter(|l| l.is_some()).count();
            self.counters.peak_core_events = self.counters.peak_core_events.max(queued);
        }
        let demanding: Vec<f64> = self
            .users_demand
            .iter()
            .map(|&(_, u)| self.user_running[u as usize] as f64)
            .collect();
        let total = self.cluster.nodes() as u64 * self.cluster.containers_per_node as u64;
        self.collector.sample(
            &utilization,
            &demanding,
            self.running_containers as f64 / total as f64,
        );
        if self.jobs_done < self.jobs.len() {
            self.push(self.now + SAMPLE_MS, Ev::Sample);
        }
    }
}
