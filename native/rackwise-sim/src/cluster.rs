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

impl Default for Cluster {
    fn default() -> Self {
        Cluster::preset("sw100").expect("sw100 preset")
    }
}

impl Cluster {
    pub const PRESETS: [&'static str; 3] = ["sw100", "nas600", "nas40"];

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
        if self.replication > 1 && self.racks < 2 {
            return Err("replication > 1 needs at least 2 racks (HDFS rack policy)".into());
        }
        if self.replication > 1 && self.nodes_per_rack < 2 {
            return Err("replication > 1 needs at least 2 nodes per rack".into());
        }
        if self
            .speed_classes
            .iter()
            .any(|s| !(s.is_finite() && *s > 0.0))
        {
            return Err("speed_classes must be positive".into());
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
        if self.speed_classes.is_empty() {
            1.0
        } else {
            self.speed_classes[node % self.speed_classes.len()]
        }
    }

    /// Mbit/s to bytes per millisecond.
    pub fn mbps_to_bytes_per_ms(mbps: f64) -> f64 {
        mbps * 1.0e6 / 8.0 / 1000.0
    }

    pub fn mib_per_s_to_bytes_per_ms(rate: f64) -> f64 {
        rate * MIB / 1000.0
    }
}
