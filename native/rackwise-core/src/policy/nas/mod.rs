//! NAS, the network-aware scheduler (paper Algorithms 1–4; the choices it leaves open follow).
//!
//! * **Dispatcher** (Algorithm 1): maps are ranked by MTS; reduces by CA-RTS when the offered
//!   node's rack is below the congestion threshold, else by CR-RTS.
//! * **MTS** (Algorithm 2) keeps the predicted map output on each node under a TrafficThreshold
//!   `m · ΣS_i / ΣK_i` (the mean shuffle one node produces per wave). A user (a steered queue)
//!   gets a data-local map that fits the node's remaining shuffle space; without one it is
//!   skipped until its skip bound is reached, then it takes a fitting non-local map by category
//!   and MapCost, else the smallest-output map.
//! * **CA-RTS** (Algorithm 3) places a job's reduces on racks in proportion to where its map
//!   output sits (`ReduceNum = TotalReduces × MapOutputPortion`), in six categories. With
//!   `reduceRackWaitMs` above 0 it also keeps a reduce off a rack where its job reached
//!   ReduceNum in whole reduces and has less than half the output of its busiest rack, for at
//!   most that long.
//! * **CR-RTS** (Algorithm 4) lets only shuffle-light reduces onto a congested rack until the
//!   user's skip bound, tags the heavy and medium reduces it holds back as delayed (CA-RTS
//!   serves them first once the rack clears), and makes MTS hold heavy and medium maps on the
//!   rack while it stays congested.
//!
//! How the paper maps onto YARN, and the choices it leaves open (choices 22–25 in docs/design-choices.md):
//!
//! * Congestion (22) is NetSat's per-rack signal for the offered node's rack (model estimate or
//!   operator feed) against `netsat.threshold`, 0.8 by default: the paper's experiments used
//!   80 % (its text's example says 90 %). Keeping one threshold means a queue switched between
//!   `nas` and `shufflewatcher` sees the same racks as congested.
//! * The map completion threshold for reduces (23) is MapReduce's own slow-start
//!   (`mapreduce.job.reduce.slowstart.completedmaps`, 5 %): the ApplicationMaster asks for
//!   reduces only past it, so every reduce ask CA-RTS sees is eligible.
//! * TrafficThreshold (24) is recomputed every `nas.traffic-threshold-interval-ms` (5 s) over
//!   all running MapReduce jobs: `S_i` = predicted map output of the job, `K_i` = its maps;
//!   `m` = `nas.containers-per-node`, or else the node's capacity over the mean map container
//!   the jobs ask for. `nas.traffic-threshold-mb` replaces it, as the paper lets operators do.
//! * Skips (25) are bounded by a wait, `maxWaitMs` = 5 s as on the paper's real cluster, or by
//!   `maxSkips` offers as in its simulation. The core plans every steered queue on every offer
//!   without knowing which queue FairScheduler will visit, so a skip is counted per offer on
//!   which MTS (CR-RTS) declines the queue; the wait is the robust default for that reason.
//!   The map skips of a queue reset when it gets a node-local map (the paper's line 4; like
//!   delay scheduling, a relaxed user keeps relaxing until then), the reduce skips when the
//!   queue is planned on an uncongested rack (so a congestion episode costs the user one wait,
//!   not one per heavy reduce).
//! * MTS's wait follows what giving up costs (`mapWait=read-cost`): a user waits for a
//!   data-local map as long as maps placed off their data have lately taken longer than their
//!   job's data-local maps (a moving mean over the cluster's finished maps), never less than
//!   `maxWaitMs`. Waiting no longer than the loss it avoids is the ski-rental rule: if a read
//!   costs what the mean says, a user loses at most twice what the best wait would have cost
//!   it. The paper's 5 s was a remote read on its cluster; where the links are loaded a read
//!   takes far longer (measured: docs/simulator.md, "NAS's map wait and what a remote read
//!   costs"). Until a map placed off its data finished (after a restart, too) the wait is
//!   `maxWaitMs`. CR-RTS's reduce wait stays `maxWaitMs`.
//! * Past that wait MTS relaxes in two levels, as delay scheduling does (`mapRackWait`): for
//!   one more wait as long it takes only a map with a split on the offered rack, then any. The
//!   paper relaxes to any rack at once, ranking by MapCost; but a job's input often sits on
//!   few racks, and maps taken anywhere read it over those racks' links (docs/simulator.md,
//!   "NAS's map wait per rack").
//! * MTS's hold on heavy and medium maps of a congested rack is conditional and bounded: it
//!   applies only while the user has other work to place on the offer and within the user's
//!   map wait. Unbounded, it left containers idle on a saturated cluster, where every rack is
//!   congested most of the time: measured, it cost more makespan than the traffic it saved.
//! * The congestion response as a whole (CR-RTS and that hold) applies only while some rack is
//!   below the threshold (`congestionResponse=while-a-rack-is-free`; `always` is the paper as
//!   written). Its purpose is to send shuffle-heavy work to racks with room on their links;
//!   with every rack congested there is none, and the paper's response, measured, paid
//!   nothing on FB-2010 and cost on the network-bound mix, while this one pays 2-13 %.
//! * A job whose splits name no live node (storage without locality: `file:///`, object
//!   stores) can never be data-local: MTS ranks its shuffle-qualified maps with the data-local
//!   ones instead of skipping the user for them.
//! * A "user" is a steered leaf queue, as for ShuffleWatcher; FairScheduler's queue order is
//!   the paper's fairness-ordered user list, and a skipped user's apps are vetoed for the offer
//!   so FairScheduler moves on to the next queue.
//! * A YARN container can take either kind of task, where the paper's slots had one kind. NAS
//!   orders each kind as above and keeps MapReduce's priority order between kinds (re-run maps
//!   5, reduces 10, maps 19/20) within a job, so the ApplicationMaster's reduce ramp-up and
//!   reduce preemption stay in charge of each job's map/reduce mix.
//! * Between a user's jobs FairScheduler's own app order decides (`kindOrder=apps`: the plan
//!   sets `scheduler_orders_apps`, and the leaf queue's policy picks the app, under fair share
//!   the one running fewer containers, then the earlier): NAS decides what each job may run on
//!   the offer and in what order within the job. So a heavy job's reduces do not take
//!   the user's containers from its light jobs' maps, and MTS's closest fit does not serve one
//!   job's maps while another's wait for the starvation guard. Measured at saturation
//!   (docs/simulator.md, "What NAS's holds cost" and "NAS between a user's jobs"), it raised
//!   throughput and moved no bytes; `kindOrder=priority` keeps NAS's ranking across all the
//!   user's jobs, with MapReduce's priorities across them (every reduce before any map).
//!   FairScheduler's order holds on the starvation guard's offers too, where the guard only
//!   loosens the lifted apps' locality: on FB-2009 the guard lifts an app on most offers, and
//!   putting the lifted apps first there cost 0.8–3.1 % (docs/simulator.md, "NAS's order on
//!   the starvation guard's offers"). With FairScheduler choosing the job, MTS's data-local
//!   rule and its wait apply to each job (as delay scheduling's do per app): a job with a
//!   data-local map here is ranked with it; a job without one waits on its own clock, which a
//!   data-local map of its own ends. With one wait per user, a job's data-local maps on the
//!   node vetoed the user's other jobs there without starting their wait, until the guard
//!   lifted them (docs/simulator.md, "NAS's map wait per job").
//! * The paper's CA-RTS only orders reduces; on a saturated cluster a user seldom has two
//!   reduce jobs to order, so its one job's reduce took the first container offered, wherever
//!   the output was (docs/simulator.md, "NAS's reduces on the racks of their output"). The
//!   hold makes ReduceNum bind, and only where it saves bytes: a rack with at least half the
//!   busiest rack's output is as good as any for a reduce whose quota elsewhere is full, and
//!   holding reduces of jobs spread over every rack moved no bytes in measurement. It is off
//!   by default: at saturation it cut the cross-rack shuffle by 4–5 % but not the throughput
//!   loss of its holds (measured in that section).
//! * "Unpredicted" jobs are those still on the prior ratio (no hint, no history, no counters).
//!   The predictor assumes a job's maps have the same input, so the share of its finished maps
//!   on a rack is its MapOutputPortion there; before any map finished it is spread evenly.

