//! The discrete-event simulation: a YARN cluster running MapReduce jobs, scheduled either by a
//! stock baseline (`BASELINES`: fair, delay, fair-fifo, fifo) or by FairScheduler steered by
//! the Rackwise core.
//!
//! Time is in milliseconds. Events sit in one heap ordered by (time, sequence), so equal times
//! resolve in insertion order and a run is a pure function of its inputs and seed. A node is
//! offered only at its NodeManager heartbeat ticks, and only while it has a free container and
//! the cluster has pending demand (no idle heartbeats are simulated). How many containers one
//! heartbeat places follows FairScheduler's `assignmultiple`, `max.assign` and
//! `dynamic.max.assign` (`HeartbeatAssignment`); with several, the RM shim re-evaluates the
//! plan on every `assignContainer` of the same heartbeat, and so does the simulator.
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
mod interference;
mod mr_am;
mod sampling;
mod speculator;
mod transfers;

pub use core_link::{check_core_settings, core_config, core_engine};
pub use core_link::{netsat_label, NETSAT_SOURCE_KEY};
pub use fair_scheduler::{
    HeartbeatAssignment, DELAY_LOCALITY_THRESHOLD_NODE, DELAY_LOCALITY_THRESHOLD_RACK, MAX_AM_SHARE,
};
pub use mr_am::{
    AmOptions, AM_HEARTBEAT_MS, REDUCER_UNCONDITIONAL_PREEMPT_DELAY_MS, REDUCE_PREEMPTION_LIMIT,
    REDUCE_RAMPUP_LIMIT, SLOWSTART,
};
pub use sampling::SAMPLE_MS;
pub use speculator::SpeculatorOptions;
pub use transfers::NET_TICK_MS;

use crate::cluster::Cluster;
use crate::dp_workload::UserAccount;
use crate::metrics::{Collector, PolicyMetrics};
use crate::network::{FlowId, Network};
use crate::oracle::ReduceLaunch;
use crate::rng::Rng;
use crate::workload::JobSpec;
use crate::workload::TaskProfile;
use event_loop::{Ev, Hb, Scheduled};
use mr_am::AmState;
use rackwise_core::mapreduce;
use rackwise_core::protocol::{AppId, Event, Locality, NodeId, RackName, Resources};
pub use rackwise_core::settings::CONGESTION_THRESHOLD;
use rackwise_core::Engine;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;
use std::time::Duration;

/// The MapReduce ApplicationMaster's request priorities the simulated AM asks with, as the
/// core defines them (`rackwise_core::mapreduce`).
pub const PRIORITY_AM: i32 = mapreduce::AM_PRIORITY.0;
pub const PRIORITY_REDUCE: i32 = mapreduce::REDUCE_PRIORITY.0;
pub const PRIORITY_MAP: i32 = mapreduce::MAP_PRIORITY.0;

/// User `user`'s queue, as FairScheduler's user-as-default-queue names it under `root`.
pub fn user_queue(user: usize) -> String {
    format!("root.u{user}")
}

/// The user of a queue `user_queue` named.
fn queue_user(queue: &str) -> Option<u32> {
    queue.strip_prefix("root.u")?.parse().ok()
}

/// Which scheduler drives the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    /// FairScheduler, fair leaf queues, no delay scheduling (Hadoop 3.4's defaults).
    Fair,
    /// FairScheduler with delay scheduling (`locality.threshold.node` and `.rack`).
    Delay,
    /// FairScheduler with FIFO leaf queues (`<schedulingPolicy>fifo`): fair between users,
    /// a user's jobs in submission order.
    FairFifo,
    /// Hadoop's FifoScheduler.
    Fifo,
    /// Hadoop 1's fixed slots under FairScheduler (`fair-M:R`, e.g. `fair-2:2`): per node at
    /// most `maps` map and `reduces` reduce containers, the rest as `fair`. The FRESH paper's
    /// baseline; ApplicationMasters (Hadoop 1 had none) take any free container.
    FairSplit { maps: u32, reduces: u32 },
    /// A Capacity-Scheduler-like setup (the FRESH paper's): one queue per user, a queue's jobs
    /// in submission order, no queue above `CAPACITY_MAX_SHARE` of the cluster's containers;
    /// the least-used queue goes first, as under `fair`.
    Capacity,
    /// A policy of the Rackwise core, by the name its configuration accepts.
    Core(String),
}

