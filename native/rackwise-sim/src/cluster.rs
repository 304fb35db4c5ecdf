//! The simulated cluster: topology, link capacities, HDFS block size and the per-node task
//! rates. Named presets reproduce the papers' setups; anything else comes from a JSON file with
//! the same fields (every field optional, defaulting to the `sw100` preset's value).

use serde::{Deserialize, Serialize};

const MIB: f64 = 1024.0 * 1024.0;

/// Everything the simulator needs to know about the hardware. Rates are per container (one
/// task) at speed 1.0; a node's speed class multiplies its CPU/disk rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Cluster {
    pub name: String,
    pub racks: usize,
    pub nodes_per_rack: usize,
    pub containers_per_node: u32,
    /// Memory of one container, as reported to the core (every task uses one container).
    pub container_mb: u64,
    /// Full-duplex NIC bandwidth of every node, each way.
    pub nic_mbps: f64,
    /// Capacity of each rack's link to the core switch, each way (oversubscription).
    pub rack_uplink_mbps: f64,
    pub rack_downlink_mbps: f64,
    pub block_mib: u64,
    pub replication: u32,
    /// Optional speed classes: node `i` gets `speed_classes[i % len]` (DRMJS heterogeneity).
    pub speed_classes: Vec<f64>,
    /// Optional host classes, laid out over the nodes in order (the first class's `nodes`
    /// nodes, then the next's): each node's relative CPU speed by the physical machine it runs
    /// on. Their node counts must add up to the cluster's; exclusive with `speed_classes`.
    pub host_classes: Vec<HostClass>,
    /// Co-located interference: windows of time in which nodes' disks or NICs are slowed by a
    /// neighbour (DRMJS's noisy co-located VMs).
    pub interference: Vec<Interference>,
    /// Container launch + JVM start of every task, seconds.
    pub task_overhead_s: f64,
    /// MapReduce ApplicationMaster start until its first asks, seconds.
    pub am_startup_s: f64,
    /// Map input read from local disk and map function, MiB/s per task.
    pub map_mib_per_s: f64,
    /// Map output sort and spill to local disk, MiB/s per task.
    pub spill_mib_per_s: f64,
    /// Reduce merge and reduce function over its shuffled input, MiB/s per task.
    pub merge_mib_per_s: f64,
    /// Local HDFS write of task output (first replica), MiB/s per task.
    pub write_mib_per_s: f64,
    /// NodeManager heartbeat interval: the RM offers a node at most this often.
    pub heartbeat_ms: u64,
}

/// A class of physical machine and the nodes (VMs) that run on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostClass {
    pub name: String,
    /// How many consecutive nodes belong to the class.
    pub nodes: usize,
    /// CPU speed relative to the reference machine (1.0): task compute time is divided by it.
    pub speed: f64,
}

/// A neighbour's load on some nodes' devices from `start_s` until `end_s`: while it lasts a
/// task's disk work on those nodes takes `disk_slowdown` times as long, and their NICs carry
/// `1 / network_slowdown` of their bandwidth. Overlapping windows multiply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interference {
    /// Node indexes (0-based, in rack order).
    pub nodes: Vec<usize>,
    pub start_s: f64,
    pub end_s: f64,
    #[serde(default = "no_slowdown")]
    pub disk_slowdown: f64,
    #[serde(default = "no_slowdown")]
    pub network_slowdown: f64,
}

fn no_slowdown() -> f64 {
    1.0
}

/// The device a task's work runs on, for interference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Disk,
    Network,
}

impl Interference {
    fn slowdown(&self, device: Device) -> f64 {
        match device {
            Device::Disk => self.disk_slowdown,
            Device::Network => self.network_slowdown,
        }
    }

    fn start_ms(&self) -> u64 {
        (self.start_s * 1000.0).round() as u64
    }

    fn end_ms(&self) -> u64 {
        (self.end_s * 1000.0).round() as u64
    }
}

/// The thesis' testbed (DRMJS, ch. 3): 29 Hadoop VMs on 8 physical machines, PM1 1.9 GHz 6
/// cores, PM2 2.4 GHz 28 cores, PM3–4 3.2 GHz 4 cores, PM5–8 3.4 GHz 4 cores. The 58 cores
/// hold 29 VMs of 2 vCPUs each, so each PM runs cores ÷ 2 of them (3, 14, 2 × 2, 4 × 2) and
/// each VM 2 one-vcore containers; a VM's speed is its PM's clock ÷ 3.4 GHz. One switch: one
/// rack. Hadoop 2's 128 MB blocks, replication 3, 1 GbE.
fn drmjs_thesis_hosts(base: Cluster) -> Cluster {
    let class = |name: &str, nodes: usize, ghz: f64| HostClass {
        name: name.to_string(),
        nodes,
        speed: ghz / 3.4,
    };
    Cluster {
        racks: 1,
        nodes_per_rack: 29,
        containers_per_node: 2,
        nic_mbps: 1000.0,
        rack_uplink_mbps: 1000.0,
        rack_downlink_mbps: 1000.0,
        block_mib: 128,
        host_classes: vec![
            class("pm1", 3, 1.9),
            class("pm2", 14, 2.4),
            class("pm3", 2, 3.2),
            class("pm4", 2, 3.2),
            class("pm5", 2, 3.4),
            class("pm6", 2, 3.4),
            class("pm7", 2, 3.4),
            class("pm8", 2, 3.4),
        ],
        ..base
    }
}