use crate::mapreduce::{TaskKind, RERUN_MAP_PRIORITY};
use crate::policy::{
    containers_fitting, log_storage_without_locality, reachable_map_locality, reduce_held_off,
    AppSlots, Candidate, Context, Offer, Policy, Turn,
};
use crate::predictor::RatioSource;
use crate::protocol::{AppId, Ask, Locality, PlanEntry, RackName, Resources};
use crate::settings::{Declaration, Param, ParamProblem, ParamValues, Settings};
use crate::state::{moving_mean, App, ClusterState, Node, Observation};
use std::cell::OnceCell;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const SHUFFLE_LIGHT_MB: &str = "shuffleLightMb";
const SHUFFLE_HEAVY_MB: &str = "shuffleHeavyMb";
const SMALL_INPUT_MB: &str = "smallInputMb";
const MAX_WAIT_MS: &str = "maxWaitMs";
const MAX_SKIPS: &str = "maxSkips";
const REDUCE_RACK_WAIT_MS: &str = "reduceRackWaitMs";
const KIND_ORDER: &str = "kindOrder";
const CONGESTION_RESPONSE: &str = "congestionResponse";
const MAP_WAIT: &str = "mapWait";
const MAP_RACK_WAIT: &str = "mapRackWait";

/// Weight of the newest sample in the moving mean of what a map placed off its data cost: about
/// the last 20 such maps, so one slow map does not set the wait and a change of load shows
/// within minutes at saturation, where such maps finish every few seconds.
const READ_PENALTY_WEIGHT: f64 = 0.05;

/// The `<rackwise>` elements of a `nas` queue.
const QUEUE_PARAMS: &[Param] = &[
    Param::number(
        SHUFFLE_LIGHT_MB,
        1.0,
        (0.0, true),
        1.0e9,
        "predicted job shuffle in MiB below which a job is shuffle-light (at most shuffleHeavyMb)",
    ),
    Param::number(
        SHUFFLE_HEAVY_MB,
        100.0,
        (0.0, true),
        1.0e9,
        "predicted job shuffle in MiB above which a job is shuffle-heavy",
    ),
    Param::number(
        SMALL_INPUT_MB,
        10.0,
        (0.0, true),
        1.0e9,
        "job input in MiB below which MTS treats a job as small-input",
    ),
    Param::number(
        MAX_WAIT_MS,
        5_000.0,
        (0.0, false),
        3_600_000.0,
        "how long CR-RTS, and at least how long MTS (see mapWait), may skip a user (MTS: each \
         job, with kindOrder=apps) before relaxing their preference",
    ),
    Param::word(
        MAP_WAIT,
        // Measured (docs/simulator.md, "NAS's map wait and what a remote read costs"): FB-2010
        // at X = 16 and 24, both draws and both input layouts, six seeds each.
        "read-cost",
        &["fixed", "read-cost"],
        "fixed: MTS skips a user for maxWaitMs, as the paper does; read-cost: for as long as \
         maps placed off their data lately took longer than their job's data-local maps, and \
         at least maxWaitMs",
    ),
    Param::word(
        MAP_RACK_WAIT,
        // Measured (docs/simulator.md, "NAS's map wait per rack"): FB-2010 at X = 16 and 24,
        // FB-2009 at 64 and 96, both input layouts, and the mix.
        "as-map-wait",
        &["none", "as-map-wait"],
        "none: past its map wait MTS takes a map on any rack, by category and MapCost, as the \
         paper does; as-map-wait: past it, only a map with a split on the offered rack for one \
         more wait as long (the same skips with maxSkips), then any, as delay scheduling \
         relaxes node-local to rack-local to off-switch",
    ),
    Param::whole(
        MAX_SKIPS,
        0.0,
        0.0,
        1.0e6,
        "skip count bound used instead of maxWaitMs when above 0 (the paper's D^m = D^r)",
    ),
    Param::number(
        REDUCE_RACK_WAIT_MS,
        0.0,
        (0.0, false),
        3_600_000.0,
        "how long a job's reduces are kept off racks where it reached its ReduceNum and that \
         hold under half the output of its busiest rack, counted from its last reduce start; \
         0 = never (CA-RTS only ranks)",
    ),
    Param::word(
        KIND_ORDER,
        // Measured (docs/simulator.md, "What NAS's holds cost" and "NAS between a user's
        // jobs"): at the saturating loads of FB-2010 and FB-2009 apps raised throughput with
        // the same cross-rack bytes.
        "apps",
        &["priority", "apps"],
        "priority: NAS ranks across the user's jobs, every reduce before any map (MapReduce's \
         priorities across all its jobs); apps: between jobs FairScheduler's app order decides \
         (the leaf queue's schedulingPolicy: under fair share fewer running containers, then \
         earlier arrival), NAS's ranking and MapReduce's priorities within a job, and MTS \
         waits for each job's data-local map on its own",
    ),
    Param::word(
        CONGESTION_RESPONSE,
        // Measured (docs/simulator.md, "NAS's congestion response"): FB-2010 at X = 16 and 24,
        // both input layouts, six seeds each, 2.3-7.5 % more throughput on the four means
        // than `always`, the same cross-rack shuffle.
        "while-a-rack-is-free",
        &["always", "while-a-rack-is-free"],
        "always: on a congested rack CR-RTS ranks reduces and MTS holds heavy and medium maps, \
         as the paper does; while-a-rack-is-free: only while some rack is below the congestion \
         threshold, since with every rack congested holding moves no traffic elsewhere",
    ),
];

const TRAFFIC_THRESHOLD_MB: &str = "yarn.scheduler.rackwise.nas.traffic-threshold-mb";
const THRESHOLD_INTERVAL_MS: &str = "yarn.scheduler.rackwise.nas.traffic-threshold-interval-ms";
const CONTAINERS_PER_NODE: &str = "yarn.scheduler.rackwise.nas.containers-per-node";