/// The stock schedulers the simulator emulates, by the names `Policy::parse` accepts (every
/// other name is a policy of the Rackwise core): every comparison's "best stock" is the best
/// of these.
pub const BASELINES: &[&str] = &["fair", "delay", "fair-fifo", "fifo"];

/// The FRESH paper's baselines as named in help texts (not stock YARN FairScheduler setups, so
/// not among `BASELINES`).
pub const PAPER_BASELINES: &str =
    "fair-M:R (Hadoop 1's fixed slots, e.g. fair-2:2), capacity (FIFO queues of at most 90 %)";

/// The `capacity` baseline's maximum share of the cluster per queue (the paper's 90 %).
pub const CAPACITY_MAX_SHARE: f64 = 0.9;

impl Policy {
    /// Whether the policy is one of the stock `BASELINES` rather than a Rackwise core policy.
    pub fn is_baseline(&self) -> bool {
        !matches!(self, Policy::Core(_))
    }

    /// `fair-M:R` with whole numbers `M, R ≥ 1`.
    fn split(name: &str) -> Option<(u32, u32)> {
        let (maps, reduces) = name.strip_prefix("fair-")?.split_once(':')?;
        let (maps, reduces) = (maps.parse().ok()?, reduces.parse().ok()?);
        (maps > 0 && reduces > 0).then_some((maps, reduces))
    }

    pub fn parse(name: &str) -> Policy {
        match name {
            "fair" => Policy::Fair,
            "delay" => Policy::Delay,
            "fair-fifo" => Policy::FairFifo,
            "fifo" => Policy::Fifo,
            "capacity" => Policy::Capacity,
            other => match Policy::split(other) {
                Some((maps, reduces)) => Policy::FairSplit { maps, reduces },
                None => Policy::Core(other.to_string()),
            },
        }
    }
}

/// Salt of the read-source stream's seed ("READ"), apart from the workload's streams.
const READ_STREAM: u64 = 0x5245_4144;

/// The progress watchdog's default: a run with work pending that neither allocates a container
/// nor completes a task for this long (simulated) stops with an error naming its state.
pub const WATCHDOG_MS: u64 = 30 * 60 * 1000;

#[derive(Debug, Clone)]
pub struct SimOptions {
    pub seed: u64,
    /// Extra `yarn.scheduler.rackwise.*` settings for the core (override the defaults below).
    pub core_settings: BTreeMap<String, String>,
    /// Extra `<rackwise>` children of queue `root` (inherited by every user queue), such as
    /// `starvationWindowMs`: the per-queue policy parameters of `fair-scheduler.xml`.
    pub queue_settings: BTreeMap<String, String>,
    /// How many containers one NodeManager heartbeat may place (every FairScheduler policy).
    pub heartbeat_assignment: HeartbeatAssignment,
    /// `maxAMShare` of every user queue: the share of the queue's instantaneous fair share its
    /// ApplicationMasters may hold; a negative value switches the check off (Hadoop's -1).
    pub max_am_share: f64,
    /// The `delay` baseline's `locality.threshold.node` and `.rack`: missed scheduling
    /// opportunities, as a fraction of the cluster's node count, before relaxing locality.
    pub delay_locality_threshold_node: f64,
    pub delay_locality_threshold_rack: f64,
    /// The progress watchdog's limit in simulated ms (0: off).
    pub watchdog_ms: u64,
    /// Transfers kept off the rack links as if every task were placed where its data is: a
    /// bound, not a model of Hadoop (off by default).
    pub placement_oracle: PlacementOracle,
    /// Every job that reads input is submitted with its true shuffle/input ratio in the
    /// `rackwise.shuffle-ratio` tag, a hint no user could give so exactly: what the core's
    /// policies would do with a perfect predictor, set against the prior they start from
    /// without a hint or history. A bound, not a model (off by default).
    pub oracle_ratio_hints: bool,
    /// Where each job's input was written from: 0, every block from its own random node (a
    /// dataset written by writers spread over the cluster); W > 0, every block from a random
    /// node of W racks chosen for the job (a dataset loaded or produced on W racks). HDFS's
    /// default placement follows either way (`hdfs`).
    pub input_racks: usize,
    /// The MapReduce ApplicationMaster's allocator settings (`mr_am`).
    pub am: AmOptions,
    /// Dynamic Priority accounts by user (a `.dp.json` workload's budgets and spending
    /// schedules), handed to the core as `Account` events; empty for other workloads, and
    /// unused by the baselines.
    pub accounts: Vec<UserAccount>,
}

