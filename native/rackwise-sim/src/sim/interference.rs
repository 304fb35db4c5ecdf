//! Co-located interference (`Cluster::interference`): at each instant a window starts or ends,
//! the interfered nodes' NICs get their new capacity, and a core-steered run's core receives
//! each host's disk and network utilization as a host agent would measure the neighbour's load
//! on them. Disk slowdowns act on tasks directly: their disk work is stretched while a window
//! lasts (`Cluster::device_work_end_ms`).
//!
//! The agent's figure is the neighbour's share of the device, `1 − 1/slowdown` (a device
//! slowed twofold is half taken); the load of our own tasks is not in it.

use super::event_loop::Ev;
use super::Sim;
use crate::cluster::{Cluster, Device};
use rackwise_core::protocol::Event;

impl Sim<'_> {
    /// Queues the window changes; a cluster with windows also gets every host's figures at
    /// the start, so the core sees a measured quiet device rather than none.
    pub(super) fn schedule_interference(&mut self) {
        if self.cluster.interference.is_empty() {
            return;
        }
        let mut changes = self.cluster.interference_changes_ms();
        if changes.first() != Some(&0) {
            changes.insert(0, 0);
        }
        for at in changes {
            self.push(at, Ev::Interference);
        }
    }

    pub(super) fn interference_changed(&mut self) {
        let nic = Cluster::mbps_to_bytes_per_ms(self.cluster.nic_mbps);
        for node in 0..self.nodes.len() {
            let network = self.cluster.slowdown(node, Device::Network, self.now);
            let capacity = nic / network;
            for link in [self.link_out(node as u32), self.link_in(node as u32)] {
                if self.net.capacity[link as usize] != capacity {
                    self.net.set_capacity(link, capacity);
                }
            }
            if self.engine.is_some() {
                let disk = self.cluster.slowdown(node, Device::Disk, self.now);
                self.core_events.push(Event::HostFigures {
                    host: self.hosts[node].to_string(),
                    time_ms: self.now,
                    cross_rack_mbps: None,
                    disk_utilization: Some(1.0 - 1.0 / disk),
                    network_utilization: Some(1.0 - 1.0 / network),
                    cpu_speed: None,
                });
            }
        }
    }
}