/// NAS's yarn-site keys: how the per-node TrafficThreshold is obtained.
const CLUSTER_PARAMS: &[Param] = &[
    Param::number(
        TRAFFIC_THRESHOLD_MB,
        0.0,
        (0.0, false),
        1.0e9,
        "NAS per-node TrafficThreshold in MiB set by the operator; 0 = computed as \
         m * sum(S_i) / sum(K_i) over the active jobs (the paper lets operators override it)",
    ),
    Param::number(
        THRESHOLD_INTERVAL_MS,
        5_000.0,
        (0.0, false),
        3_600_000.0,
        "how often NAS recomputes the TrafficThreshold from the active jobs; 0 = every offer",
    ),
    Param::number(
        CONTAINERS_PER_NODE,
        0.0,
        (0.0, false),
        100_000.0,
        "m of the TrafficThreshold, containers per node; 0 = each node's capacity divided by \
         the mean map container size of the active jobs",
    ),
];

const MIB: f64 = 1024.0 * 1024.0;

/// A NAS queue's job classes and skip bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// A job whose predicted shuffle is below this is shuffle-light (paper: 1 MB).
    pub light_below_bytes: f64,
    /// A job whose predicted shuffle is above this is shuffle-heavy (paper: 100 MB); between
    /// the two it is shuffle-medium.
    pub heavy_above_bytes: f64,
    /// A job whose input is below this is a small-input job (paper: 10 MB).
    pub small_input_below_bytes: f64,
    /// How long CR-RTS, and at least how long MTS, may skip a user before relaxing (paper, real
    /// cluster: 5 s).
    pub max_wait_ms: u64,
    /// When > 0, skip this many offers instead of waiting `max_wait_ms` (paper's D^m = D^r).
    pub max_skips: u32,
    /// Whether MTS's wait follows what a map placed off its data lately cost (else it is
    /// `max_wait_ms`).
    pub map_wait_follows_reads: bool,
    /// Whether, past its map wait, MTS takes only rack-local maps for one more wait before
    /// any.
    pub map_rack_wait: bool,
    /// How long a job's reduces may be held off racks where it reached its ReduceNum.
    pub reduce_rack_wait_ms: u64,
    /// Whether FairScheduler's app order, not NAS's ranking, decides between the user's jobs.
    pub jobs_by_app_order: bool,
    /// Whether the congestion response waits for a rack below the threshold to exist (else it
    /// follows the offered rack alone, as the paper does).
    pub respond_while_a_rack_is_free: bool,
}

impl Params {
    pub fn of(values: &ParamValues) -> Params {
        Params {
            light_below_bytes: values.number(SHUFFLE_LIGHT_MB) * MIB,
            heavy_above_bytes: values.number(SHUFFLE_HEAVY_MB) * MIB,
            small_input_below_bytes: values.number(SMALL_INPUT_MB) * MIB,
            max_wait_ms: values.number(MAX_WAIT_MS) as u64,
            max_skips: values.number(MAX_SKIPS) as u32,
            map_wait_follows_reads: values.word(MAP_WAIT) == "read-cost",
            map_rack_wait: values.word(MAP_RACK_WAIT) == "as-map-wait",
            reduce_rack_wait_ms: values.number(REDUCE_RACK_WAIT_MS) as u64,
            jobs_by_app_order: values.word(KIND_ORDER) == "apps",
            respond_while_a_rack_is_free: values.word(CONGESTION_RESPONSE)
                == "while-a-rack-is-free",
        }
    }
}

/// NAS's light and heavy bounds must leave medium a (possibly empty) range.
fn check_bounds(values: &ParamValues) -> Vec<ParamProblem> {
    let params = Params::of(values);
    if params.light_below_bytes > params.heavy_above_bytes {
        return vec![ParamProblem {
            element: SHUFFLE_LIGHT_MB,
            reason: format!(
                "must not exceed <{SHUFFLE_HEAVY_MB}> ({} MiB): a light job cannot shuffle more \
                 than a heavy one",
                params.heavy_above_bytes / MIB
            ),
        }];
    }
    Vec::new()
}

/// Cluster-wide NAS settings: how the per-node TrafficThreshold is obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Keys {
    /// The operator's TrafficThreshold in bytes, replacing the computed one.
    pub traffic_threshold_bytes: Option<f64>,
    pub threshold_interval_ms: u64,
    /// The operator's m; `None` derives it per node.
    pub containers_per_node: Option<u32>,
}

impl Keys {
    pub fn of(values: &ParamValues) -> Keys {
        let threshold_mb = values.number(TRAFFIC_THRESHOLD_MB);
        let containers = values.number(CONTAINERS_PER_NODE) as u32;
        Keys {
            traffic_threshold_bytes: (threshold_mb > 0.0).then_some(threshold_mb * MIB),
            threshold_interval_ms: values.number(THRESHOLD_INTERVAL_MS) as u64,
            containers_per_node: (containers > 0).then_some(containers),
        }
    }
}

/// What NAS remembers between offers; advanced only by observations and offers (their
/// `now_ms`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Nas {
    /// The skips of the queues ("users") that MTS or CR-RTS is skipping, in name order: the
    /// order in which every offer plans the queues, so an offer walks this alongside them and
    /// finds each queue's skips without a search by name.
    skips: Vec<QueueSkips>,
    /// The offer being planned: how far its walk through `skips` has come, and the skips of the
    /// queues it planned so far, which replace `skips` at its end.
    skips_walked: usize,
    planned_skips: Vec<QueueSkips>,
    /// Reduces of each job that CR-RTS held back and that have not been placed since.
    delayed_reduces: BTreeMap<AppId, u32>,
    /// Jobs whose reduces CA-RTS's ReduceNum is holding off a rack: since when, counted from
    /// the first hold after the job's last reduce start.
    reduce_holds: BTreeMap<AppId, u64>,
    /// The moving mean of how much longer a map placed off its data took than its job's
    /// data-local maps (ms), once one has finished: what MTS's wait avoids.
    read_penalty_ms: Option<f64>,
    /// Steered jobs whose splits are on no node or rack of the cluster, so the log says once
    /// that their maps are not waited for.
    without_locality: BTreeSet<AppId>,
    threshold: Option<ThresholdSnapshot>,
    /// The offered node's budget, set when the offer's first NAS queue is planned.
    budget: Option<NodeBudget>,
    /// Where FairScheduler orders a user's jobs (`kindOrder=apps`): each job's MTS skips, while
    /// MTS skips it.
    job_map_skips: AppSlots<Skips>,
}

/// One queue's skips, kept while either counts (if events end both, the next offer drops it).
#[derive(Debug, Clone, PartialEq)]
struct QueueSkips {
    /// The candidate index's own name of the queue, so that the next offer usually tells it is
    /// the same queue by the pointer.
    queue: Arc<str>,
    /// MTS skips, while MTS skips the queue.
    map: Option<Skips>,
    /// CR-RTS skips.
    reduce: Option<Skips>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Skips {
    count: u32,
    since_ms: u64,
    /// Whether the relaxation was logged, so the log says it once per wait.
    relaxed: bool,
}

/// The inputs of TrafficThreshold, as last computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThresholdSnapshot {
    pub computed_ms: u64,
    /// `ΣS_i / ΣK_i`: predicted map output per map over the active jobs.
    pub output_per_map_bytes: f64,
    /// Mean size of the map containers the active jobs ask for, to derive `m`.
    pub map_container: Option<Resources>,
}