impl SimOptions {
    /// Rejects values Hadoop would reject (or that have no meaning), naming the option.
    pub fn validate(&self) -> Result<(), String> {
        let share = self.max_am_share;
        if !(share.is_finite() && (share == -1.0 || (0.0..=1.0).contains(&share))) {
            return Err(format!(
                "max_am_share {share}: must be within 0..=1, or -1 to switch the check off"
            ));
        }
        for (name, value) in [
            (
                "delay_locality_threshold_node",
                self.delay_locality_threshold_node,
            ),
            (
                "delay_locality_threshold_rack",
                self.delay_locality_threshold_rack,
            ),
        ] {
            if !value.is_finite() {
                return Err(format!("{name} {value}: must be a finite number"));
            }
        }
        self.placement_oracle.validate()?;
        self.am.validate()
    }
}

/// The placement oracle: a run that keeps a kind of transfer off the rack links bounds from
/// above what any placement of maps and reduces could gain on that kind, under the same job
/// order. Output replication always keeps its cross-rack path: HDFS's default placement puts a
/// replica off the writer's rack whatever the scheduler does. A run's JSON names what it kept
/// off (`model.placement_oracle`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlacementOracle {
    /// Every map reads its split as from its own node's disk: no flow at all.
    pub local_reads: bool,
    /// This share (0 to 1) of every partition a reduce fetches from another rack takes a
    /// rack-local fetch's path instead, the reduce's NIC alone: 1 is no cross-rack shuffle at
    /// all, a share in between is a placement that cuts the cross-rack shuffle by that share.
    pub local_shuffle_share: f64,
}

impl PlacementOracle {
    /// A local shuffle share is a share: within 0..=1.
    pub fn check_share(share: f64) -> Result<f64, String> {
        if (0.0..=1.0).contains(&share) {
            Ok(share)
        } else {
            Err(format!("{share}: must be within 0..=1"))
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        Self::check_share(self.local_shuffle_share)
            .map(|_| ())
            .map_err(|reason| format!("placement oracle local_shuffle_share {reason}"))
    }
}

/// The `rackwise.shuffle-ratio` tag carrying a job's true shuffle/input ratio
/// (`SimOptions::oracle_ratio_hints`); `None` for a job whose maps read no input, which has no
/// ratio to state.
pub fn true_ratio_hint(spec: &JobSpec) -> Option<String> {
    (spec.input_bytes > 0).then(|| {
        rackwise_core::predictor::hint_tag(spec.shuffle_bytes as f64 / spec.input_bytes as f64)
    })
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            seed: 1,
            core_settings: BTreeMap::new(),
            queue_settings: BTreeMap::new(),
            heartbeat_assignment: HeartbeatAssignment::default(),
            max_am_share: MAX_AM_SHARE,
            delay_locality_threshold_node: DELAY_LOCALITY_THRESHOLD_NODE,
            delay_locality_threshold_rack: DELAY_LOCALITY_THRESHOLD_RACK,
            watchdog_ms: WATCHDOG_MS,
            placement_oracle: PlacementOracle::default(),
            oracle_ratio_hints: false,
            input_racks: 0,
            am: AmOptions::default(),
            accounts: Vec::new(),
        }
    }
}

struct NodeState {
    rack: u32,
    free: u32,
    /// Map and reduce containers running (what `fair-M:R` caps).
    maps: u32,
    reduces: u32,
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
    /// The task's other attempt: the speculative one of an original, or the original of a
    /// speculative one (`speculator`). At most one per task.
    twin: Option<u32>,
    /// When the attempt started in its container (`None` before, or if it never did).
    launched_ms: Option<u64>,
    /// How long the attempt takes as planned at its launch: what the AM's runtime estimator
    /// extrapolates from its progress.
    planned_ms: u64,
    /// The attempt ended: it finished its task (`won`) or was killed for its twin.
    finished: bool,
    won: bool,
    /// Its split read or output write flow while one runs (stopped when it is killed).
    flow: Option<FlowId>,
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
    /// Where it started and which racks had a free container then, for the oracles.
    launch: ReduceLaunch,
}