/// Co-located non-Hadoop VMs injecting random disk and network IO on some hosts (our
/// schedule; the thesis does not give one): PM1's three VMs share a disk with a neighbour the
/// whole time (disk work twice as long); half of PM2's VMs (nodes 3–9) get a neighbour hammering
/// disk and NIC in 10-minute bursts every 20 minutes; PM4's two VMs (nodes 19–20) lose two
/// thirds of their NIC in the other 10 minutes of each 20. The motivation chapter measured
/// +50 % map and +60 % reduce latency under such interference; twofold device slowdowns give
/// about that on tasks whose work is partly CPU.
fn drmjs_thesis_interference() -> Vec<Interference> {
    const HORIZON_S: f64 = 12.0 * 3600.0;
    const BURST_S: f64 = 600.0;
    let mut windows = vec![Interference {
        nodes: vec![0, 1, 2],
        start_s: 0.0,
        end_s: HORIZON_S,
        disk_slowdown: 2.0,
        network_slowdown: 1.0,
    }];
    let mut start = 0.0;
    while start < HORIZON_S {
        windows.push(Interference {
            nodes: (3..10).collect(),
            start_s: start,
            end_s: start + BURST_S,
            disk_slowdown: 2.0,
            network_slowdown: 2.0,
        });
        windows.push(Interference {
            nodes: vec![19, 20],
            start_s: start + BURST_S,
            end_s: start + 2.0 * BURST_S,
            disk_slowdown: 1.0,
            network_slowdown: 3.0,
        });
        start += 2.0 * BURST_S;
    }
    windows
}

impl Default for Cluster {
    fn default() -> Self {
        Cluster::preset("sw100").expect("sw100 preset")
    }
}