/// The offered node's shuffle budget for this offer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeBudget {
    pub threshold_bytes: f64,
    /// TrafficThreshold minus the predicted output of the maps running on the node.
    pub available_bytes: f64,
}

/// A job's shuffle class by its predicted shuffle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Light,
    Medium,
    Heavy,
}

impl Class {
    /// CR-RTS's reason for a reduce of this class once the user is relaxed (lines 7–8).
    fn relaxed_reason(self) -> &'static str {
        match self {
            Class::Light => "nas:cr-rts:relaxed:light-reduce",
            Class::Medium => "nas:cr-rts:relaxed:medium-reduce",
            Class::Heavy => "nas:cr-rts:relaxed:heavy-reduce",
        }
    }

    /// CA-RTS's reason for a reduce of this class, under or past its ReduceNum on the rack.
    fn ca_rts_reason(self, reached: bool) -> &'static str {
        match (self, reached) {
            (Class::Light, false) => "nas:ca-rts:light-under-reduce-num",
            (Class::Medium, false) => "nas:ca-rts:medium-under-reduce-num",
            (Class::Heavy, false) => "nas:ca-rts:heavy-under-reduce-num",
            (Class::Light, true) => "nas:ca-rts:light-reached-reduce-num",
            (Class::Medium, true) => "nas:ca-rts:medium-reached-reduce-num",
            (Class::Heavy, true) => "nas:ca-rts:heavy-reached-reduce-num",
        }
    }
}

/// What the predictor says about one job.
#[derive(Debug, Clone, Copy)]
struct Prediction {
    /// Map output of one of its maps: ratio × input per map (paper eq. 1).
    task_output_bytes: f64,
    input_per_map_bytes: f64,
    shuffle_bytes: f64,
    input_bytes: f64,
    unpredicted: bool,
}

fn predict(app: &App, settings: &Settings) -> Prediction {
    let job = &app.job;
    let input_per_map = job.input_bytes_per_map(settings.default_map_input_bytes);
    let task_output = job.estimate.ratio * input_per_map;
    let maps = job.known_maps(app.pending(TaskKind::Map)) as f64;
    Prediction {
        task_output_bytes: task_output,
        input_per_map_bytes: input_per_map,
        shuffle_bytes: job.predicted_map_output_bytes(
            app.pending(TaskKind::Map),
            settings.default_map_input_bytes,
        ),
        input_bytes: input_per_map * maps,
        unpredicted: job.estimate.source == RatioSource::Prior,
    }
}

fn classify(prediction: &Prediction, nas: &Params) -> Class {
    if prediction.shuffle_bytes < nas.light_below_bytes {
        Class::Light
    } else if prediction.shuffle_bytes > nas.heavy_above_bytes {
        Class::Heavy
    } else {
        Class::Medium
    }
}

impl ThresholdSnapshot {
    /// `ΣS_i / ΣK_i` over every MapReduce job that has maps, and the mean map container.
    fn compute(state: &ClusterState, settings: &Settings, now_ms: u64) -> ThresholdSnapshot {
        let (mut output, mut maps) = (0.0, 0.0);
        let (mut memory_mb, mut vcores, mut asks) = (0u64, 0u64, 0u64);
        for app in state.apps.values().filter(|app| app.is_mapreduce) {
            let prediction = predict(app, settings);
            let job_maps = app.job.known_maps(app.pending(TaskKind::Map)) as f64;
            output += prediction.task_output_bytes * job_maps;
            maps += job_maps;
            for ask in map_asks(app) {
                memory_mb += ask.resources.memory_mb;
                vcores += u64::from(ask.resources.vcores);
                asks += 1;
            }
        }
        ThresholdSnapshot {
            computed_ms: now_ms,
            output_per_map_bytes: if maps > 0.0 { output / maps } else { 0.0 },
            map_container: (asks > 0).then(|| Resources {
                memory_mb: memory_mb / asks,
                vcores: (vcores / asks) as u32,
            }),
        }
    }

    /// `m`: the operator's, else how many typical map containers fit the node (at least one).
    fn containers_on(&self, node: &Node, keys: &Keys) -> f64 {
        if let Some(m) = keys.containers_per_node {
            return f64::from(m);
        }
        let Some(container) = self.map_container else {
            return 1.0;
        };
        let fit = containers_fitting(&node.capacity, &container);
        fit.max(1) as f64
    }

    /// TrafficThreshold of `node`: the operator's, else `m · ΣS_i / ΣK_i`.
    pub fn threshold_bytes(&self, node: &Node, keys: &Keys) -> f64 {
        keys.traffic_threshold_bytes
            .unwrap_or_else(|| self.containers_on(node, keys) * self.output_per_map_bytes)
    }
}

fn map_asks(app: &App) -> impl Iterator<Item = &Ask> {
    app.asks
        .values()
        .filter(|ask| TaskKind::of_mapreduce_priority(ask.priority) == TaskKind::Map)
}

fn reduce_asks(app: &App) -> impl Iterator<Item = &Ask> {
    app.asks
        .values()
        .filter(|ask| TaskKind::of_mapreduce_priority(ask.priority) == TaskKind::Reduce)
}

impl Nas {
    /// Follows what the RM did: a node-local map ends its queue's and its job's map skips, a
    /// job left without maps pending its own, a reduce one of its job's delayed reduces.
    fn follow(&mut self, state: &ClusterState, observation: &Observation) {
        match observation {
            Observation::TaskStarted {
                app,
                kind,
                locality,
                ..
            } => {
                let Some(known) = state.apps.get(app) else {
                    return;
                };
                match kind {
                    TaskKind::Map if *locality == Locality::NodeLocal => {
                        if let Some(skips) = self.skips_mut(&known.queue) {
                            skips.map = None;
                        }
                        if let Some(slot) = state.apps.slot_of(app) {
                            self.job_map_skips.clear(slot);
                        }
                    }
                    TaskKind::Reduce => {
                        self.reduce_holds.remove(app);
                        if let Some(delayed) = self.delayed_reduces.get_mut(app) {
                            *delayed -= 1;
                            if *delayed == 0 {
                                self.delayed_reduces.remove(app);
                            }
                        }
                    }
                    _ => {}
                }
            }
            Observation::TaskFinished {
                app,
                kind: TaskKind::Map,
                locality,
                start_ms,
                finish_ms,
                ..
            } if *locality != Locality::NodeLocal => {
                // Against the same job's data-local maps: its maps read the same split size
                // and run the same code, so the difference is the read.
                let Some(local_ms) = state
                    .apps
                    .get(app)
                    .and_then(|known| known.job.node_local_map_times.mean_ms())
                else {
                    return;
                };
                let sample = finish_ms.saturating_sub(*start_ms) as f64 - local_ms;
                self.read_penalty_ms = Some(moving_mean(
                    self.read_penalty_ms,
                    sample,
                    READ_PENALTY_WEIGHT,
                ));
            }
            // A job's own map wait ends when it has no map pending, as a user's does when its
            // queue has nothing to plan.
            Observation::AsksChanged { app } => {
                if let (Some(slot), Some(known)) = (state.apps.slot_of(app), state.apps.get(app)) {
                    if known.pending(TaskKind::Map) == 0 {
                        self.job_map_skips.clear(slot);
                    }
                }
            }
            Observation::AppRemoved { app } => {
                self.delayed_reduces.remove(app);
                self.reduce_holds.remove(app);
                self.without_locality.remove(app);
            }
            _ => {}
        }
    }