impl MapTask {
    /// An attempt not yet asked for, of the split stored on `replicas`.
    fn new(replicas: [u32; 3]) -> MapTask {
        MapTask {
            replicas,
            assigned: false,
            node: 0,
            container: 0,
            twin: None,
            launched_ms: None,
            planned_ms: 0,
            finished: false,
            won: false,
            flow: None,
            inputs_left: 0,
        }
    }

    /// Started in its container and not ended.
    fn running(&self) -> bool {
        self.launched_ms.is_some() && !self.finished
    }
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
    /// A profiled job's task times, replacing the byte-driven compute.
    task_s: Option<TaskProfile>,
    /// Container-time the job has held (ms), up to `busy_since_ms`: FRESH's overall resource
    /// use (the paper's Eq. 1, here with its ApplicationMaster's container).
    busy_ms: u64,
    busy_since_ms: u64,
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
    /// Whether the core holds the map row with its locations as last sent; if so, the changes
    /// of `ask_hosts` and `ask_racks` since then, in order, go to it instead of the tables.
    core_holds_map_row: bool,
    hosts_moved: Vec<(Arc<str>, i32)>,
    racks_moved: Vec<(RackName, i32)>,
    pending_maps: u32,
    maps_done: u32,
    reduces_requested: bool,
    pending_reduces: u32,
    reduces: Vec<ReduceTask>,
    reduces_done: u32,
    output_by_rack: Vec<f64>,
    /// Per map launch, the job's maps running with it (itself included), and the launches of
    /// its reduce attempts that finished: what the cross-rack oracles need (`crate::oracle`).
    maps_running_at_launch: Vec<u32>,
    finished_reduces: Vec<ReduceLaunch>,
    /// Reduce attempts killed by the AM's reducer preemption (their tasks run again).
    reduces_killed: u32,
    /// Maps launched in their containers and not done (the AM's assigned maps).
    maps_running: u32,
    /// Run times (ms) of the job's finished maps, summed: the speculator's mean.
    map_runtime_sum_ms: u64,
    /// The AM's side of its asks (`mr_am`): what it has sent or will send on its next
    /// heartbeat, the containers granted that it has not received yet, and its heartbeat.
    am: AmState,
    running: u32,
    am_pending: bool,
    /// Delay scheduling: allowed locality of the map key, and the scheduling opportunities it
    /// missed since the level last changed: `missed` counted on offers of nodes with a free
    /// container, plus those of full nodes' heartbeats accrued since `full_node_base`.
    allowed: Locality,
    missed: f64,
    full_node_base: f64,
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
    /// Wall time in the core, estimated from a sample of its calls.
    pub core_time: Duration,
    pub events: u64,
    pub containers: u64,
    pub shuffle_produced: f64,
    pub shuffle_fetched: f64,
    pub max_node_overallocation: u32,
    /// The most events ever queued for the core between two of its calls.
    pub peak_core_events: usize,
    /// Where the core's NetSat took rack loads from (`netsat_label`).
    pub netsat: &'static str,
    /// Reduce attempts killed by the AM's reducer preemption.
    pub reduces_preempted: u64,
    /// Shuffle bytes that killed reduce attempts had fetched: fetched again by their reruns,
    /// and not counted in `shuffle_fetched`.
    pub shuffle_refetched: f64,
    /// Speculative map attempts the AMs' speculators added, and of them those that finished
    /// their task first.
    pub speculative_maps: u64,
    pub speculative_maps_won: u64,
}