impl Cluster {
    pub const PRESETS: [&'static str; 5] = ["sw100", "nas600", "nas40", "drmjs29", "drmjs29-quiet"];

    pub fn preset(name: &str) -> Option<Cluster> {
        let base = Cluster {
            name: name.to_string(),
            racks: 10,
            nodes_per_rack: 10,
            containers_per_node: 4,
            container_mb: 2048,
            nic_mbps: 250.0,
            rack_uplink_mbps: 500.0,
            rack_downlink_mbps: 500.0,
            block_mib: 64,
            replication: 3,
            speed_classes: vec![],
            host_classes: vec![],
            interference: vec![],
            task_overhead_s: 1.0,
            am_startup_s: 3.0,
            map_mib_per_s: 40.0,
            spill_mib_per_s: 80.0,
            merge_mib_per_s: 40.0,
            write_mib_per_s: 80.0,
            heartbeat_ms: 1000,
        };
        match name {
            // ShuffleWatcher §5: 100 EC2 nodes, 10 sub-clusters of 10, 500 Mbps between
            // sub-clusters, ~250 Mbps per node within; Hadoop 1.0 with 64 MB blocks.
            "sw100" => Some(base),
            // NAS simulation: 600 nodes = 30 racks x 20, 6 containers/node, 1 Gbps per rack
            // across (50 Mbps/node), 250 Mbps per node within (5:1), 128 MB blocks.
            "nas600" => Some(Cluster {
                racks: 30,
                nodes_per_rack: 20,
                containers_per_node: 6,
                rack_uplink_mbps: 1000.0,
                rack_downlink_mbps: 1000.0,
                block_mib: 128,
                ..base
            }),
            // NAS real cluster: 40 nodes = 8 racks x 5, 1 GbE, 5:1, 16 containers/node.
            "nas40" => Some(Cluster {
                racks: 8,
                nodes_per_rack: 5,
                containers_per_node: 16,
                nic_mbps: 1000.0,
                rack_uplink_mbps: 1000.0,
                rack_downlink_mbps: 1000.0,
                block_mib: 128,
                ..base
            }),
            "drmjs29" => Some(Cluster {
                interference: drmjs_thesis_interference(),
                ..drmjs_thesis_hosts(base)
            }),
            "drmjs29-quiet" => Some(Cluster {
                host_classes: vec![],
                ..drmjs_thesis_hosts(base)
            }),
            _ => None,
        }
    }

    /// A preset name or a JSON cluster file.
    pub fn load(spec: &str) -> Result<Cluster, String> {
        if let Some(preset) = Cluster::preset(spec) {
            return Ok(preset);
        }
        let text = std::fs::read_to_string(spec).map_err(|e| {
            format!(
                "cluster '{spec}' is neither a preset ({}) nor a readable file: {e}",
                Cluster::PRESETS.join(", ")
            )
        })?;
        let cluster: Cluster =
            serde_json::from_str(&text).map_err(|e| format!("cluster file {spec}: {e}"))?;
        cluster
            .validate()
            .map_err(|e| format!("cluster file {spec}: {e}"))?;
        Ok(cluster)
    }

    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("racks", self.racks as f64),
            ("nodes_per_rack", self.nodes_per_rack as f64),
            ("containers_per_node", self.containers_per_node as f64),
            ("nic_mbps", self.nic_mbps),
            ("rack_uplink_mbps", self.rack_uplink_mbps),
            ("rack_downlink_mbps", self.rack_downlink_mbps),
            ("block_mib", self.block_mib as f64),
            ("replication", self.replication as f64),
            ("map_mib_per_s", self.map_mib_per_s),
            ("spill_mib_per_s", self.spill_mib_per_s),
            ("merge_mib_per_s", self.merge_mib_per_s),
            ("write_mib_per_s", self.write_mib_per_s),
            ("heartbeat_ms", self.heartbeat_ms as f64),
        ];
        for (field, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Err(format!("{field} must be positive, got {value}"));
            }
        }
        if self.replication > 1 && self.nodes_per_rack < 2 {
            return Err("replication > 1 needs at least 2 nodes per rack".into());
        }
        if self.replication as usize > self.nodes() {
            return Err(format!(
                "replication {} needs as many nodes, the cluster has {}",
                self.replication,
                self.nodes()
            ));
        }
        if self
            .speed_classes
            .iter()
            .any(|s| !(s.is_finite() && *s > 0.0))
        {
            return Err("speed_classes must be positive".into());
        }
        self.validate_heterogeneity()
    }

    fn validate_heterogeneity(&self) -> Result<(), String> {
        if self.host_classes.is_empty() {
            return self.validate_interference();
        }
        if !self.speed_classes.is_empty() {
            return Err("speed_classes and host_classes: give one of them, not both".into());
        }
        for class in &self.host_classes {
            if class.nodes == 0 {
                return Err(format!(
                    "host class '{}': nodes must be at least 1",
                    class.name
                ));
            }
            if !(class.speed.is_finite() && class.speed > 0.0) {
                return Err(format!(
                    "host class '{}': speed {} must be positive",
                    class.name, class.speed
                ));
            }
        }
        let listed: usize = self.host_classes.iter().map(|c| c.nodes).sum();
        if listed != self.nodes() {
            return Err(format!(
                "host_classes hold {listed} nodes, but the cluster has {} (racks × nodes_per_rack)",
                self.nodes()
            ));
        }
        self.validate_interference()
    }

    fn validate_interference(&self) -> Result<(), String> {
        for (i, window) in self.interference.iter().enumerate() {
            let name = format!("interference[{i}]");
            if let Some(node) = window.nodes.iter().find(|&&n| n >= self.nodes()) {
                return Err(format!(
                    "{name}: node {node} does not exist (the cluster has {} nodes)",
                    self.nodes()
                ));
            }
            if !(window.start_s.is_finite()
                && window.start_s >= 0.0
                && window.end_s.is_finite()
                && window.end_s > window.start_s)
            {
                return Err(format!(
                    "{name}: start_s {} and end_s {} must satisfy 0 <= start_s < end_s",
                    window.start_s, window.end_s
                ));
            }
            for (field, value) in [
                ("disk_slowdown", window.disk_slowdown),
                ("network_slowdown", window.network_slowdown),
            ] {
                if !(value.is_finite() && value >= 1.0) {
                    return Err(format!(
                        "{name}: {field} {value} must be at least 1 (1 = no slowdown)"
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn nodes(&self) -> usize {
        self.racks * self.nodes_per_rack
    }

    pub fn block_bytes(&self) -> u64 {
        self.block_mib * 1024 * 1024
    }

    pub fn speed(&self, node: usize) -> f64 {
        if !self.host_classes.is_empty() {
            let mut first = 0;
            for class in &self.host_classes {
                if node < first + class.nodes {
                    return class.speed;
                }
                first += class.nodes;
            }
        }
        if self.speed_classes.is_empty() {
            1.0
        } else {
            self.speed_classes[node % self.speed_classes.len()]
        }
    }

    /// Whether nodes differ in speed: a host-class file or agent would give each host's speed.
    pub fn is_heterogeneous(&self) -> bool {
        !self.speed_classes.is_empty() || !self.host_classes.is_empty()
    }

    /// How much slower `device` work runs on `node` at `at_ms` (1 = undisturbed).
    pub fn slowdown(&self, node: usize, device: Device, at_ms: u64) -> f64 {
        self.interference
            .iter()
            .filter(|w| w.nodes.contains(&node) && w.start_ms() <= at_ms && at_ms < w.end_ms())
            .map(|w| w.slowdown(device))
            .product()
    }

    /// Every instant an interference window starts or ends, in order, without repeats: when
    /// NIC capacities change and a host agent's figures move.
    pub fn interference_changes_ms(&self) -> Vec<u64> {
        let mut times: Vec<u64> = self
            .interference
            .iter()
            .flat_map(|w| [w.start_ms(), w.end_ms()])
            .collect();
        times.sort_unstable();
        times.dedup();
        times
    }

    /// When `work_ms` of `device` work (at the node's undisturbed pace) started at `start_ms`
    /// on `node` ends, as the interference windows stretch the time it takes while they last;
    /// rounded to the millisecond once, at the end.
    pub fn device_work_end_ms(
        &self,
        node: usize,
        device: Device,
        start_ms: f64,
        work_ms: f64,
    ) -> u64 {
        let changes = self.interference_changes_ms();
        let mut now = start_ms;
        let mut left = work_ms.max(0.0);
        for change in changes {
            if change as f64 <= now {
                continue;
            }
            let factor = self.slowdown(node, device, now as u64);
            let span = change as f64 - now;
            if left * factor <= span {
                break;
            }
            left -= span / factor;
            now = change as f64;
        }
        (now + left * self.slowdown(node, device, now as u64)).round() as u64
    }

    /// Mbit/s to bytes per millisecond.
    pub fn mbps_to_bytes_per_ms(mbps: f64) -> f64 {
        mbps * 1.0e6 / 8.0 / 1000.0
    }

    pub fn mib_per_s_to_bytes_per_ms(rate: f64) -> f64 {
        rate * MIB / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_window(disk: f64) -> Cluster {
        Cluster {
            interference: vec![Interference {
                nodes: vec![0],
                start_s: 10.0,
                end_s: 20.0,
                disk_slowdown: disk,
                network_slowdown: 1.0,
            }],
            ..Cluster::default()
        }
    }

    /// 15 s of disk work from 5 s: 5 s before the window, 10 s of the window do 5 s of work
    /// at half pace, and the last 5 s run after it: the work ends at 25 s. Node 1 is quiet.
    #[test]
    fn work_through_a_window_is_stretched_only_while_it_lasts() {
        let cluster = one_window(2.0);
        assert_eq!(
            cluster.device_work_end_ms(0, Device::Disk, 5_000.0, 15_000.0),
            25_000
        );
        assert_eq!(
            cluster.device_work_end_ms(1, Device::Disk, 5_000.0, 15_000.0),
            20_000
        );
        assert_eq!(
            cluster.device_work_end_ms(0, Device::Network, 5_000.0, 15_000.0),
            20_000
        );
        // Started inside the window: 2 s of work take 4 s.
        assert_eq!(
            cluster.device_work_end_ms(0, Device::Disk, 12_000.0, 2_000.0),
            16_000
        );
    }

    #[test]
    fn bad_interference_and_host_classes_are_refused_by_name() {
        let error = one_window(0.5).validate().unwrap_err();
        assert!(
            error.contains("interference[0]: disk_slowdown 0.5"),
            "{error}"
        );
        let mut cluster = one_window(2.0);
        cluster.interference[0].nodes = vec![500];
        let error = cluster.validate().unwrap_err();
        assert!(error.contains("interference[0]: node 500"), "{error}");
        let mut cluster = Cluster::preset("drmjs29").unwrap();
        cluster.host_classes[0].nodes = 4;
        let error = cluster.validate().unwrap_err();
        assert!(error.contains("host_classes hold 30 nodes"), "{error}");
    }

    /// The thesis testbed: 29 nodes over 8 host classes, PM1's three the slowest.
    #[test]
    fn the_thesis_preset_has_29_nodes_over_8_classes() {
        let cluster = Cluster::preset("drmjs29").unwrap();
        cluster.validate().unwrap();
        assert_eq!(cluster.nodes(), 29);
        assert_eq!(cluster.host_classes.len(), 8);
        assert!((cluster.speed(0) - 1.9 / 3.4).abs() < 1e-9);
        assert_eq!(cluster.speed(28), 1.0);
        assert_eq!(cluster.slowdown(0, Device::Disk, 0), 2.0);
        Cluster::preset("drmjs29-quiet")
            .unwrap()
            .validate()
            .unwrap();
    }
}