    /// Logs, once per steered job with maps pending, that its splits are on no node or rack of
    /// the cluster: `rank` never holds its maps for a data-local container.
    fn note_storage_without_locality(&mut self, context: &Context, id: &AppId) {
        let Some(app) = context.state.apps.get(id) else {
            return;
        };
        if !app.is_mapreduce
            || app.pending(TaskKind::Map) == 0
            || self.without_locality.contains(id)
            || context.steered(&app.queue).is_none()
        {
            return;
        }
        if reachable_map_locality(app, context.state) == Locality::OffSwitch {
            log_storage_without_locality("nas", app);
            self.without_locality.insert(id.clone());
        }
    }

    /// The offered node's budget, refreshing TrafficThreshold when due.
    fn budget(
        &mut self,
        state: &ClusterState,
        settings: &Settings,
        keys: &Keys,
        offer: &Offer,
    ) -> NodeBudget {
        let snapshot = match self.threshold {
            Some(snapshot)
                if snapshot.map_container.is_some()
                    && offer.now_ms.saturating_sub(snapshot.computed_ms)
                        < keys.threshold_interval_ms =>
            {
                snapshot
            }
            // Due, or computed while no job asked for maps (no container size for m yet).
            _ => {
                let snapshot = ThresholdSnapshot::compute(state, settings, offer.now_ms);
                self.threshold = Some(snapshot);
                snapshot
            }
        };
        let threshold_bytes = snapshot.threshold_bytes(offer.node, keys);
        let running_output: f64 = state
            .tasks_on(offer.node_id)
            .filter(|(_, kind)| *kind == TaskKind::Map)
            .map(|(app, _)| predict(app, settings).task_output_bytes)
            .sum();
        NodeBudget {
            threshold_bytes,
            available_bytes: threshold_bytes - running_output,
        }
    }

    /// The map and reduce skips of `queue`, planned now; queues come in name order. The walk
    /// passes over the queues that sort before it: they are not planned in this offer.
    fn take_skips(&mut self, queue: &Arc<str>) -> (Option<Skips>, Option<Skips>) {
        while let Some(held) = self.skips.get(self.skips_walked) {
            let same = Arc::ptr_eq(&held.queue, queue) || held.queue == *queue;
            if !same && held.queue > *queue {
                break;
            }
            self.skips_walked += 1;
            if same {
                return (held.map, held.reduce);
            }
        }
        (None, None)
    }

    /// Keeps the skips of a queue planned now, if it has any.
    fn keep_skips(&mut self, queue: &Arc<str>, map: Option<Skips>, reduce: Option<Skips>) {
        if map.is_some() || reduce.is_some() {
            self.planned_skips.push(QueueSkips {
                queue: Arc::clone(queue),
                map,
                reduce,
            });
        }
    }

    /// The skips of `queue`, between offers.
    fn skips_mut(&mut self, queue: &str) -> Option<&mut QueueSkips> {
        self.skips.iter_mut().find(|skips| &*skips.queue == queue)
    }

    /// The TrafficThreshold inputs last computed.
    pub fn threshold(&self) -> Option<ThresholdSnapshot> {
        self.threshold
    }

    /// The moving mean of how much longer maps placed off their data took than their jobs'
    /// data-local maps, in ms, once one has finished.
    pub fn read_penalty_ms(&self) -> Option<f64> {
        self.read_penalty_ms
    }

    /// MTS skips counted against `queue` in its current wait.
    pub fn map_skips(&self, queue: &str) -> u32 {
        self.skips
            .iter()
            .find(|skips| &*skips.queue == queue)
            .and_then(|skips| skips.map)
            .map_or(0, |s| s.count)
    }

    /// MTS skips counted against `app` in its own wait (`kindOrder=apps`).
    pub fn job_map_skips(&self, app: &AppId) -> u32 {
        self.job_map_skips.find(app).map_or(0, |skips| skips.count)
    }

    /// Reduces of `app` that CR-RTS delayed and that have not been placed since.
    pub fn delayed_reduces(&self, app: &AppId) -> u32 {
        self.delayed_reduces.get(app).copied().unwrap_or(0)
    }
}

impl Policy for Nas {
    fn declaration(&self) -> Declaration {
        Declaration {
            name: "nas",
            queue_params: QUEUE_PARAMS,
            cluster_params: CLUSTER_PARAMS,
            check: check_bounds,
            steers: true,
            reads_netsat: true,
            starvation_guard_ms: None,
        }
    }

    fn observe(&mut self, context: &Context, observation: &Observation) {
        self.follow(context.state, observation);
        if let Observation::AsksChanged { app } = observation {
            self.note_storage_without_locality(context, app);
        }
    }

    /// The offered node's budget, refreshing TrafficThreshold when due.
    fn begin_offer(&mut self, context: &Context, offer: &Offer) {
        let keys = context.keys.typed(Keys::of);
        self.budget = Some(self.budget(context.state, context.settings, keys, offer));
    }

    fn rank(&mut self, turn: &Turn, entries: &mut Vec<PlanEntry>) {
        let Some(budget) = self.budget else {
            return;
        };
        let params = turn.params.typed(Params::of);
        let user = UserTurn {
            candidates: turn.candidates,
            queue: turn.queue,
            params,
            settings: turn.context.settings,
            state: turn.context.state,
            budget,
            congested: congested(turn.offer, params),
            offer: turn.offer,
        };
        rank(&user, self, entries);
    }

    /// `kindOrder=apps`: ranked across the user's jobs, MTS's closest fit and CA-RTS's
    /// categories served some jobs again and again while others waited for the starvation
    /// guard (docs/simulator.md, "NAS between a user's jobs"). On an offer where the guard
    /// lifts an app too: it only loosens the lifted apps' locality, and FairScheduler's order
    /// decides which app goes first (docs/simulator.md, "NAS's order on the starvation
    /// guard's offers").
    fn scheduler_orders_apps(&self, turn: &Turn) -> bool {
        turn.params.typed(Params::of).jobs_by_app_order
    }

    /// Keeps only the skips of the queues planned in this offer: those of a queue not planned
    /// (nothing pending, or no longer `nas`) are forgotten, so a later wait starts afresh.
    fn end_offer(&mut self) {
        std::mem::swap(&mut self.skips, &mut self.planned_skips);
        self.planned_skips.clear();
        self.skips_walked = 0;
        self.budget = None;
    }
}