/// The whole simulated world for one policy.
pub struct Sim<'a> {
    cluster: &'a Cluster,
    specs: &'a [JobSpec],
    policy: Policy,
    engine: Option<Engine>,
    now: u64,
    seq: u64,
    heap: BinaryHeap<Scheduled>,
    rng: Rng,
    /// Which replica each non-local map reads: a stream of its own, so that the blocks,
    /// output pipelines and task times drawn from `rng` stay those of the same seed.
    read_rng: Rng,
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
    /// Users with pending demand, by `demand_key` (usage per weight), then user.
    users_demand: BTreeSet<(u64, u32)>,
    /// Each user queue's FairScheduler weight as the core last set it (a Dynamic Priority
    /// market's shares); `None` while every queue has the configured weight 1.
    weights: Option<Vec<f64>>,
    /// Spending changes not yet sent to the core: (time ms, user, rate), latest first.
    spending_changes: Vec<(u64, u32, f64)>,
    /// Each user's starting budget, for a spending change before the core knows the account.
    initial_budgets: Vec<f64>,
    user_apps: Vec<BTreeSet<(u32, u32)>>,
    /// `offer_fair`'s buffers for the users and apps it walks.
    fair_users: Vec<u32>,
    fair_apps: Vec<u32>,
    user_running: Vec<u32>,
    user_pending: Vec<u32>,
    /// Each job's place in submission order (time, then index), FIFO leaf queues' order.
    submit_rank: Vec<u32>,
    fifo: BTreeSet<u32>,
    core_events: Vec<Event>,
    /// The latest rack load measured per rack and not yet sent (a `feed` run only): a core not
    /// being called needs only the newest, so they are coalesced instead of queued.
    rack_loads: Vec<Option<(f64, u64)>>,
    netsat_feed: bool,
    dirty_jobs: Vec<u32>,
    heartbeat_assignment: HeartbeatAssignment,
    max_am_share: f64,
    locality_thresholds: (f64, f64),
    watchdog_ms: u64,
    /// The last time a container was allocated or a task completed.
    last_progress_ms: u64,
    /// Per user queue: ApplicationMasters holding a container.
    user_ams: Vec<u32>,
    /// Nodes with no free container, and the heartbeats such nodes had until
    /// `full_nodes_since` (each a missed opportunity for every app with maps pending).
    full_nodes: u32,
    full_node_heartbeats: f64,
    full_nodes_since: u64,
    next_container: u32,
    offer_seq: u64,
    jobs_done: usize,
    running_containers: u64,
    /// Users (queues) with an app that arrived and is not done: FairScheduler's active
    /// queues, among which the fair share, hence each AM's headroom, is divided.
    user_active_apps: Vec<u32>,
    active_queues: u32,
    am_options: AmOptions,
    placement_oracle: PlacementOracle,
    oracle_ratio_hints: bool,
    input_racks: usize,
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
        options.validate()?;
        if cluster.replication > 3 {
            return Err("replication above 3 is not modelled".into());
        }
        if options.input_racks > cluster.racks {
            return Err(format!(
                "input_racks {}: the cluster has {} racks",
                options.input_racks, cluster.racks
            ));
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
                maps: 0,
                reduces: 0,
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
                    task_s: s.task_s,
                    busy_ms: 0,
                    busy_since_ms: 0,
                    maps: Vec::new(),
                    by_host: BTreeMap::new(),
                    by_rack: BTreeMap::new(),
                    any: Vec::new(),
                    host_count: BTreeMap::new(),
                    rack_count: BTreeMap::new(),
                    ask_hosts: BTreeMap::new(),
                    ask_racks: BTreeMap::new(),
                    core_holds_map_row: false,
                    hosts_moved: Vec::new(),
                    racks_moved: Vec::new(),
                    pending_maps: 0,
                    maps_done: 0,
                    reduces_requested: false,
                    pending_reduces: 0,
                    reduces: Vec::new(),
                    reduces_done: 0,
                    output_by_rack: Vec::new(),
                    maps_running_at_launch: Vec::new(),
                    finished_reduces: Vec::new(),
                    reduces_killed: 0,
                    maps_running: 0,
                    map_runtime_sum_ms: 0,
                    am: AmState::default(),
                    running: 0,
                    am_pending: false,
                    allowed: Locality::NodeLocal,
                    missed: 0.0,
                    full_node_base: 0.0,
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
            read_rng: Rng::new(options.seed ^ READ_STREAM),
            nodes,
            node_ids,
            hosts,
            rack_names,
            jobs,
            app_ids: (0..specs.len())
                .map(|j| AppId(format!("app_{j}").into()))
                .collect(),
            queues: (0..users).map(user_queue).collect(),
            net: Network::new(caps),
            net_tick_at: None,
            stale_links: Vec::new(),
            tick_flows: Vec::new(),
            remote_bytes: Vec::new(),
            last_booked_ms: 0,
            idle: Vec::new(),
            total_pending: 0,
            users_demand: BTreeSet::new(),
            weights: None,
            spending_changes: Vec::new(),
            initial_budgets: options.accounts.iter().map(|a| a.budget).collect(),
            user_apps: vec![BTreeSet::new(); users],
            fair_users: Vec::new(),
            fair_apps: Vec::new(),
            user_running: vec![0; users],
            user_pending: vec![0; users],
            submit_rank: submission_ranks(specs),
            fifo: BTreeSet::new(),
            core_events: Vec::new(),
            rack_loads: vec![None; r],
            netsat_feed: core_link::netsat_feed(&options.core_settings),
            dirty_jobs: Vec::new(),
            heartbeat_assignment: options.heartbeat_assignment,
            max_am_share: options.max_am_share,
            locality_thresholds: (
                options.delay_locality_threshold_node,
                options.delay_locality_threshold_rack,
            ),
            watchdog_ms: options.watchdog_ms,
            last_progress_ms: 0,
            user_ams: vec![0; users],
            full_nodes: 0,
            full_node_heartbeats: 0.0,
            full_nodes_since: 0,
            next_container: 0,
            offer_seq: 0,
            jobs_done: 0,
            running_containers: 0,
            user_active_apps: vec![0; users],
            active_queues: 0,
            am_options: options.am.clone(),
            placement_oracle: options.placement_oracle,
            oracle_ratio_hints: options.oracle_ratio_hints,
            input_racks: options.input_racks,
            collector: Collector::new(cluster, specs, users),
            counters: RunCounters {
                netsat: netsat_label(&options.core_settings),
                ..RunCounters::default()
            },
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
                // A heterogeneous cluster's operator knows each host's relative CPU speed (a
                // host-class file or an agent's feed): the core gets it as the host's figure.
                if cluster.is_heterogeneous() {
                    sim.core_events.push(Event::HostFigures {
                        host: sim.hosts[i].to_string(),
                        time_ms: 0,
                        cross_rack_mbps: None,
                        disk_utilization: None,
                        network_utilization: None,
                        cpu_speed: Some(cluster.speed(i)),
                    });
                }
            }
        }
        if sim.engine.is_some() {
            sim.open_accounts(&options.accounts);
        }
        for (j, spec) in specs.iter().enumerate() {
            sim.push(spec.submit_ms, Ev::Arrive(j as u32));
        }
        sim.schedule_interference();
        for i in 0..n {
            sim.nodes[i].hb = Hb::Idle;
            sim.idle.push(i as u32);
        }
        Ok(sim)
    }

    /// Whether the run's core takes rack loads from a host agent's feed (`RackLoad` events).
    fn feeds_rack_loads(&self) -> bool {
        self.engine.is_some() && self.netsat_feed
    }

    fn node_resources(&self, containers: u32) -> Resources {
        Resources {
            memory_mb: containers as u64 * self.cluster.container_mb,
            vcores: containers,
        }
    }
}

fn submission_ranks(specs: &[JobSpec]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..specs.len()).collect();
    order.sort_by_key(|&j| (specs[j].submit_ms, j));
    let mut rank = vec![0; specs.len()];
    for (r, j) in order.into_iter().enumerate() {
        rank[j] = r as u32;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_m_r_names_the_split_baseline_and_nothing_else() {
        assert_eq!(
            Policy::parse("fair-2:2"),
            Policy::FairSplit {
                maps: 2,
                reduces: 2
            }
        );
        assert_eq!(
            Policy::parse("fair-1:3"),
            Policy::FairSplit {
                maps: 1,
                reduces: 3
            }
        );
        for other in ["fair-0:4", "fair-2:x", "fair-2", "fair-fifo:1", "fair2:2"] {
            assert!(
                matches!(Policy::parse(other), Policy::Core(_) | Policy::FairFifo),
                "{other}"
            );
        }
        assert!(Policy::parse("fair-3:1").is_baseline());
        assert_eq!(Policy::parse("capacity"), Policy::Capacity);
    }
}
