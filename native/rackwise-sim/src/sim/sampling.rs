//! The periodic measurement: every `SAMPLE_MS`, the rack links' utilization, fed to the core as
//! NetSat's rack loads (as the shim's feed would be), and the congestion, fairness and
//! utilization samples of the metrics.

use super::event_loop::Ev;
use super::Sim;
use rackwise_core::protocol::Event;

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
        if self.engine.is_some() {
            for (r, u) in utilization.iter().enumerate() {
                self.core_events.push(Event::RackLoad {
                    rack: self.rack_names[r].clone(),
                    utilization: *u,
                    time_ms: self.now,
                });
            }
        }
        let demanding: Vec<f64> = self
            .users_demand
            .iter()
            .map(|&(running, _)| running as f64)
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