/// Whether `queue` has reached its skip bound (a queue never skipped has waited 0 ms and
/// skipped 0 times); if not and `skipped` says this offer skips it, counts one skip, its wait
/// starting at the first. Logs the first time a wait reaches the bound, so the RM log shows
/// every relaxation. `skips` are the queue's skips of this kind, while it is being skipped.
fn relaxed_else_skip(
    skips: &mut Option<Skips>,
    waiter: Waiter,
    params: &Params,
    wait_ms: u64,
    now_ms: u64,
    what: &str,
    skipped: bool,
) -> bool {
    let Some(state) = skips else {
        let reached = no_wait(params, wait_ms);
        if !reached && skipped {
            *skips = Some(Skips {
                count: 1,
                since_ms: now_ms,
                relaxed: false,
            });
        }
        return reached;
    };
    let reached = waits_over(&Some(*state), params, wait_ms, now_ms, 1);
    if reached && !state.relaxed {
        let waited_ms = now_ms.saturating_sub(state.since_ms);
        state.relaxed = true;
        log::info!(
            "{waiter}: {what} skip bound reached after {} skips / {waited_ms} ms",
            state.count
        );
    }
    if !reached && skipped {
        state.count += 1;
    }
    reached
}

/// Whose wait a skip counts against, for the log: a user (its queue), or one of its jobs where
/// FairScheduler orders the user's jobs.
#[derive(Debug, Clone, Copy)]
enum Waiter<'a> {
    User(&'a str),
    Job(&'a str, &'a AppId),
}

impl std::fmt::Display for Waiter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Waiter::User(queue) => write!(f, "queue {queue}"),
            Waiter::Job(queue, app) => write!(f, "queue {queue}, job {}", app.0),
        }
    }
}

/// Whether neither a skip count nor a wait bounds MTS: it never skips.
fn no_wait(params: &Params, wait_ms: u64) -> bool {
    params.max_skips == 0 && wait_ms == 0
}

/// Whether `skips` lasted `waits` bounds, each `max_skips` skips or else `wait_ms` (without
/// counting a skip): a wait that has not started has not ended.
fn waits_over(
    skips: &Option<Skips>,
    params: &Params,
    wait_ms: u64,
    now_ms: u64,
    waits: u32,
) -> bool {
    skips.as_ref().is_some_and(|state| {
        if params.max_skips > 0 {
            state.count >= params.max_skips.saturating_mul(waits)
        } else {
            now_ms.saturating_sub(state.since_ms) >= wait_ms.saturating_mul(u64::from(waits))
        }
    })
}

/// How long MTS skips a user: `maxWaitMs`, or with `mapWait=read-cost` what a map placed off
/// its data lately cost if that is longer.
fn map_wait_ms(params: &Params, read_penalty_ms: Option<f64>) -> u64 {
    match read_penalty_ms {
        Some(penalty) if params.map_wait_follows_reads => {
            params.max_wait_ms.max(penalty.max(0.0) as u64)
        }
        _ => params.max_wait_ms,
    }
}

/// A map ask of a job, as MTS sees it on this offer.
struct MapTask<'a> {
    candidate: &'a Candidate<'a>,
    ask: &'a Ask,
    prediction: Prediction,
    /// Where its split is relative to the offered node.
    locality: Locality,
    /// The job's position among the user's candidates.
    position: usize,
    small_input: bool,
}

impl MapTask<'_> {
    fn entry(&self, locality: Locality, reason: &'static str) -> PlanEntry {
        PlanEntry {
            app: self.candidate.id.clone(),
            priority: self.ask.priority,
            locality,
            reason: reason.into(),
        }
    }

    fn distance_to(&self, available: f64) -> f64 {
        (available - self.prediction.task_output_bytes).abs()
    }

    /// Lines 9–12: small-input before large-input, unpredicted before predicted; with the
    /// plan reason of a relaxed map of that category.
    fn category(&self) -> (usize, &'static str) {
        match (self.small_input, self.prediction.unpredicted) {
            (true, true) => (0, "nas:mts:relaxed:small-unpredicted"),
            (true, false) => (1, "nas:mts:relaxed:small-predicted"),
            (false, true) => (2, "nas:mts:relaxed:large-unpredicted"),
            (false, false) => (3, "nas:mts:relaxed:large-predicted"),
        }
    }

    /// MapCost = v × input size, v = 0 node-local, 1 rack-local, 2 off-rack.
    fn cost(&self) -> f64 {
        let v = match self.locality {
            Locality::NodeLocal => 0.0,
            Locality::RackLocal => 1.0,
            Locality::OffSwitch => 2.0,
        };
        v * self.prediction.input_per_map_bytes
    }
}

/// One steered queue ("user") on one offer: what the three algorithms read.
struct UserTurn<'a> {
    /// The queue's jobs, by arrival.
    pub candidates: &'a [Candidate<'a>],
    pub queue: &'a Arc<str>,
    pub params: &'a Params,
    pub settings: &'a Settings,
    pub state: &'a ClusterState,
    pub budget: NodeBudget,
    /// The dispatcher's switch for this user: CR-RTS for reduces, and MTS's hold on heavy and
    /// medium maps.
    pub congested: bool,
    pub offer: &'a Offer<'a>,
}

/// Whether NAS responds to congestion on this offer: the offered rack is congested and, with
/// `congestionResponse=while-a-rack-is-free`, some rack is not. CR-RTS's point is to send
/// shuffle-heavy work to racks with room on their links; with every rack congested its holds
/// only leave containers idle (measured: docs/simulator.md, "NAS's congestion response").
fn congested(offer: &Offer, params: &Params) -> bool {
    offer.rack_saturated && (offer.some_rack_unsaturated || !params.respond_while_a_rack_is_free)
}

/// Appends NAS's ranking of one queue's jobs for this offer to `entries`.
fn rank(turn: &UserTurn, nas: &mut Nas, entries: &mut Vec<PlanEntry>) {
    // A delay tag covers at most the reduces the job still has pending. Tags exist only after
    // congestion: most offers would search an empty map once per candidate.
    if !nas.delayed_reduces.is_empty() {
        for candidate in turn.candidates {
            let pending = candidate.app.pending(TaskKind::Reduce);
            if pending == 0 {
                nas.delayed_reduces.remove(candidate.id);
            } else if let Some(delayed) = nas.delayed_reduces.get_mut(candidate.id) {
                *delayed = (*delayed).min(pending);
            }
        }
    }
    let ranked = entries.len();
    let (mut map_skips, mut reduce_skips) = nas.take_skips(turn.queue);
    let reduces = hold_reduces(turn, nas, reduce_jobs(turn));
    // Algorithm 1: the rack's congestion picks the reduce scheduler.
    if turn.congested {
        cr_rts(turn, nas, reduces, &mut reduce_skips, entries);
    } else {
        ca_rts(turn, nas, reduces, entries);
    }
    // A CR-RTS wait lasts while the user meets congested racks: an uncongested one ends it,
    // so each congestion episode costs the user at most one wait, not one per heavy reduce.
    if !turn.congested {
        reduce_skips = None;
    }
    let other_work = entries.len() > ranked;
    let map_wait = map_wait_ms(turn.params, nas.read_penalty_ms);
    if turn.params.jobs_by_app_order {
        // FairScheduler picks the job, so each job waits for its own data-local map, as delay
        // scheduling waits per app: with one wait per user, one job's data-local maps on the
        // node vetoed the user's other jobs without starting any wait, until the starvation
        // guard (FB-2009: one-map jobs' median turnaround twice `delay`'s; docs/simulator.md,
        // "NAS's map wait per job").
        map_skips = None;
        // The congested-rack hold on a job's heavy maps needs other work of the user's, which
        // may be another job's light maps.
        let other_work = other_work
            || turn.congested && has_light_maps(turn.candidates, turn.settings, turn.params);
        for candidate in turn.candidates {
            let mut skips = nas.job_map_skips.get(candidate.slot, candidate.id).copied();
            let job = UserTurn {
                candidates: std::slice::from_ref(candidate),
                ..*turn
            };
            let waiter = Waiter::Job(turn.queue, candidate.id);
            mts(&job, waiter, &mut skips, map_wait, other_work, entries);
            match skips {
                Some(skips) => nas
                    .job_map_skips
                    .insert(candidate.slot, candidate.id, skips),
                None => nas.job_map_skips.clear(candidate.slot),
            }
        }
    } else {
        let waiter = Waiter::User(turn.queue);
        mts(turn, waiter, &mut map_skips, map_wait, other_work, entries);
    }
    nas.keep_skips(turn.queue, map_skips, reduce_skips);
    // Re-run maps, then reduces, then maps: MapReduce's priorities (see the module notes).
    entries[ranked..].sort_by_key(
        |entry| match TaskKind::of_mapreduce_priority(entry.priority) {
            TaskKind::Reduce => 1,
            _ if entry.priority == RERUN_MAP_PRIORITY => 0,
            _ => 2,
        },
    );
}

