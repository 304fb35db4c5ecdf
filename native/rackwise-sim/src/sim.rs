//! The discrete-event simulation: a YARN cluster running MapReduce jobs, scheduled either by a
//! stock baseline (fair, delay, fifo) or by FairScheduler steered by the Rackwise core.
//!
//! Time is in milliseconds. Events sit in one heap ordered by (time, sequence), so equal times
//! resolve in insertion order and a run is a pure function of its inputs and seed. A node is
//! offered only at its NodeManager heartbeat ticks, and only while it has a free container and
//! the cluster has pending demand (no idle heartbeats are simulated). One offer may place
//! several containers (FairScheduler `assignmultiple=true`), exactly as the RM shim re-evaluates
//! the plan on every `assignContainer` of the same heartbeat.

use crate::cluster::Cluster;
use crate::metrics::{Collector, PolicyMetrics};
use crate::network::{FlowId, LinkId, Network};
use crate::rng::Rng;
use crate::workload::JobSpec;
use rackwise_core::mapreduce::{self, Placement};
use rackwise_core::protocol::{
    AppId, Ask, ContainerId, EngineConfig, Event, Locality, NodeId, NodeOffer, OfferRequest,
    Priority, QueueSettings, RackName, Resources,
};
pub use rackwise_core::settings::CONGESTION_THRESHOLD;
use rackwise_core::{CoreError, Engine};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The MapReduce ApplicationMaster's request priorities the simulated AM asks with, as the
/// core defines them (`rackwise_core::mapreduce`).
pub const PRIORITY_AM: i32 = mapreduce::AM_PRIORITY.0;
pub const PRIORITY_REDUCE: i32 = mapreduce::REDUCE_PRIORITY.0;
pub const PRIORITY_MAP: i32 = mapreduce::MAP_PRIORITY.0;

/// Network rates are re-solved at most this often (between solves a new flow takes what is
/// left on its path).
pub const NET_TICK_MS: u64 = 1000;
/// NetSat sampling period of the simulator's own measurement (also the congestion and
/// fairness sampling period). The core's default NetSat period is 2 s.
pub const SAMPLE_MS: u64 = 2000;
/// Delay scheduling waits (FairScheduler time-based locality delay), node then rack.
pub const NODE_LOCALITY_DELAY_MS: u64 = 5000;
pub const RACK_LOCALITY_DELAY_MS: u64 = 5000;
/// MapReduce `mapreduce.job.reduce.slowstart.completedmaps` default.
pub const SLOWSTART: f64 = 0.05;
/// MapReduce `yarn.app.mapreduce.am.job.reduce.rampup.limit` default: while maps are pending,
/// reduces may take at most this fraction of the job's running tasks.
pub const REDUCE_RAMPUP_LIMIT: f64 = 0.5;

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
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 1,
            core_settings: BTreeMap::new(),
            queue_settings: BTreeMap::new(),
        }
    }
}

/// The engine configuration the simulator hands the core: one queue `root` with the policy and
/// `queue_extra`, inherited by every per-user queue `root.u<N>`; the rack link capacity and
/// block size of the cluster; NetSat fed by the simulator's measured rack loads.
// `..Default::default()` on the protocol structs: other engineers add fields to them, and this
// keeps the simulator compiling when they do.
#[allow(clippy::needless_update)]
pub fn core_config(
    policy: &str,
    cluster: &Cluster,
    extra: &BTreeMap<String, String>,
    queue_extra: &BTreeMap<String, String>,
) -> EngineConfig {
    let mut settings = BTreeMap::new();
    settings.insert(
        "yarn.scheduler.rackwise.netsat.rack-uplink-mbps".to_string(),
        format!(
            "{}",
            cluster.rack_uplink_mbps.min(cluster.rack_downlink_mbps)
        ),
    );
    settings.insert(
        "yarn.scheduler.rackwise.predictor.default-map-input-mb".to_string(),
        format!("{}", cluster.block_mib),
    );
    settings.insert(
        "yarn.scheduler.rackwise.netsat.source".to_string(),
        "feed".to_string(),
    );
    for (k, v) in extra {
        settings.insert(k.clone(), v.clone());
    }
    EngineConfig {
        settings,
        queues: vec![QueueSettings {
            queue: "root".to_string(),
            rackwise: Some(
                queue_extra
                    .clone()
                    .into_iter()
                    .chain([("policy".to_string(), policy.to_string())])
                    .collect(),
            ),
            ..Default::default()
        }],
        source: "simulated fair-scheduler.xml".to_string(),
        ..Default::default()
    }
}

