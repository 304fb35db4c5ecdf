//! The discrete-event simulation: a YARN cluster running MapReduce jobs, scheduled either by a
//! stock baseline (fair, delay, fifo) or by FairScheduler steered by the Rackwise core.
//!
//! Time is in milliseconds. Events sit in one heap ordered by (time, sequence), so equal times
//! resolve in insertion order and a run is a pure function of its inputs and seed. A node is
//! offered only at its NodeManager heartbeat ticks, and only while it has a free container and
//! the cluster has pending demand (no idle heartbeats are simulated). One offer may place
//! several containers (FairScheduler `assignmultiple=true`), exactly as the RM shim re-evaluates
//! the plan on every `assignContainer` of the same heartbeat.
//!
//! This module holds the world's state (`Sim`, its nodes and jobs) and builds it; the behaviour
//! is split by what it models:
//! - `event_loop`: the event heap, the run loop and the NodeManager heartbeats;
//! - `fair_scheduler`: FairScheduler's (and FIFO's) placement on an offer, delay scheduling,
//!   allocation and release of containers;
//! - `core_link`: the Rackwise core's configuration, the ask tables and events sent with each
//!   offer, and the plan it returns;
//! - `mr_am`: the MapReduce ApplicationMaster (its allocate heartbeat, headroom-driven reduce
//!   ramp and reducer preemption) and its map and reduce tasks;
//! - `hdfs`: block replica placement and the output write pipeline;
//! - `transfers`: tasks' transfers as flows of the network model, and the rate re-solves;
//! - `sampling`: NetSat's rack-load feed and the periodic metric samples.

mod core_link;
mod event_loop;
mod fair_scheduler;
mod hdfs;
mod mr_am;
mod sampling;
mod transfers;

pub use core_link::{core_config, core_engine};
pub use fair_scheduler::{NODE_LOCALITY_DELAY_MS, RACK_LOCALITY_DELAY_MS};
pub use mr_am::{
    AmOptions, AM_HEARTBEAT_MS, REDUCER_UNCONDITIONAL_PREEMPT_DELAY_MS, REDUCE_PREEMPTION_LIMIT,
    REDUCE_RAMPUP_LIMIT, SLOWSTART,
};
pub use sampling::SAMPLE_MS;
pub use transfers::NET_TICK_MS;

use crate::cluster::Cluster;
use crate::metrics::{Collector, PolicyMetrics};
use crate::network::{FlowId, Network};
use crate::rng::Rng;
use crate::workload::JobSpec;
use event_loop::{Ev, Hb};
use mr_am::AmState;
use rackwise_core::mapreduce;
use rackwise_core::protocol::{AppId, Event, Locality, NodeId, RackName, Resources};
pub use rackwise_core::settings::CONGESTION_THRESHOLD;
use rackwise_core::Engine;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;
use std::time::Duration;

/// The MapReduce ApplicationMaster's request priorities the simulated AM asks with, as the
/// core defines them (`rackwise_core::mapreduce`).
pub const PRIORITY_AM: i32 = mapreduce::AM_PRIORITY.0;
pub const PRIORITY_REDUCE: i32 = mapreduce::REDUCE_PRIORITY.0;
pub const PRIORITY_MAP: i32 = mapreduce::MAP_PRIORITY.0;

/// Which scheduler drives the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    Fair,
    Delay,
    Fifo,
    /// A policy of the Rackwise core, by the name its configuration accepts.
    Core(String),
}