/// Whether any of `candidates` is a shuffle-light job with maps to place: work that MTS's hold
/// on heavy and medium maps of a congested rack leaves the user.
fn has_light_maps(candidates: &[Candidate], settings: &Settings, params: &Params) -> bool {
    candidates.iter().any(|candidate| {
        classify(&predict(candidate.app, settings), params) == Class::Light
            && map_asks(candidate.app).next().is_some()
    })
}

/// Algorithm 2 for one user (or one of its jobs, the `waiter`), with its map skips and how long
/// they may last. `other_work` says whether the user already has other work to place on this
/// offer (reduces ranked, or another job's light maps).
fn mts(
    turn: &UserTurn,
    waiter: Waiter,
    skips: &mut Option<Skips>,
    wait_ms: u64,
    other_work: bool,
    out: &mut Vec<PlanEntry>,
) {
    let UserTurn {
        candidates,
        params,
        settings,
        state,
        budget,
        congested,
        offer,
        ..
    } = *turn;
    // The user's map asks as MTS sees them on this offer. Most offers only learn that none is
    // data-local and qualified and skip the user, so they are collected only past that.
    let all_tasks = || {
        candidates
            .iter()
            .enumerate()
            .flat_map(|(position, candidate)| {
                let prediction = predict(candidate.app, settings);
                map_asks(candidate.app).map(move |ask| MapTask {
                    candidate,
                    ask,
                    prediction,
                    // Rack-local is told apart below, only where it matters (MapCost).
                    locality: if ask.hosts.get(offer.host).is_some_and(|n| *n > 0) {
                        Locality::NodeLocal
                    } else {
                        Locality::OffSwitch
                    },
                    position,
                    small_input: prediction.input_bytes < params.small_input_below_bytes,
                })
            })
    };
    // CR-RTS's hold on heavy and medium maps while the offered rack is congested, made
    // conditional and bounded so that it does not cost capacity: it applies only while the
    // user has something else to run here (a light map, or reduces ranked above), and only
    // within the user's map wait; an idle container moves no shuffle.
    let is_held = |task: &MapTask| classify(&task.prediction, params) != Class::Light;
    let held = congested
        && (other_work || has_light_maps(candidates, settings, params))
        && !waits_over(skips, params, wait_ms, offer.now_ms, 1);
    let tasks = || all_tasks().filter(move |t| !(held && is_held(t)));
    let mut walked = tasks().peekable();
    if walked.peek().is_none() {
        // Nothing to run (or only held maps, whose hold the wait bounds).
        if held && all_tasks().next().is_some() {
            relaxed_else_skip(skips, waiter, params, wait_ms, offer.now_ms, "map", true);
        } else {
            *skips = None;
        }
        return;
    }
    let available = budget.available_bytes;
    let qualified = |task: &MapTask| task.prediction.task_output_bytes <= available;

    // Lines 3–4: data-local and shuffle-qualified; unpredicted jobs first (so they become
    // predicted sooner), then the output closest to the available space. A job whose splits
    // are on no live node is as local here as it can ever be, so it is not waited for.
    // Whether a job's splits are on no live node (storage without locality): worked out once per
    // job, and only for a job with a qualified map that is not data-local here.
    let no_locality: Vec<OnceCell<bool>> = candidates.iter().map(|_| OnceCell::new()).collect();
    let has_no_locality = |task: &MapTask| {
        *no_locality[task.position].get_or_init(|| {
            reachable_map_locality(task.candidate.app, state) == Locality::OffSwitch
        })
    };
    let mut local: Vec<MapTask> = walked
        .filter(|t| qualified(t) && (t.locality == Locality::NodeLocal || has_no_locality(t)))
        .collect();
    if !local.is_empty() {
        local.sort_by(|a, b| {
            b.prediction
                .unpredicted
                .cmp(&a.prediction.unpredicted)
                .then(
                    a.distance_to(available)
                        .total_cmp(&b.distance_to(available)),
                )
        });
        // The data-local ones first; the rest are the jobs without locality.
        local.sort_by_key(|t| t.locality != Locality::NodeLocal);
        out.extend(local.iter().map(|t| {
            if t.locality != Locality::NodeLocal {
                t.entry(Locality::OffSwitch, "nas:mts:no-locality-qualified")
            } else {
                t.entry(Locality::NodeLocal, "nas:mts:local-qualified")
            }
        }));
        return;
    }
    // Lines 5–6 and 17–18: skip the user until its bound.
    if !relaxed_else_skip(skips, waiter, params, wait_ms, offer.now_ms, "map", true) {
        return;
    }
    // Lines 7–12: a qualified map by category, MapCost, then closeness to the space. Most
    // offers end above, so the non-local maps' racks are looked up only now.
    let mut tasks: Vec<MapTask> = tasks().collect();
    for task in tasks
        .iter_mut()
        .filter(|t| t.locality != Locality::NodeLocal)
    {
        if task.ask.racks.get(offer.rack).is_some_and(|n| *n > 0) {
            task.locality = Locality::RackLocal;
        }
    }
    // The rack level (mapRackWait): past the map wait, a rack without the user's (job's) data
    // is skipped for one more wait. A job's input often sits on few racks; taken on any rack
    // at once, its maps' reads converge on those racks' links.
    let on_its_racks =
        |task: &MapTask| task.locality != Locality::OffSwitch || has_no_locality(task);
    if params.map_rack_wait
        && !no_wait(params, wait_ms)
        && !tasks.iter().any(on_its_racks)
        && !waits_over(skips, params, wait_ms, offer.now_ms, 2)
    {
        if let Some(state) = skips {
            state.count += 1;
        }
        return;
    }
    let mut fitting: Vec<&MapTask> = tasks.iter().filter(|t| qualified(t)).collect();
    if !fitting.is_empty() {
        fitting.sort_by(|a, b| {
            a.category()
                .0
                .cmp(&b.category().0)
                .then(a.cost().total_cmp(&b.cost()))
                .then(
                    a.distance_to(available)
                        .total_cmp(&b.distance_to(available)),
                )
        });
        out.extend(fitting.iter().map(|t| t.entry(t.locality, t.category().1)));
        return;
    }
    // Lines 13–16: nothing fits; the data-local map that exceeds the space least, else the
    // smallest output of all.
    let by_output = |a: &&MapTask, b: &&MapTask| -> Ordering {
        a.prediction
            .task_output_bytes
            .total_cmp(&b.prediction.task_output_bytes)
    };
    let (mut local, mut rest): (Vec<&MapTask>, Vec<&MapTask>) = tasks
        .iter()
        .partition(|t| t.locality == Locality::NodeLocal);
    local.sort_by(by_output);
    rest.sort_by(by_output);
    out.extend(
        local
            .iter()
            .map(|t| t.entry(Locality::NodeLocal, "nas:mts:relaxed:local-smallest")),
    );
    out.extend(
        rest.iter()
            .map(|t| t.entry(Locality::OffSwitch, "nas:mts:relaxed:smallest")),
    );
}