/// Builds the core engine for a policy name; the core's own configuration error otherwise.
pub fn core_engine(
    policy: &str,
    cluster: &Cluster,
    extra: &BTreeMap<String, String>,
    queue_extra: &BTreeMap<String, String>,
) -> Result<Engine, CoreError> {
    Engine::new(&core_config(policy, cluster, extra, queue_extra))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Arrive(u32),
    AmReady(u32),
    MapCpuDone(u32, u32),
    ReduceCpuDone(u32, u32),
    FlowDone(u32, u64),
    NetTick,
    Sample,
    Heartbeat(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hb {
    None,
    Scheduled,
    Idle,
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
}

struct ReduceTask {
    node: u32,
    rack: u32,
    container: u32,
    local_flow: Option<FlowId>,
    remote_flow: Option<FlowId>,
    links_stale: bool,
    shuffling: bool,
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

const OWN_MAP_READ: u64 = 0;
const OWN_RED_LOCAL: u64 = 1;
const OWN_RED_REMOTE: u64 = 2;
const OWN_MAP_REPL: u64 = 3;
const OWN_RED_REPL: u64 = 4;

fn owner(kind: u64, job: u32, task: u32) -> u64 {
    (kind << 60) | ((job as u64) << 32) | task as u64
}

fn unowner(tag: u64) -> (u64, u32, u32) {
    (tag >> 60, ((tag >> 32) & 0x0FFF_FFFF) as u32, tag as u32)
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

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    fn link_out(&self, node: u32) -> LinkId {
        node
    }
    fn link_in(&self, node: u32) -> LinkId {
        self.nodes.len() as u32 + node
    }
    fn link_up(&self, rack: u32) -> LinkId {
        2 * self.nodes.len() as u32 + rack
    }
    fn link_down(&self, rack: u32) -> LinkId {
        2 * self.nodes.len() as u32 + self.cluster.racks as u32 + rack
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

    // ---- fair-share bookkeeping ------------------------------------------------------------

    fn fs_remove(&mut self, j: u32) {
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

    fn fs_insert(&mut self, j: u32) {
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

    fn mark_asks(&mut self, j: u32) {
        if self.engine.is_some()
            && !self.jobs[j as usize].asks_dirty
            && !self.jobs[j as usize].stats_dirty
        {
            self.dirty_jobs.push(j);
        }
        self.jobs[j as usize].asks_dirty = true;
    }

    fn mark_stats(&mut self, j: u32) {
        if self.engine.is_some()
            && !self.jobs[j as usize].asks_dirty
            && !self.jobs[j as usize].stats_dirty
        {
            self.dirty_jobs.push(j);
        }
        self.jobs[j as usize].stats_dirty = true;
    }

    // ---- heartbeats --------------------------------------------------------------------------

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

    fn wake(&mut self, node: u32) {
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

    fn demand_appeared(&mut self) {
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

    // ---- the offer ----------------------------------------------------------------------------

    fn offer(&mut self, node: u32) {
        self.counters.offers += 1;
        self.offer_seq += 1;
        match self.policy {
            Policy::Fifo => self.offer_fifo(node),
            Policy::Fair => self.offer_fair(node, false, None),
            Policy::Delay => self.offer_fair(node, true, None),
            Policy::Core(_) => {
                let plan = self.ask_core(node);
                self.offer_fair(node, false, Some(plan));
            }
        }
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

    /// `RackwiseAppAttempt.satisfiable`: the app still has an ask at that priority at that
    /// locality on this node.
    fn satisfiable(&self, entry: &PlanEntryLite, node: u32, rack: u32) -> bool {
        mapreduce::satisfiable(self.best_locality(entry, node, rack), entry.locality)
    }

    /// The closest locality at which the entry's app has an ask at the entry's priority on this
    /// node; `None` without one.
    fn best_locality(&self, entry: &PlanEntryLite, node: u32, rack: u32) -> Option<Locality> {
        let job = self.jobs.get(entry.job as usize)?;
        if job.phase == JobPhase::Done {
            return None;
        }
        let any = |pending: bool| pending.then_some(Locality::OffSwitch);
        match entry.priority {
            PRIORITY_AM => any(job.am_pending),
            PRIORITY_REDUCE => any(job.pending_reduces > 0),
            PRIORITY_MAP => {
                if job.host_count.get(&node).is_some_and(|c| *c > 0) {
                    Some(Locality::NodeLocal)
                } else if job.rack_count.get(&rack).is_some_and(|c| *c > 0) {
                    Some(Locality::RackLocal)
                } else {
                    any(job.pending_maps > 0)
                }
            }
            _ => None,
        }
    }

    /// One call of the core: the events since the last offer, the changed ask rows and job
    /// counters (as `attemptScheduling` sends them), then the node.
    fn ask_core(&mut self, node: u32) -> OfferPlan {
        let mut events = std::mem::take(&mut self.core_events);
        let dirty = std::mem::take(&mut self.dirty_jobs);
        for &j in &dirty {
            if self.jobs[j as usize].stats_dirty {
                self.jobs[j as usize].stats_dirty = false;
                if self.jobs[j as usize].phase != JobPhase::Done {
                    events.push(self.job_stats(j));
                }
            }
        }
        for &j in &dirty {
            if self.jobs[j as usize].asks_dirty {
                self.jobs[j as usize].asks_dirty = false;
                if self.jobs[j as usize].phase != JobPhase::Done {
                    let rows = self.changed_ask_rows(j);
                    if !rows.is_empty() {
                        events.push(Event::AsksChanged {
                            app: self.app_ids[j as usize].clone(),
                            rows,
                        });
                    }
                }
            }
        }
        let request = OfferRequest {
            now_ms: self.now,
            events,
            node: NodeOffer {
                node: self.node_ids[node as usize].clone(),
                unallocated: self.node_resources(self.nodes[node as usize].free),
                utilization: None,
            },
        };
        // By value: the core keeps the ask tables instead of cloning them (the shim's JNI layer
        // decodes into owned values too).
        let started = Instant::now();
        let response = self
            .engine
            .as_mut()
            .expect("core policy has an engine")
            .offer(request);
        self.counters.core_time += started.elapsed();
        let mut plan = OfferPlan::default();
        for queue in &response.plan.queues {
            let Some(user) = queue
                .queue
                .strip_prefix("root.u")
                .and_then(|u| u.parse::<u32>().ok())
            else {
                continue;
            };
            for app in &queue.steered {
                if let Some(j) = parse_app(app) {
                    if let Some(job) = self.jobs.get_mut(j as usize) {
                        job.steered_stamp = self.offer_seq;
                    }
                }
            }
            let start = plan.entries.len();
            for entry in &queue.entries {
                if let Some(j) = parse_app(&entry.app) {
                    plan.entries.push(PlanEntryLite {
                        job: j,
                        priority: entry.priority.0,
                        locality: entry.locality,
                        failed: false,
                    });
                }
            }
            plan.queues.push((user, start, plan.entries.len()));
        }
        plan
    }

    fn job_stats(&self, j: u32) -> Event {
        let job = &self.jobs[j as usize];
        Event::JobStats {
            app: self.app_ids[j as usize].clone(),
            maps_total: job.maps_total,
            maps_completed: job.maps_done,
            reduces_total: job.reduces_total,
            map_input_bytes: (job.input_per_map * job.maps_done as f64) as u64,
            map_output_bytes: (job.shuffle_per_map * job.maps_done as f64) as u64,
        }
    }

    /// The app's whole outstanding ask table, as the shim reports it.
    /// The job's ask rows that changed since they were last sent, in the order AM, reduce,
    /// map. A map row with maps pending is always sent: its locations move with every
    /// allocation even where its count would not tell.
    fn changed_ask_rows(&mut self, j: u32) -> Vec<Ask> {
        let resources = self.node_resources(1);
        let job = &mut self.jobs[j as usize];
        let current = [job.am_pending as u32, job.pending_reduces, job.pending_maps];
        let mut rows = Vec::new();
        for (row, priority) in [PRIORITY_AM, PRIORITY_REDUCE, PRIORITY_MAP]
            .into_iter()
            .enumerate()
        {
            let any = current[row];
            let is_map_row = priority == PRIORITY_MAP;
            if any == job.reported_any[row] && !(is_map_row && any > 0) {
                continue;
            }
            job.reported_any[row] = any;
            let located = is_map_row && any > 0;
            rows.push(Ask {
                priority: Priority(priority),
                any,
                resources,
                racks: if located {
                    job.ask_racks.clone()
                } else {
                    BTreeMap::new()
                },
                hosts: if located {
                    job.ask_hosts.clone()
                } else {
                    BTreeMap::new()
                },
            });
        }
        rows
    }

    // ---- allocation ---------------------------------------------------------------------------

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

    fn release(&mut self, j: u32, node: u32, container: u32) {
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

    /// The MR AM's reduce ramp-up (`RMContainerAllocator.scheduleReduces`): while maps are
    /// still pending, the job's reduces (running and asked) stay within
    /// `REDUCE_RAMPUP_LIMIT` of its running tasks (at least one), so reduces waiting for map
    /// output can never hold every container its maps need; pending reduce asks beyond the
    /// limit are withdrawn (ramp-down). Once every map is placed, all reduces are asked.
    fn ramp_reduces(&mut self, j: u32) {
        let job = &self.jobs[j as usize];
        if !job.reduces_requested || job.phase == JobPhase::Done {
            return;
        }
        let started = job.reduces.len() as u32;
        let unstarted = job.reduces_total - started;
        let pending = if job.pending_maps == 0 {
            unstarted
        } else {
            // Running tasks: every container of the job but its AM.
            let running_reduces = started - job.reduces_done;
            let running_tasks = job.running.saturating_sub(1);
            let cap = ((REDUCE_RAMPUP_LIMIT * running_tasks as f64) as u32).max(1);
            cap.saturating_sub(running_reduces).min(unstarted)
        };
        if pending == job.pending_reduces {
            return;
        }
        self.fs_remove(j);
        self.jobs[j as usize].pending_reduces = pending;
        self.fs_insert(j);
        self.mark_asks(j);
    }

    /// The MR AM's choice of which map runs in a container: one with data on the node, else on
    /// the rack, else any (`RMContainerAllocator.assignMapsWithLocality`).
    fn take_map(&mut self, j: u32, node: u32, locality: Locality) -> u32 {
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
        let task = &mut job.maps[m as usize];
        task.assigned = true;
        let replicas = task.replicas;
        let copies = self.cluster.replication as usize;
        let mut racks_seen = [u32::MAX; 3];
        for (i, &replica) in replicas.iter().take(copies).enumerate() {
            if let Some(c) = job.host_count.get_mut(&replica) {
                *c -= 1;
                take_split(&mut job.ask_hosts, &self.hosts[replica as usize]);
            }
            let r = self.nodes[replica as usize].rack;
            if !racks_seen[..i].contains(&r) {
                if let Some(c) = job.rack_count.get_mut(&r) {
                    *c -= 1;
                    take_split(&mut job.ask_racks, &self.rack_names[r as usize]);
                }
            }
            racks_seen[i] = r;
        }
        job.pending_maps -= 1;
        m
    }

    // ---- job lifecycle ------------------------------------------------------------------------

    fn arrive(&mut self, j: u32) {
        let spec = &self.specs[j as usize];
        if self.engine.is_some() {
            self.core_events.push(Event::AppAdded {
                app: self.app_ids[j as usize].clone(),
                name: spec.name.clone(),
                user: format!("u{}", spec.user),
                queue: self.queues[spec.user].clone(),
                app_type: "MAPREDUCE".to_string(),
                tags: vec![],
                submit_ms: spec.submit_ms,
            });
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

    /// The AM registered: it places the input blocks' replicas as HDFS did when the input was
    /// written, and asks for every map with its block locations.
    fn am_ready(&mut self, j: u32) {
        let n = self.nodes.len();
        let racks = self.cluster.racks;
        let per_rack = self.cluster.nodes_per_rack;
        let copies = self.cluster.replication as usize;
        let maps_total = self.jobs[j as usize].maps_total;
        let mut maps = Vec::with_capacity(maps_total as usize);
        let mut by_host: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut by_rack: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut host_count: BTreeMap<u32, u32> = BTreeMap::new();
        let mut rack_count: BTreeMap<u32, u32> = BTreeMap::new();
        for m in 0..maps_total {
            let replicas = hdfs_replicas(&mut self.rng, n, racks, per_rack);
            let mut racks_seen = [u32::MAX; 3];
            for (i, &replica) in replicas.iter().take(copies).enumerate() {
                by_host.entry(replica).or_default().push(m);
                *host_count.entry(replica).or_insert(0) += 1;
                let r = (replica as usize / per_rack) as u32;
                if !racks_seen[..i].contains(&r) {
                    by_rack.entry(r).or_default().push(m);
                    *rack_count.entry(r).or_insert(0) += 1;
                }
                racks_seen[i] = r;
            }
            maps.push(MapTask {
                replicas,
                assigned: false,
                node: 0,
                container: 0,
            });
        }
        let ask_hosts = by_name(&host_count, &self.hosts);
        let ask_racks = by_name(&rack_count, &self.rack_names);
        self.fs_remove(j);
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        job.phase = JobPhase::Running;
        job.maps = maps;
        // Popped from the end: reverse so that maps start in index order.
        for list in by_host.values_mut().chain(by_rack.values_mut()) {
            list.reverse();
        }
        job.by_host = by_host;
        job.by_rack = by_rack;
        job.any = (0..maps_total).rev().collect();
        job.host_count = host_count;
        job.rack_count = rack_count;
        job.ask_hosts = ask_hosts;
        job.ask_racks = ask_racks;
        job.pending_maps = maps_total;
        job.output_by_rack = vec![0.0; racks];
        job.allowed = Locality::NodeLocal;
        job.allowed_since = now;
        self.fs_insert(j);
        self.mark_asks(j);
        self.mark_stats(j);
    }

    fn start_map(&mut self, j: u32, m: u32, node: u32, container: u32, locality: Locality) {
        let job = &mut self.jobs[j as usize];
        job.maps[m as usize].node = node;
        job.maps[m as usize].container = container;
        let input = job.input_per_map;
        if locality == Locality::NodeLocal || input <= 0.0 {
            self.map_compute(j, m);
            return;
        }
        // Read the split from a replica on this rack if there is one, else from the first.
        let rack = self.nodes[node as usize].rack;
        let replicas = self.jobs[j as usize].maps[m as usize].replicas;
        let copies = self.cluster.replication as usize;
        let source = replicas
            .iter()
            .take(copies)
            .copied()
            .find(|r| self.nodes[*r as usize].rack == rack)
            .unwrap_or(replicas[0]);
        let src_rack = self.nodes[source as usize].rack;
        let mut links = vec![(self.link_out(source), 1.0), (self.link_in(node), 1.0)];
        if src_rack != rack {
            links.push((self.link_up(src_rack), 1.0));
            links.push((self.link_down(rack), 1.0));
        }
        self.add_flow(input, &links, owner(OWN_MAP_READ, j, m));
    }

    /// The map's CPU/disk phase: launch overhead, read and map its split, spill its output
    /// (or, for a map-only job, write its output's first replica).
    fn map_compute(&mut self, j: u32, m: u32) {
        let job = &self.jobs[j as usize];
        let node = job.maps[m as usize].node;
        let c = self.cluster;
        let speed = self.nodes[node as usize].speed;
        let ms = (c.task_overhead_s * 1000.0
            + job.input_per_map / Cluster::mib_per_s_to_bytes_per_ms(c.map_mib_per_s)
            + job.shuffle_per_map / Cluster::mib_per_s_to_bytes_per_ms(c.spill_mib_per_s)
            + job.output_per_map / Cluster::mib_per_s_to_bytes_per_ms(c.write_mib_per_s))
            / speed;
        self.push(self.now + ms.round() as u64, Ev::MapCpuDone(j, m));
    }

    fn map_cpu_done(&mut self, j: u32, m: u32) {
        let output = self.jobs[j as usize].output_per_map;
        if output > 0.0 && self.cluster.replication > 1 {
            let node = self.jobs[j as usize].maps[m as usize].node;
            let links = self.replication_links(node);
            self.add_flow(output, &links, owner(OWN_MAP_REPL, j, m));
        } else {
            self.map_done(j, m);
        }
    }

    fn map_done(&mut self, j: u32, m: u32) {
        let (node, container) = {
            let task = &self.jobs[j as usize].maps[m as usize];
            (task.node, task.container)
        };
        self.release(j, node, container);
        let rack = self.nodes[node as usize].rack;
        let job = &mut self.jobs[j as usize];
        job.maps_done += 1;
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
        if job.reduces_total > 0
            && !job.reduces_requested
            && done as f64 >= SLOWSTART * total as f64
        {
            self.jobs[j as usize].reduces_requested = true;
            self.ramp_reduces(j);
        }
        if done == total {
            let job = &self.jobs[j as usize];
            if job.reduces_total == 0 {
                self.job_done(j);
            } else {
                let shuffling: Vec<u32> = (0..job.reduces.len() as u32)
                    .filter(|&r| job.reduces[r as usize].shuffling)
                    .collect();
                for r in shuffling {
                    self.maybe_end_shuffle(j, r);
                }
            }
        }
    }

    fn start_reduce(&mut self, j: u32, node: u32, container: u32) {
        let rack = self.nodes[node as usize].rack;
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
        let task = &self.jobs[j as usize].reduces[r as usize];
        let (node, rack) = (task.node, task.rack);
        if src == rack {
            match task.local_flow {
                Some(f) => self.net.extend(f, bytes),
                None => {
                    let links = [(self.link_in(node), 1.0)];
                    let f = self.add_flow(bytes, &links, owner(OWN_RED_LOCAL, j, r));
                    self.jobs[j as usize].reduces[r as usize].local_flow = f;
                }
            }
            return;
        }
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

    /// The bytes a cross-rack fetch flow still has to fetch per source rack.
    fn composition(&mut self, f: FlowId) -> &mut [f64] {
        let racks = self.cluster.racks;
        &mut self.remote_bytes[f * racks..(f + 1) * racks]
    }

    /// The links of a reduce's cross-rack fetch: its NIC and rack downlink fully, each source
    /// rack's uplink by that rack's share of the bytes still to fetch.
    fn remote_links(&self, node: u32, rack: u32, composition: &[f64]) -> Vec<(LinkId, f64)> {
        let total: f64 = composition.iter().sum();
        let mut links = Vec::with_capacity(2 + composition.len());
        links.push((self.link_in(node), 1.0));
        links.push((self.link_down(rack), 1.0));
        for (s, b) in composition.iter().enumerate() {
            if *b > 0.0 && total > 0.0 {
                links.push((self.link_up(s as u32), b / total));
            }
        }
        links
    }

    fn maybe_end_shuffle(&mut self, j: u32, r: u32) {
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
        let ms = (c.task_overhead_s * 1000.0
            + job.shuffle_per_reduce / Cluster::mib_per_s_to_bytes_per_ms(c.merge_mib_per_s)
            + job.output_per_reduce / Cluster::mib_per_s_to_bytes_per_ms(c.write_mib_per_s))
            / self.nodes[node as usize].speed;
        self.push(self.now + ms.round() as u64, Ev::ReduceCpuDone(j, r));
    }

    fn reduce_cpu_done(&mut self, j: u32, r: u32) {
        let output = self.jobs[j as usize].output_per_reduce;
        if output > 0.0 && self.cluster.replication > 1 {
            let node = self.jobs[j as usize].reduces[r as usize].node;
            let links = self.replication_links(node);
            self.add_flow(output, &links, owner(OWN_RED_REPL, j, r));
        } else {
            self.reduce_done(j, r);
        }
    }

    fn reduce_done(&mut self, j: u32, r: u32) {
        let task = &self.jobs[j as usize].reduces[r as usize];
        let (node, container) = (task.node, task.container);
        self.release(j, node, container);
        let job = &mut self.jobs[j as usize];
        job.reduces_done += 1;
        if job.reduces_done == job.reduces_total && job.maps_done == job.maps_total {
            self.job_done(j);
        }
    }

    fn job_done(&mut self, j: u32) {
        let (node, container) = (
            self.jobs[j as usize].am_node,
            self.jobs[j as usize].am_container,
        );
        self.release(j, node, container);
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
        job.reduces = Vec::new();
        self.jobs_done += 1;
        self.collector.job_done(j as usize, self.now);
        if self.engine.is_some() {
            self.core_events.push(Event::AppRemoved {
                app: self.app_ids[j as usize].clone(),
            });
        }
    }

    /// HDFS's write pipeline for a task's output: the first replica on the writer's node, the
    /// second and third on two nodes of one other rack; the pipeline crosses racks once.
    fn replication_links(&mut self, writer: u32) -> [(LinkId, f64); 4] {
        let rack = self.nodes[writer as usize].rack;
        let racks = self.cluster.racks as u32;
        let other = (rack + 1 + self.rng.below(racks as usize - 1) as u32) % racks;
        let target = other * self.cluster.nodes_per_rack as u32
            + self.rng.below(self.cluster.nodes_per_rack) as u32;
        [
            (self.link_out(writer), 1.0),
            (self.link_up(rack), 1.0),
            (self.link_down(other), 1.0),
            (self.link_in(target), 1.0),
        ]
    }

    // ---- network ----------------------------------------------------------------------------

    fn add_flow(&mut self, bytes: f64, links: &[(LinkId, f64)], tag: u64) -> Option<FlowId> {
        let f = self.net.add(self.now, bytes, links, tag);
        // The tick first: a completion is only scheduled up to the next tick, and without one
        // a flow on a sliver of leftover capacity would be scheduled near the end of time.
        if self.net_tick_at.is_none() {
            let at = (self.now / NET_TICK_MS + 1) * NET_TICK_MS;
            self.net_tick_at = Some(at);
            self.push(at, Ev::NetTick);
        }
        self.schedule_flow_done(f);
        Some(f)
    }

    /// If the flow ends before the next re-solve at its current rate, schedule its end.
    fn schedule_flow_done(&mut self, f: FlowId) {
        let rate = self.net.rate(f);
        if rate <= 0.0 {
            return;
        }
        let at = self
            .net
            .updated_ms(f)
            .saturating_add((self.net.remaining(f) / rate).ceil() as u64);
        let Some(next_tick) = self.net_tick_at else {
            return;
        };
        if at <= next_tick {
            let generation = self.net.generation(f);
            self.push(at.max(self.now), Ev::FlowDone(f as u32, generation));
        }
    }

    /// Advances a flow to now and books the bytes it moved.
    fn sync_flow(&mut self, f: FlowId) {
        let moved = self.net.sync(f, self.now);
        if moved <= 0.0 {
            return;
        }
        let (kind, _, _) = unowner(self.net.owner(f));
        let minute = (self.now / 60_000) as usize;
        match kind {
            OWN_MAP_READ => {
                // A split read crosses racks when its path holds the rack links.
                if self.net.links(f).len() == 4 {
                    self.collector.cross_rack(minute, 0.0, moved, 0.0);
                }
            }
            OWN_RED_LOCAL => self.counters.shuffle_fetched += moved,
            OWN_RED_REMOTE => {
                self.counters.shuffle_fetched += moved;
                self.collector.cross_rack(minute, moved, 0.0, 0.0);
                let composition = self.composition(f);
                let total: f64 = composition.iter().sum();
                if total > 0.0 {
                    let keep = ((total - moved) / total).max(0.0);
                    for b in composition.iter_mut() {
                        *b *= keep;
                    }
                }
            }
            _ => self.collector.cross_rack(minute, 0.0, 0.0, moved),
        }
    }

    fn flow_done(&mut self, f: FlowId, generation: u64) {
        if !self.net.is_live(f) || self.net.generation(f) != generation {
            return;
        }
        self.sync_flow(f);
        if self.net.remaining(f) > 0.0 {
            self.schedule_flow_done(f);
            return;
        }
        self.complete_flow(f);
    }

    fn complete_flow(&mut self, f: FlowId) {
        let (kind, j, t) = unowner(self.net.remove(f));
        match kind {
            OWN_MAP_READ => self.map_compute(j, t),
            OWN_MAP_REPL => self.map_done(j, t),
            OWN_RED_REPL => self.reduce_done(j, t),
            OWN_RED_LOCAL => {
                self.jobs[j as usize].reduces[t as usize].local_flow = None;
                self.maybe_end_shuffle(j, t);
            }
            _ => {
                self.jobs[j as usize].reduces[t as usize].remote_flow = None;
                self.composition(f).fill(0.0);
                self.maybe_end_shuffle(j, t);
            }
        }
    }

    fn net_tick(&mut self) {
        // The next tick is known before any flow completes here: a flow started by a
        // completion handler must neither start a second tick chain nor see "no next tick".
        let next = self.now + NET_TICK_MS;
        self.net_tick_at = Some(next);
        let dt = self.now - self.last_booked_ms.min(self.now);
        self.net.book_link_bytes(dt.min(NET_TICK_MS));
        self.last_booked_ms = self.now;
        let mut flows = std::mem::take(&mut self.tick_flows);
        self.net.live_ids(&mut flows);
        for &f in &flows {
            if !self.net.is_live(f) {
                continue;
            }
            self.sync_flow(f);
            if self.net.remaining(f) <= 0.0 {
                self.complete_flow(f);
            }
        }
        if self.net.live_flows() == 0 {
            self.net_tick_at = None;
            self.tick_flows = flows;
            return;
        }
        self.push(next, Ev::NetTick);
        for (j, r) in std::mem::take(&mut self.stale_links) {
            let Some(task) = self.jobs[j as usize].reduces.get_mut(r as usize) else {
                continue;
            };
            task.links_stale = false;
            if let Some(f) = task.remote_flow {
                let (node, rack) = (task.node, task.rack);
                let racks = self.cluster.racks;
                let links =
                    self.remote_links(node, rack, &self.remote_bytes[f * racks..(f + 1) * racks]);
                self.net.set_links(f, &links);
            }
        }
        if self.net.is_dirty() {
            self.net.solve();
        }
        self.net.live_ids(&mut flows);
        for &f in &flows {
            self.schedule_flow_done(f);
        }
        self.tick_flows = flows;
    }

    /// NetSat's measurement, the congestion count and the fairness/utilization samples.
    fn sample(&mut self) {
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

/// HDFS default placement for a block written by a client outside the cluster's DataNodes'
/// racks: a random writer node, then two distinct nodes of one other random rack.
fn hdfs_replicas(rng: &mut Rng, nodes: usize, racks: usize, per_rack: usize) -> [u32; 3] {
    let first = rng.below(nodes);
    if racks < 2 || per_rack < 2 {
        return [first as u32; 3];
    }
    let rack = first / per_rack;
    let other = (rack + 1 + rng.below(racks - 1)) % racks;
    let a = rng.below(per_rack);
    let b = (a + 1 + rng.below(per_rack - 1)) % per_rack;
    [
        first as u32,
        (other * per_rack + a) as u32,
        (other * per_rack + b) as u32,
    ]
}

/// The counts above zero keyed by name (node or rack index to name).
fn by_name<K: Ord + Clone>(counts: &BTreeMap<u32, u32>, names: &[K]) -> BTreeMap<K, u32> {
    counts
        .iter()
        .filter(|(_, c)| **c > 0)
        .map(|(i, c)| (names[*i as usize].clone(), *c))
        .collect()
}

/// Takes one split off `name`'s count in a map ask's table, dropping the name at zero as the
/// shim's tables list only counts above zero.
fn take_split<K: Ord>(counts: &mut BTreeMap<K, u32>, name: &K) {
    if let Some(c) = counts.get_mut(name) {
        *c -= 1;
        if *c == 0 {
            counts.remove(name);
        }
    }
}

fn parse_app(app: &AppId) -> Option<u32> {
    app.0.strip_prefix("app_").and_then(|n| n.parse().ok())
}

#[derive(Debug, Clone, Copy)]
struct PlanEntryLite {
    job: u32,
    priority: i32,
    locality: Locality,
    failed: bool,
}

/// The core's plan for one offer, indexed by user queue.
#[derive(Debug, Default)]
struct OfferPlan {
    entries: Vec<PlanEntryLite>,
    /// Each user queue's range of `entries`, in plan order, searched linearly: a plan has a few
    /// queues, and a map would cost an allocation on every offer.
    queues: Vec<(u32, usize, usize)>,
}

impl OfferPlan {
    /// `OfferPlan.head`: the first entry of the queue not failed in this offer that its app
    /// can still satisfy here.
    fn head(
        &self,
        user: u32,
        satisfiable: impl Fn(&PlanEntryLite) -> bool,
    ) -> Option<(usize, PlanEntryLite)> {
        // The last range of the user's, as a map would have kept.
        let &(_, start, end) = self
            .queues
            .iter()
            .rev()
            .find(|(queue, ..)| *queue == user)?;
        mapreduce::first_satisfiable(self.entries[start..end].iter().copied(), |_, e| {
            !e.failed && satisfiable(e)
        })
        .map(|(i, e)| (start + i, e))
    }
}