impl Policy {
    pub fn parse(name: &str) -> Policy {
        match name {
            "fair" => Policy::Fair,
            "delay" => Policy::Delay,
            "fifo" => Policy::Fifo,
            other => Policy::Core(other.to_string()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SimOptions {
    pub seed: u64,
    /// Extra `yarn.scheduler.rackwise.*` settings for the core (override the defaults below).
    pub core_settings: BTreeMap<String, String>,
    /// Extra `<rackwise>` children of queue `root` (inherited by every user queue), such as
    /// `starvationWindowMs`: the per-queue policy parameters of `fair-scheduler.xml`.
    pub queue_settings: BTreeMap<String, String>,
    /// The MapReduce ApplicationMaster's allocator settings (`mr_am`).
    pub am: AmOptions,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 1,
            core_settings: BTreeMap::new(),
            queue_settings: BTreeMap::new(),
            am: AmOptions::default(),
        }
    }
}

struct NodeState {
    rack: u32,
    free: u32,
    hb: Hb,
    phase_ms: u64,
    speed: f64,
}

#[derive(Clone)]
struct MapTask {
    replicas: [u32; 3],
    assigned: bool,
    node: u32,
    container: u32,
    /// What the map still waits for before its spill: its compute over the input and, for a
    /// non-local map, the streamed read of its split (`mr_am::input_consumed`).
    inputs_left: u8,
}

struct ReduceTask {
    node: u32,
    rack: u32,
    container: u32,
    local_flow: Option<FlowId>,
    remote_flow: Option<FlowId>,
    links_stale: bool,
    shuffling: bool,
    /// The output write pipeline's flow, while the reduce writes its output.
    output_flow: Option<FlowId>,
    /// Map output bytes handed to this attempt's fetch flows so far.
    received: f64,
    /// Done or killed by reducer preemption: the attempt holds no container any more.
    ended: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum JobPhase {
    NotArrived,
    AwaitAm,
    AmStarting,
    Running,
    Done,
}

struct Job {
    phase: JobPhase,
    user: u32,
    am_node: u32,
    am_container: u32,
    maps_total: u32,
    reduces_total: u32,
    input_per_map: f64,
    shuffle_per_map: f64,
    output_per_map: f64,
    shuffle_per_reduce: f64,
    output_per_reduce: f64,
    maps: Vec<MapTask>,
    by_host: BTreeMap<u32, Vec<u32>>,
    by_rack: BTreeMap<u32, Vec<u32>>,
    any: Vec<u32>,
    host_count: BTreeMap<u32, u32>,
    rack_count: BTreeMap<u32, u32>,
    /// The counts above zero as the map ask names them, kept in step with `host_count` and
    /// `rack_count`: the ask table is re-sent after every allocation of the job, and copying
    /// these maps costs less than building them by name again (a sort of host names).
    ask_hosts: BTreeMap<Arc<str>, u32>,
    ask_racks: BTreeMap<RackName, u32>,
    pending_maps: u32,
    maps_done: u32,
    reduces_requested: bool,
    pending_reduces: u32,
    reduces: Vec<ReduceTask>,
    reduces_done: u32,
    output_by_rack: Vec<f64>,
    /// Reduce attempts killed by the AM's reducer preemption (their tasks run again).
    reduces_killed: u32,
    /// Maps launched in their containers and not done (the AM's assigned maps).
    maps_running: u32,
    /// The AM's side of its asks (`mr_am`): what it has sent or will send on its next
    /// heartbeat, the containers granted that it has not received yet, and its heartbeat.
    am: AmState,
    running: u32,
    am_pending: bool,
    /// Delay scheduling: allowed locality of the map key and since when.
    allowed: Locality,
    allowed_since: u64,
    asks_dirty: bool,
    /// The `any` of the AM, reduce and map rows as last sent to the core: a row goes out when
    /// it changed, and a row that dropped to zero goes out once, removing it.
    reported_any: [u32; 3],
    stats_dirty: bool,
    steered_stamp: u64,
}

impl Job {
    fn pending(&self) -> u32 {
        self.am_pending as u32 + self.pending_maps + self.pending_reduces
    }
}

/// What one run measured beyond the headline metrics, for tests and the benchmark note.
#[derive(Debug, Clone, Default)]
pub struct RunCounters {
    pub offers: u64,
    pub core_time: Duration,
    pub events: u64,
    pub containers: u64,
    pub shuffle_produced: f64,
    pub shuffle_fetched: f64,
    pub max_node_overallocation: u32,
    /// Reduce attempts killed by the AM's reducer preemption.
    pub reduces_preempted: u64,
    /// Shuffle bytes that killed reduce attempts had fetched: fetched again by their reruns,
    /// and not counted in `shuffle_fetched`.
    pub shuffle_refetched: f64,
}

/// The whole simulated world for one policy.
pub struct Sim<'a> {
    cluster: &'a Cluster,
    specs: &'a [JobSpec],
    policy: Policy,
    engine: Option<Engine>,
    now: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    rng: Rng,
    nodes: Vec<NodeState>,
    node_ids: Vec<NodeId>,
    /// Shared with every map ask table that names the host.
    hosts: Vec<Arc<str>>,
    rack_names: Vec<RackName>,
    jobs: Vec<Job>,
    app_ids: Vec<AppId>,
    queues: Vec<String>,
    net: Network,
    net_tick_at: Option<u64>,
    stale_links: Vec<(u32, u32)>,
    /// The live flow ids a network tick walks, kept to reuse the allocation.
    tick_flows: Vec<FlowId>,
    /// Each reduce's cross-rack fetch flow's composition: the bytes still to fetch per source
    /// rack, `racks` entries at `flow id × racks`, zero for other flows. Stored by flow id, not
    /// in the reduce, because every network tick decays all of them in flow-id order: a walk
    /// through one array instead of two cache misses (the reduce, its vector) per flow.
    remote_bytes: Vec<f64>,
    last_booked_ms: u64,
    idle: Vec<u32>,
    total_pending: u64,
    users_demand: BTreeSet<(u32, u32)>,
    user_apps: Vec<BTreeSet<(u32, u32)>>,
    /// `offer_fair`'s buffers for the users and apps it walks.
    fair_users: Vec<u32>,
    fair_apps: Vec<u32>,
    user_running: Vec<u32>,
    user_pending: Vec<u32>,
    fifo: BTreeSet<u32>,
    core_events: Vec<Event>,
    dirty_jobs: Vec<u32>,
    next_container: u32,
    offer_seq: u64,
    jobs_done: usize,
    running_containers: u64,
    /// Users (queues) with an app that arrived and is not done: FairScheduler's active
    /// queues, among which the fair share, hence each AM's headroom, is divided.
    user_active_apps: Vec<u32>,
    active_queues: u32,
    am_options: AmOptions,
    pub collector: Collector,
    pub counters: RunCounters,
}

impl<'a> Sim<'a> {
    pub fn new(
        cluster: &'a Cluster,
        specs: &'a [JobSpec],
        policy: Policy,
        options: &SimOptions,
    ) -> Result<Sim<'a>, String> {
        cluster.validate()?;
        options.am.validate()?;
        if cluster.replication > 3 {
            return Err("replication above 3 is not modelled".into());
        }
        let engine = match &policy {
            Policy::Core(name) => Some(
                core_engine(
                    name,
                    cluster,
                    &options.core_settings,
                    &options.queue_settings,
                )
                .map_err(|e| format!("policy '{name}': {e}"))?,
            ),
            _ => None,
        };
        let n = cluster.nodes();
        let r = cluster.racks;
        let hb = cluster.heartbeat_ms;
        let nodes = (0..n)
            .map(|i| NodeState {
                rack: (i / cluster.nodes_per_rack) as u32,
                free: cluster.containers_per_node,
                hb: Hb::None,
                phase_ms: (i as u64 * hb) / n as u64,
                speed: cluster.speed(i),
            })
            .collect::<Vec<_>>();
        let hosts: Vec<Arc<str>> = (0..n)
            .map(|i| {
                format!(
                    "r{}n{}",
                    i / cluster.nodes_per_rack + 1,
                    i % cluster.nodes_per_rack + 1
                )
                .into()
            })
            .collect();
        let node_ids = hosts
            .iter()
            .map(|h| NodeId(format!("{h}:8041").into()))
            .collect();
        let rack_names: Vec<RackName> = (0..r)
            .map(|i| RackName(format!("/r{}", i + 1).into()))
            .collect();
        let mut caps = Vec::with_capacity(2 * n + 2 * r);
        let nic = Cluster::mbps_to_bytes_per_ms(cluster.nic_mbps);
        caps.extend(std::iter::repeat_n(nic, 2 * n));
        caps.extend(std::iter::repeat_n(
            Cluster::mbps_to_bytes_per_ms(cluster.rack_uplink_mbps),
            r,
        ));
        caps.extend(std::iter::repeat_n(
            Cluster::mbps_to_bytes_per_ms(cluster.rack_downlink_mbps),
            r,
        ));
        let users = specs.iter().map(|s| s.user + 1).max().unwrap_or(1);
        let jobs = specs
            .iter()
            .map(|s| {
                let maps = s.maps.max(1);
                let reduces = s.reduces;
                Job {
                    phase: JobPhase::NotArrived,
                    user: s.user as u32,
                    am_node: 0,
                    am_container: 0,
                    maps_total: maps,
                    reduces_total: reduces,
                    input_per_map: s.input_bytes as f64 / maps as f64,
                    shuffle_per_map: if reduces > 0 {
                        s.shuffle_bytes as f64 / maps as f64
                    } else {
                        0.0
                    },
                    output_per_map: if reduces > 0 {
                        0.0
                    } else {
                        s.output_bytes as f64 / maps as f64
                    },
                    shuffle_per_reduce: if reduces > 0 {
                        s.shuffle_bytes as f64 / reduces as f64
                    } else {
                        0.0
                    },
                    output_per_reduce: if reduces > 0 {
                        s.output_bytes as f64 / reduces as f64
                    } else {
                        0.0
                    },
                    maps: Vec::new(),
                    by_host: BTreeMap::new(),
                    by_rack: BTreeMap::new(),
                    any: Vec::new(),
                    host_count: BTreeMap::new(),
                    rack_count: BTreeMap::new(),
                    ask_hosts: BTreeMap::new(),
                    ask_racks: BTreeMap::new(),
                    pending_maps: 0,
                    maps_done: 0,
                    reduces_requested: false,
                    pending_reduces: 0,
                    reduces: Vec::new(),
                    reduces_done: 0,
                    output_by_rack: Vec::new(),
                    reduces_killed: 0,
                    maps_running: 0,
                    am: AmState::default(),
                    running: 0,
                    am_pending: false,
                    allowed: Locality::NodeLocal,
                    allowed_since: 0,
                    asks_dirty: false,
                    reported_any: [0; 3],
                    stats_dirty: false,
                    steered_stamp: 0,
                }
            })
            .collect();
        let mut sim = Sim {
            cluster,
            specs,
            policy,
            engine,
            now: 0,
            seq: 0,
            heap: BinaryHeap::new(),
            rng: Rng::new(options.seed),
            nodes,
            node_ids,
            hosts,
            rack_names,
            jobs,
            app_ids: (0..specs.len())
                .map(|j| AppId(format!("app_{j}").into()))
                .collect(),
            queues: (0..users).map(|u| format!("root.u{u}")).collect(),
            net: Network::new(caps),
            net_tick_at: None,
            stale_links: Vec::new(),
            tick_flows: Vec::new(),
            remote_bytes: Vec::new(),
            last_booked_ms: 0,
            idle: Vec::new(),
            total_pending: 0,
            users_demand: BTreeSet::new(),
            user_apps: vec![BTreeSet::new(); users],
            fair_users: Vec::new(),
            fair_apps: Vec::new(),
            user_running: vec![0; users],
            user_pending: vec![0; users],
            fifo: BTreeSet::new(),
            core_events: Vec::new(),
            dirty_jobs: Vec::new(),
            next_container: 0,
            offer_seq: 0,
            jobs_done: 0,
            running_containers: 0,
            user_active_apps: vec![0; users],
            active_queues: 0,
            am_options: options.am.clone(),
            collector: Collector::new(cluster, specs, users),
            counters: RunCounters::default(),
        };
        if sim.engine.is_some() {
            let capacity = sim.node_resources(cluster.containers_per_node);
            for i in 0..n {
                sim.core_events.push(Event::NodeAdded {
                    node: sim.node_ids[i].clone(),
                    host: sim.hosts[i].to_string(),
                    rack: sim.rack_names[sim.nodes[i].rack as usize].clone(),
                    capacity,
                });
            }
        }
        for (j, spec) in specs.iter().enumerate() {
            sim.push(spec.submit_ms, Ev::Arrive(j as u32));
        }
        for i in 0..n {
            sim.nodes[i].hb = Hb::Idle;
            sim.idle.push(i as u32);
        }
        Ok(sim)
    }

    fn node_resources(&self, containers: u32) -> Resources {
        Resources {
            memory_mb: containers as u64 * self.cluster.container_mb,
            vcores: containers,
        }
    }
}