/// A job's reduce ask, as the reduce schedulers see it.
struct ReduceJob<'a> {
    candidate: &'a Candidate<'a>,
    ask: &'a Ask,
    class: Class,
    shuffle_bytes: f64,
}

impl ReduceJob<'_> {
    fn entry(&self, reason: &'static str) -> PlanEntry {
        PlanEntry {
            app: self.candidate.id.clone(),
            priority: self.ask.priority,
            locality: Locality::OffSwitch,
            reason: reason.into(),
        }
    }
}

/// The user's reduce asks, by job arrival.
fn reduce_jobs<'a>(turn: &'a UserTurn<'a>) -> Vec<ReduceJob<'a>> {
    turn.candidates
        .iter()
        .flat_map(move |candidate| {
            let prediction = predict(candidate.app, turn.settings);
            reduce_asks(candidate.app).map(move |ask| ReduceJob {
                candidate,
                ask,
                class: classify(&prediction, turn.params),
                shuffle_bytes: prediction.shuffle_bytes,
            })
        })
        .collect()
}

/// Whether the job's reduces on `rack` (running or done) reached its ReduceNum there,
/// `TotalReduces × MapOutputPortion` as the paper writes it (a fraction of a reduce); before
/// any map finished the output counts as spread evenly over the `racks`.
fn reached_reduce_num(app: &App, rack: &RackName, racks: f64) -> bool {
    let job = &app.job;
    let total = job.known_reduces(app.pending(TaskKind::Reduce)) as f64;
    let portion = job.map_output_share_on(rack).unwrap_or(1.0 / racks);
    f64::from(job.reduces_on(rack)) >= total * portion
}

/// CA-RTS's ReduceNum made binding for a bounded wait: a reduce of a job that `reduce_held_off`
/// the offered rack is kept off it until the job has waited `reduceRackWaitMs` since the first
/// such hold after its last reduce start. Ranking alone moved nothing on a saturated cluster:
/// a user rarely has two reduce jobs to choose between, so its one job's reduce took whichever
/// container came first, wherever the job's output was. A held reduce leaves the container to
/// FairScheduler's next queue, and the guard above every policy still bounds the job's wait.
fn hold_reduces<'a>(
    turn: &UserTurn,
    nas: &mut Nas,
    jobs: Vec<ReduceJob<'a>>,
) -> Vec<ReduceJob<'a>> {
    let wait_ms = turn.params.reduce_rack_wait_ms;
    if wait_ms == 0 {
        return jobs;
    }
    let now_ms = turn.offer.now_ms;
    jobs.into_iter()
        .filter(|job| {
            if !reduce_held_off(job.candidate.app, turn.offer.rack) {
                return true;
            }
            let since = *nas
                .reduce_holds
                .entry(job.candidate.id.clone())
                .or_insert(now_ms);
            now_ms.saturating_sub(since) >= wait_ms
        })
        .collect()
}

/// Algorithm 4 for one user, on a congested rack, with its reduce skips.
fn cr_rts(
    turn: &UserTurn,
    nas: &mut Nas,
    jobs: Vec<ReduceJob>,
    skips: &mut Option<Skips>,
    out: &mut Vec<PlanEntry>,
) {
    let UserTurn {
        queue,
        params,
        offer,
        ..
    } = *turn;
    if jobs.is_empty() {
        *skips = None;
        return;
    }
    // Heavy and medium reduces wait for the rack to clear: tag them so CA-RTS serves them
    // first then. A tag covers the reduces the job has pending now.
    for job in jobs.iter().filter(|job| job.class != Class::Light) {
        let pending = job.candidate.app.pending(TaskKind::Reduce);
        nas.delayed_reduces
            .insert(job.candidate.id.clone(), pending);
    }
    // Lines 2–6: within the bound, shuffle-light reduces only, the least shuffle first; a
    // user without one is skipped.
    let has_light = jobs.iter().any(|j| j.class == Class::Light);
    if !relaxed_else_skip(
        skips,
        Waiter::User(queue),
        params,
        params.max_wait_ms,
        offer.now_ms,
        "congested-reduce",
        !has_light,
    ) {
        let mut light: Vec<&ReduceJob> = jobs.iter().filter(|j| j.class == Class::Light).collect();
        light.sort_by(|a, b| a.shuffle_bytes.total_cmp(&b.shuffle_bytes));
        out.extend(light.iter().map(|j| j.entry("nas:cr-rts:light-reduce")));
        return;
    }
    // Lines 7–8: any reduce, the lightest class first.
    let mut all: Vec<&ReduceJob> = jobs.iter().collect();
    all.sort_by_key(|j| j.class);
    out.extend(all.iter().map(|j| j.entry(j.class.relaxed_reason())));
}

/// Algorithm 3 for one user, on an uncongested rack.
fn ca_rts(turn: &UserTurn, nas: &Nas, jobs: Vec<ReduceJob>, out: &mut Vec<PlanEntry>) {
    let racks = turn.state.rack_count().max(1) as f64;
    let mut ranked: Vec<(usize, bool, bool, ReduceJob)> = jobs
        .into_iter()
        .map(|job| {
            let (id, app) = (job.candidate.id, job.candidate.app);
            let reached = reached_reduce_num(app, turn.offer.rack, racks);
            let category = match (reached, job.class) {
                (false, Class::Heavy) => 0,
                (false, Class::Medium) => 1,
                (false, Class::Light) => 2,
                (true, Class::Light) => 3,
                (true, Class::Medium) => 4,
                (true, Class::Heavy) => 5,
            };
            let delayed = nas.delayed_reduces(id) > 0;
            let maps_done = app.pending(TaskKind::Map) == 0 && app.job.running_maps == 0;
            (category, delayed, maps_done, job)
        })
        .collect();
    // Inside a category: delayed reduces, then jobs whose maps are all done, then the larger
    // shuffle (to use the bandwidth while the rack is not congested); then arrival.
    ranked.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.cmp(&a.2))
            .then(b.3.shuffle_bytes.total_cmp(&a.3.shuffle_bytes))
    });
    out.extend(
        ranked
            .iter()
            .map(|(category, _, _, job)| job.entry(job.class.ca_rts_reason(*category >= 3))),
    );
}
