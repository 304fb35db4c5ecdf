//! ShuffleWatcher (ATC'14): NASS orders a queue's tasks by whether the offered node's rack is
//! network-saturated (NetSat); SAMP picks, once per job, the racks its maps should prefer;
//! SARP fixes, once per job, how its reduces split over racks; a starvation window ranks older
//! jobs first; relaxed fairness lets a queue with nothing preferred pass its turn. Inside
//! NASS's map lines a job waits, for a bounded time, for a node-local map or one on its preferred
//! racks (delay scheduling's mechanism, which is what makes SAMP's preference bind); with
//! `reduceRackWaitMs` a shuffle-light job's reduce, which SARP leaves free, waits the same way
//! for a rack near its output.

mod nass;
pub mod samp;
pub mod sarp;

use crate::mapreduce::{TaskKind, MAP_PRIORITY};
use crate::policy::{
    containers_fitting, log_storage_without_locality, reachable_map_locality, reduce_held_off,
    AppSlots, Context, Policy, Turn,
};
use crate::predictor::RatioSource;
use crate::protocol::{AppId, Locality, Plan, PlanEntry, RackName};
use crate::settings::{params::no_check, Declaration, Param, ParamValues};
use crate::state::{App, ClusterState, Observation};
use samp::{CapacityRule, RackCapacity, SampChoice};
use std::collections::BTreeMap;
use std::sync::Arc;

const RELAXED_FAIRNESS: &str = "relaxedFairness";
const SARP_QUOTA: &str = "sarpQuota";
const SARP_SHARES: &str = "sarpShares";
const SHUFFLE_HEAVY_RATIO: &str = "shuffleHeavyRatio";
const MAP_COMPLETION_THRESHOLD: &str = "mapCompletionThreshold";
const STARVATION_WINDOW_MS: &str = "starvationWindowMs";
const RELAXED_INTERVAL_MS: &str = "relaxedIntervalMs";
const LOCALITY_WAIT_MS: &str = "localityWaitMs";
const RACK_WAIT_MS: &str = "rackWaitMs";
const OFF_RACK_MAPS: &str = "offRackMaps";
const SAMP_RECHECK: &str = "sampRecheck";
const SAMP_CAPACITY: &str = "sampCapacity";
const SAMP_REMOTE_READS_PER_RACK: &str = "sampRemoteReadsPerRack";
const REDUCE_RACK_WAIT_MS: &str = "reduceRackWaitMs";
const JOB_ORDER: &str = "jobOrder";

/// How long a shufflewatcher queue holds an app back at most: its starvation guard, unless the
/// queue or yarn-site sets one, and its maps' wait for their SAMP racks (`rackWaitMs`).
/// Measured (docs/simulator.md, "ShuffleWatcher's waits at 60 s instead of 30"): against 30 s,
/// the other policies' guard, it cut the cross-rack shuffle 14-18 % wherever input was spread
/// over the racks (FB-2010, FB-2009, the mix) at throughput within the seeds' spread, and it
/// kept the maximum sustainable loads. The guard is not raised for every policy: NAS lost
/// 3-5 % at 60 s.
const HOLD_BOUND_MS: u64 = 60_000;

/// The `<rackwise>` elements of a `shufflewatcher` queue.
const QUEUE_PARAMS: &[Param] = &[
    Param::bool(
        RELAXED_FAIRNESS,
        // Measured with sampRecheck (docs/simulator.md, "The defaults chosen by measurement"):
        // ahead of or level with both off on FB-2010 at X = 16 and 24, the mix and FB-2009, with
        // input written from random nodes and from one rack, and within the shuffle targets.
        // FairScheduler itself passes a node to the next queue when a queue's apps all decline
        // it for locality (FSParentQueue.assignContainer), so this is delay scheduling's skip,
        // taken for the rack and bounded by relaxedIntervalMs and the starvation guard.
        true,
        "a queue with nothing preferred on the offered node may pass its turn (SW-relaxed)",
    ),
    Param::word(
        SARP_QUOTA,
        "strict",
        &["strict", "preference"],
        "strict: a shuffle-heavy job's reduces are vetoed on racks whose SARP quota is used; \
         preference: ranked last (Figure 3 as written)",
    ),
    Param::word(
        SARP_SHARES,
        "measured",
        &["measured", "first-ask"],
        "measured: a shuffle-heavy job's reduce quotas follow its finished maps per rack at \
         every reduce placement (once mapCompletionThreshold of them finished); first-ask: \
         fixed when its reduces are first asked for",
    ),
    Param::number(
        SHUFFLE_HEAVY_RATIO,
        1.0,
        (0.0, true),
        1.0e6,
        "shuffle/input ratio above which a job is shuffle-heavy",
    ),
    Param::number(
        MAP_COMPLETION_THRESHOLD,
        0.15,
        (0.0, false),
        1.0,
        "fraction of a job's maps completed before SARP trusts measured map output",
    ),
    Param::number(
        STARVATION_WINDOW_MS,
        600_000.0,
        (0.0, false),
        86_400_000.0,
        // Read where the plan's order between a user's jobs is: with jobOrder=nass, and with
        // apps only after the starvation guard's entries on an offer where it lifts an app, which
        // changed no figure of the runs measured (docs/simulator.md, "What each trace's bytes
        // are worth").
        "with jobOrder=nass, jobs from an earlier submission window of this length go first \
         (with apps FairScheduler orders a user's jobs); 0 = off",
    ),
    Param::number(
        RELAXED_INTERVAL_MS,
        5_000.0,
        (0.0, false),
        3_600_000.0,
        "longest a user may be skipped under relaxed fairness",
    ),
    Param::number(
        LOCALITY_WAIT_MS,
        // Measured (policy/BENCHMARK.md): 2 s beat 5 s (delay's setting) and 10 s on both
        // workloads; 1 s traded locality for nothing more.
        2_000.0,
        (0.0, false),
        3_600_000.0,
        "how long a job's maps wait for a node-local placement before taking rack-local ones \
         (on its SAMP racks), and, for a job without a SAMP choice, for a rack-local one before \
         any; 0 = no wait",
    ),
    Param::number(
        RACK_WAIT_MS,
        // What makes SAMP's preference bind: at 2 s (localityWaitMs) stock TeraSort beside
        // WordCount on two racks (CrossRackShuffleIT) moved 0.84 of FairScheduler's shuffle
        // across racks, held until the starvation guard 0.02. The guard's own default here,
        // so a default install holds maps for their racks as long as the guard allows and no
        // longer.
        HOLD_BOUND_MS as f64,
        (0.0, false),
        3_600_000.0,
        "how long a job's maps wait for a node of its SAMP racks before taking any node \
         elsewhere; 0 = no wait",
    ),
    Param::word(
        OFF_RACK_MAPS,
        // Measured (docs/simulator.md, "Rack-local maps off the SAMP racks"): in SAMP's cost a
        // rack-local read elsewhere crosses no rack link, as a node-local one does not, and
        // the jobs it released were the ones most often held.
        "rack-local",
        &["none", "node-local", "rack-local"],
        "after localityWaitMs, a job's maps also take a node off its SAMP racks that holds \
         their split (node-local) or sits on a rack holding it (rack-local), when SAMP's cost \
         model prices such a map below a remote read on its racks; none: only its racks until \
         rackWaitMs",
    ),
    Param::bool(
        SAMP_RECHECK,
        // Measured with relaxedFairness (docs/simulator.md, "The defaults chosen by
        // measurement"). Alone, before HDFS's replica order was modelled, it traded cross-rack
        // shuffle over 0.85x fair's for 1.6-6.0 % throughput; with it and since, the shuffle is
        // 0.82-0.85x at X = 16 and 24 and the pair is the faster configuration.
        true,
        "once a job's finished maps' counters measure its shuffle/input ratio, SAMP weighs its \
         choice again with that ratio for the maps still pending, and the job drops its rack \
         preference when every rack is then the best set; false: SAMP's first choice stands",
    ),
    Param::word(
        SAMP_CAPACITY,
        // Measured (docs/simulator.md, "What SAMP needs from the data layout"): with input
        // written from random nodes it decides as always did (the same runs, seeds 1-3, on
        // FB-2010 and the mix); with each job's input written from one rack it decides as never
        // and gives 1.32x delay at X = 24 and 1.22x on the mix, where always gives 1.16x and 0.87x.
        "remote-reads",
        &["always", "remote-reads", "never"],
        "which of SAMP's rack sets must be able to run as many of the job's maps at once as an \
         even share of the cluster gives it (their containers shared with the other jobs' \
         claims on them, each job claiming the share of its maps it puts on a rack): always; \
         remote-reads, only a set that forces remote map reads (a set holding every split \
         trades the job's concurrency for shuffle locality alone); never (Figure 4 as written)",
    ),
    Param::number(
        SAMP_REMOTE_READS_PER_RACK,
        // Off by default: a trade for the operator, not a gain (docs/simulator.md, "A cap on how
        // many of a job's maps read across racks at once"). On FB-2010 from random nodes, 45
        // brought the p95 turnaround below saturation near delay scheduling's and raised the
        // highest load sustained at a latency limit common to every policy to 5.5-5.75 from
        // 4.5-5 (three seed sets, one of them not the one 45 was picked on), at 1-5 % of the
        // throughput at saturation. On the seeds it was picked on, 30 and 60 sustained a quarter
        // step less; on the others, as much. Where the sets jobs choose hold their splits it
        // changes nothing.
        0.0,
        (0.0, false),
        1.0e6,
        "the most of a job's maps, running at its even share of the cluster, that may read \
         their split across racks at once per rack of a SAMP set short of every rack: a set \
         forcing more is not chosen, so on a quiet cluster a big job's reads are spread over \
         more rack links, and as shares shrink under load its maps concentrate again; 0 = no cap",
    ),
    Param::number(
        REDUCE_RACK_WAIT_MS,
        // Measured (docs/simulator.md, "A bounded rack wait for shuffle-light reduces"): on
        // FB-2010 at X = 16 and 24 over seeds 1-6 it cut the cross-rack shuffle from 0.844x and
        // 0.833x fair's to 0.780x and 0.813x at throughput within the seeds' spread, and on the
        // mix it raised both; 5 s is NAS's and delay scheduling's wait.
        5_000.0,
        (0.0, false),
        3_600_000.0,
        "how long a shuffle-light job's reduce waits for a rack near its finished maps' output \
         (held off a rack with under half the output of the job's busiest rack once the job's \
         reduces there reached their share); 0 = no wait",
    ),
    Param::word(
        JOB_ORDER,
        // Measured (docs/simulator.md, "NAS between a user's jobs").
        "apps",
        &["nass", "apps"],
        "apps: between a user's jobs FairScheduler's app order decides (the leaf queue's \
         schedulingPolicy: under fair share fewer running containers, then earlier arrival), \
         NASS's categories within a job; nass: NASS's categories across the user's jobs \
         (Figure 3 as written)",
    ),
];

/// A queue's parameters, read from its declared values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Params {
    /// A job is shuffle-heavy when its shuffle/input ratio exceeds this (paper: 1.0).
    pub shuffle_heavy_ratio: f64,
    /// SARP trusts measured map output once this fraction of a job's maps completed (15 %).
    pub map_completion_threshold: f64,
    /// Jobs submitted in an earlier window of this length go first (10 min); 0 turns it off.
    pub starvation_window_ms: u64,
    pub relaxed_fairness: bool,
    /// For how long relaxed fairness may skip a user (5 s, as Delay Scheduling).
    pub relaxed_interval_ms: u64,
    /// How long a job waits for node-local maps (and, without a SAMP choice, rack-local ones).
    pub locality_wait_ms: u64,
    /// How long a job waits for a node of its SAMP racks before taking any node elsewhere.
    pub rack_wait_ms: u64,
    /// SARP quotas: `strict` vetoes a shuffle-heavy job's reduces on racks whose quota is
    /// used; `preference` only ranks them lower (Figure 3 lines 9/14 taken literally).
    pub strict_reduce_quotas: bool,
    /// SARP's split: re-read from the job's finished maps at every reduce placement
    /// (`measured`), or fixed at its first reduce ask (`first-ask`).
    pub measured_reduce_shares: bool,
    /// The furthest locality at which a job's maps take a node off its SAMP racks once they
    /// waited `localityWaitMs` (when SAMP's cost model says it pays); `None`: only after
    /// `rackWaitMs`.
    pub off_rack_maps: Option<Locality>,
    /// Whether SAMP's choice is weighed again, once, with the ratio the job's counters measure
    /// (a preference that no longer pays is dropped; one that does is kept as it was).
    pub samp_recheck: bool,
    /// Which of SAMP's rack sets must be able to give the job an even share of the cluster's
    /// containers (`sampCapacity`).
    pub samp_capacity: CapacityRule,
    /// The most maps of a job at its even share that a SAMP set short of every rack may make
    /// read across racks at once, per rack of the set (`sampRemoteReadsPerRack`); `None`: no cap.
    pub samp_remote_reads_per_rack: Option<f64>,
    /// How long a shuffle-light job's reduce is kept off racks far from its output; 0: never.
    pub reduce_rack_wait_ms: u64,
    /// Whether FairScheduler's app order, not NASS's categories, decides between a user's jobs.
    pub jobs_by_app_order: bool,
}

impl Params {
    fn of(values: &ParamValues) -> Params {
        Params {
            shuffle_heavy_ratio: values.number(SHUFFLE_HEAVY_RATIO),
            map_completion_threshold: values.number(MAP_COMPLETION_THRESHOLD),
            starvation_window_ms: values.number(STARVATION_WINDOW_MS) as u64,
            relaxed_fairness: values.bool(RELAXED_FAIRNESS),
            relaxed_interval_ms: values.number(RELAXED_INTERVAL_MS) as u64,
            locality_wait_ms: values.number(LOCALITY_WAIT_MS) as u64,
            rack_wait_ms: values.number(RACK_WAIT_MS) as u64,
            strict_reduce_quotas: values.word(SARP_QUOTA) == "strict",
            measured_reduce_shares: values.word(SARP_SHARES) == "measured",
            off_rack_maps: match values.word(OFF_RACK_MAPS) {
                "node-local" => Some(Locality::NodeLocal),
                "rack-local" => Some(Locality::RackLocal),
                _ => None,
            },
            samp_recheck: values.bool(SAMP_RECHECK),
            samp_capacity: match values.word(SAMP_CAPACITY) {
                "remote-reads" => CapacityRule::RemoteReads,
                "never" => CapacityRule::Never,
                _ => CapacityRule::Always,
            },
            samp_remote_reads_per_rack: Some(values.number(SAMP_REMOTE_READS_PER_RACK))
                .filter(|cap| *cap > 0.0),
            reduce_rack_wait_ms: values.number(REDUCE_RACK_WAIT_MS) as u64,
            jobs_by_app_order: values.word(JOB_ORDER) == "apps",
        }
    }

    /// Whether `app` is shuffle-heavy: its ratio as estimated now above `shuffleHeavyRatio`.
    pub(super) fn shuffle_heavy(&self, app: &App) -> bool {
        app.job.estimate.ratio > self.shuffle_heavy_ratio
    }
}

/// What ShuffleWatcher decided for one job, once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobPlacement {
    /// SAMP's choice, made when the job's first map asks arrived.
    pub samp: Option<SampChoice>,
    /// SARP's per-rack reduce shares as they stood when the job's reduces were first asked
    /// for: the quotas under `sarpShares=first-ask`, and under `measured` until
    /// `mapCompletionThreshold` of its maps finished.
    pub reduce_shares: Option<BTreeMap<RackName, f64>>,
    sarp_invoked: bool,
    /// Whether SAMP's choice was weighed again with the measured ratio (`sampRecheck`).
    samp_rechecked: bool,
    /// The job's map-locality wait, from the first offer that saw its maps.
    pub map_wait: Option<MapWait>,
    /// The closest locality any of its pending maps can get (`reachable_map_locality`), as of
    /// its latest ask table: worked out when the table changes (the MapReduce AM re-sends it
    /// after every allocation), not on every offer.
    pub reachable: Option<Locality>,
    /// Since when `reduceRackWaitMs` has kept the job's reduces off racks far from its output:
    /// from the first such hold after its last reduce start.
    reduce_hold_since: Option<u64>,
}

/// How far a job's maps have relaxed their placement (delay scheduling's allowed level, with
/// SAMP's racks in it): level 0 takes node-local maps on the job's preferred racks; level 1 also
/// rack-local maps there and any map on them (SAMP accepts those remote reads), and, where
/// SAMP's cost model says it pays (`offRackMaps`), maps off the racks with their split's
/// locality; level 2 any map. A job without a SAMP choice waits as delay scheduling does
/// (node-local, then rack-local, then any). A job rises from level 0 after `localityWaitMs`
/// without a placement, and from level 1 after `rackWaitMs` (`localityWaitMs` without a SAMP
/// choice); a placement sets the level it needed, as FairScheduler resets its allowed locality
/// to the one it just assigned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapWait {
    pub level: u8,
    pub since_ms: u64,
}

/// The most relaxed level.
const ANY_MAP: u8 = 2;

impl MapWait {
    /// The level a map at `locality` needs on a rack the job prefers (`Some(true)`), does not
    /// prefer (`Some(false)`), or when it has no SAMP preference (`None`); `off_racks` is the
    /// job's `JobPlacement::off_racks` now.
    fn needed(locality: Locality, preferred: Option<bool>, off_racks: Option<Locality>) -> u8 {
        match (locality, preferred) {
            (Locality::NodeLocal, Some(true) | None) => 0,
            (Locality::RackLocal, Some(true) | None) | (Locality::OffSwitch, Some(true)) => 1,
            // Off the SAMP racks a map puts its output where the job's reduces will not be;
            // once the job has waited for a node-local map on its racks, the alternative there is
            // a remote read, which costs more when SAMP's cost model says so.
            (Locality::NodeLocal | Locality::RackLocal, Some(false))
                if off_racks.is_some_and(|furthest| locality <= furthest) =>
            {
                1
            }
            (Locality::NodeLocal | Locality::RackLocal, Some(false)) | (Locality::OffSwitch, _) => {
                ANY_MAP
            }
        }
    }

    /// The level now: the lowest the job can ever use (no live split host skips the node
    /// level; no locality and no preference leaves nothing to wait for), then one more per wait
    /// served since the job's last placement.
    fn level(&self, now_ms: u64, reachable: Locality, has_preference: bool, params: &Params) -> u8 {
        // Levels no split can use are skipped, not waited through.
        let floor = match (reachable, has_preference) {
            (Locality::NodeLocal, _) => 0,
            (Locality::RackLocal, _) | (Locality::OffSwitch, true) => 1,
            (Locality::OffSwitch, false) => ANY_MAP,
        };
        let mut level = self.level.max(floor);
        let mut waited = now_ms.saturating_sub(self.since_ms);
        while level < ANY_MAP {
            let wait = if level == 1 && has_preference {
                params.rack_wait_ms
            } else {
                params.locality_wait_ms
            };
            if waited < wait {
                break;
            }
            waited -= wait;
            level += 1;
        }
        level
    }
}

impl JobPlacement {
    /// Whether the job's SAMP racks hold `rack`; `None` without a SAMP preference.
    pub fn prefers(&self, rack: &RackName) -> Option<bool> {
        self.samp.as_ref().and_then(|samp| samp.prefers(rack))
    }

    /// The furthest locality at which the job's maps take a node off its SAMP racks at level 1:
    /// the queue's `offRackMaps` where SAMP's cost, with the job's shuffle/input `ratio` as
    /// estimated now (its maps' counters once some finished), prices such a map below a remote
    /// read on its racks; `None`: only at level 2.
    fn off_racks(&self, ratio: f64, params: &Params) -> Option<Locality> {
        params.off_rack_maps.filter(|_| {
            self.samp
                .as_ref()
                .is_some_and(|choice| choice.local_elsewhere_pays(ratio))
        })
    }

    /// `reduceRackWaitMs`: whether the job's reduces stay off `rack` on this offer. A
    /// shuffle-light job's reduce has no SARP quota, and on a saturated cluster it takes the
    /// first container its queue gets, wherever its output is; the hold lasts from the first
    /// offer that holds it until it has waited `reduceRackWaitMs`, and a reduce placed anywhere
    /// starts the next wait afresh.
    fn holds_reduces(&mut self, app: &App, rack: &RackName, params: &Params, now_ms: u64) -> bool {
        if params.reduce_rack_wait_ms == 0
            || params.shuffle_heavy(app)
            || app.pending(TaskKind::Reduce) == 0
            || !reduce_held_off(app, rack)
        {
            return false;
        }
        let since = *self.reduce_hold_since.get_or_insert(now_ms);
        now_ms.saturating_sub(since) < params.reduce_rack_wait_ms
    }

    /// Whether SAMP prefers some racks over others for the job.
    fn has_preference(&self) -> bool {
        self.samp
            .as_ref()
            .is_some_and(|samp| !samp.preferred.is_empty())
    }
}

/// ShuffleWatcher's memory: each job's SAMP and SARP decisions, and since when relaxed
/// fairness has been skipping each queue.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShuffleWatcher {
    /// Each job's decisions, at the job's slot in the state: every offer reads the decisions of
    /// every candidate, without a search by id.
    jobs: AppSlots<JobPlacement>,
    /// A queue is skipped only while it has nothing preferred to run here, for at most its
    /// `relaxedIntervalMs`.
    relaxed_skips: BTreeMap<String, u64>,
    /// The queues that would pass their turn on this offer (relaxed fairness), settled once
    /// every queue is planned.
    passing: Vec<Arc<str>>,
    /// NASS's per-ask buffer, kept (empty) across offers so that an offer allocates none.
    ask_facts: Vec<nass::AskFacts>,
}

impl ShuffleWatcher {
    /// SAMP's and SARP's decisions for a job, if any was made.
    pub fn job(&self, app: &AppId) -> Option<&JobPlacement> {
        self.jobs.find(app)
    }

    /// For each rack, the claims on it of the known jobs other than `app` (SAMP's tie-break
    /// and the containers a rack can give).
    fn rack_claims_of_jobs_other_than(&self, app: &AppId) -> BTreeMap<RackName, f64> {
        let mut claims = BTreeMap::new();
        for (id, other) in self.jobs.iter() {
            if id == app {
                continue;
            }
            for (rack, claim) in other.samp.iter().flat_map(SampChoice::claims) {
                *claims.entry(rack.clone()).or_insert(0.0) += claim;
            }
        }
        claims
    }

    /// The once-per-job steps on a new ask table: SAMP when the first map asks arrive (their
    /// rack counts are where the input blocks are), SARP when reduces are first asked for.
    fn shuffle_watch(
        &mut self,
        state: &ClusterState,
        id: &AppId,
        slot: usize,
        app: &App,
        params: &Params,
    ) {
        let maps = app.asks.get(&MAP_PRIORITY);
        let samp_due = maps.is_some() && self.jobs.get(slot, id).is_none_or(|j| j.samp.is_none());
        // The other jobs' claims (for SAMP's capacity rule and its tie-break) take a walk over
        // every job, so they are summed only when SAMP runs (once per job). This ask table
        // changes no other job's choice.
        let claimed_by_others = samp_due.then(|| self.rack_claims_of_jobs_other_than(id));
        let placement = self.jobs.entry(slot, id);
        let reachable = reachable_map_locality(app, state);
        if reachable == Locality::OffSwitch && placement.reachable != Some(reachable) {
            log_storage_without_locality("shufflewatcher", app);
        }
        placement.reachable = Some(reachable);
        if let (Some(claimed_by_others), Some(maps)) = (claimed_by_others, maps) {
            let capacity = rack_capacity(state, maps, params);
            placement.samp = samp::choose(
                maps.any,
                &maps.racks,
                app.job.estimate.ratio,
                &claimed_by_others,
                &capacity,
            );
            // Once per job: the one place an operator can see why its maps cluster, with every
            // input of the choice.
            if let Some(choice) = &placement.samp {
                let read_cap = capacity
                    .remote_reads_per_rack
                    .map(|cap| {
                        format!(
                            ", at most {cap} of them reading across racks at once per rack of a \
                             set short of every rack"
                        )
                    })
                    .unwrap_or_default();
                log::info!(
                    "job '{}' (queue {}): SAMP prefers {} for its {} maps \
                     (splits per rack {:?}, other jobs' claims per rack {}, best locality any \
                     split can get {:?}, an even share of {:.0} containers{read_cap}), \
                     tentative reduce shares {}",
                    app.name,
                    app.queue,
                    if choice.preferred.is_empty() {
                        "no rack over another (its best set is every rack)".to_string()
                    } else {
                        let racks: Vec<&str> = choice.preferred.iter().map(|r| &*r.0).collect();
                        format!("racks {}", racks.join(","))
                    },
                    maps.any,
                    maps.racks,
                    format_shares(&claimed_by_others),
                    reachable,
                    capacity.fair_share,
                    format_shares(&choice.tentative_shares)
                );
            }
        }
        let pending_reduces = app.pending(TaskKind::Reduce);
        if !placement.sarp_invoked && pending_reduces > 0 {
            placement.sarp_invoked = true;
            let known_maps = app.job.known_maps(app.pending(TaskKind::Map));
            placement.reduce_shares = sarp::reduce_shares(
                &app.job,
                placement.samp.as_ref(),
                known_maps,
                params.map_completion_threshold,
            );
            // The job as the core holds it when SARP runs, by rack: after a ResourceManager
            // restart, what an operator compares with the line the previous RM wrote.
            log::info!(
                "job '{}' (queue {}): SARP reduce shares {} ({} of {} maps finished; \
                 running maps {}, running reduces {})",
                app.name,
                app.queue,
                placement
                    .reduce_shares
                    .as_ref()
                    .map_or_else(|| "none".to_string(), format_shares),
                app.job.finished_maps(),
                known_maps,
                format_counts(&state.running_by_rack(id, TaskKind::Map)),
                format_counts(&state.running_by_rack(id, TaskKind::Reduce))
            );
        }
    }

    /// `sampRecheck`: SAMP chose with the ratio known when the job's first map asks came; for a
    /// job without a hint or history that is the prior 1.0, at which a large job's cheapest set
    /// is often one rack although most of its splits are elsewhere. The first time its finished
    /// maps' counters measure the ratio, SAMP weighs the maps still pending again with it; when
    /// every rack is then the best set, the job drops its preference and its maps wait for
    /// locality as a job without one. A preference that still pays stands as it was: moving the
    /// job to other racks would split the output its placed maps already left on the first ones.
    fn weigh_samp_again(
        &mut self,
        state: &ClusterState,
        id: &AppId,
        slot: usize,
        app: &App,
        params: &Params,
    ) {
        let due = app.job.estimate.source == RatioSource::Counters
            && self
                .jobs
                .get(slot, id)
                .is_some_and(|job| !job.samp_rechecked && job.has_preference());
        let Some(maps) = app.asks.get(&MAP_PRIORITY).filter(|_| due) else {
            return;
        };
        let claimed_by_others = self.rack_claims_of_jobs_other_than(id);
        let Some(placement) = self.jobs.get_mut(slot, id) else {
            return;
        };
        placement.samp_rechecked = true;
        let again = samp::choose(
            maps.any,
            &maps.racks,
            app.job.estimate.ratio,
            &claimed_by_others,
            &rack_capacity(state, maps, params),
        );
        if let Some(every_rack) = again.filter(|choice| choice.preferred.is_empty()) {
            log::info!(
                "job '{}' (queue {}): its maps' counters measure a shuffle/input ratio of {:.3}, \
                 at which SAMP's best set for its {} pending maps is every rack: it drops its \
                 rack preference",
                app.name,
                app.queue,
                app.job.estimate.ratio,
                maps.any
            );
            placement.samp = Some(every_rack);
        }
    }

    /// ShuffleWatcher's relaxed fairness (SW-relaxed, as Delay Scheduling relaxes fairness):
    /// whether a queue with nothing preferred to run on this node would pass its turn, for at
    /// most `relaxedIntervalMs` in a row. `settle` decides whether it does.
    fn would_pass(&mut self, queue: &str, preferred: bool, params: &Params, now_ms: u64) -> bool {
        if preferred {
            self.relaxed_skips.remove(queue);
            return false;
        }
        // The queue's name is copied only when its skipping starts, not on every offer it lasts.
        let since = match self.relaxed_skips.get(queue) {
            Some(since) => *since,
            None => {
                self.relaxed_skips.insert(queue.to_string(), now_ms);
                now_ms
            }
        };
        now_ms.saturating_sub(since) < params.relaxed_interval_ms
    }
}

impl Policy for ShuffleWatcher {
    fn declaration(&self) -> Declaration {
        Declaration {
            name: "shufflewatcher",
            queue_params: QUEUE_PARAMS,
            cluster_params: &[],
            check: no_check,
            steers: true,
            reads_netsat: true,
            starvation_guard_ms: Some(HOLD_BOUND_MS),
        }
    }

    fn observe(&mut self, context: &Context, observation: &Observation) {
        match observation {
            // A re-added app starts over.
            // A (re-)added app starts over at its slot.
            Observation::AppAdded { app } => {
                if let Some(slot) = context.state.apps.slot_of(app) {
                    self.jobs.clear(slot);
                }
            }
            Observation::AppRemoved { app } => self.jobs.forget(app),
            Observation::AsksChanged { app: id } => {
                let state: &ClusterState = context.state;
                let Some((slot, app)) = state.apps.with_slot(id) else {
                    return;
                };
                if !app.is_mapreduce {
                    return;
                }
                if let Some(values) = context.steered(&app.queue) {
                    self.shuffle_watch(state, id, slot, app, values.typed(Params::of));
                }
            }
            Observation::JobStats { app: id } => {
                let state: &ClusterState = context.state;
                let Some((slot, app)) = state.apps.with_slot(id) else {
                    return;
                };
                let params = context.steered(&app.queue).map(|v| v.typed(Params::of));
                if let Some(params) = params.filter(|p| p.samp_recheck) {
                    self.weigh_samp_again(state, id, slot, app, params);
                }
            }
            // A placed reduce ends its job's reduce hold.
            Observation::TaskStarted {
                app,
                kind: TaskKind::Reduce,
                ..
            } => {
                if let Some(slot) = context.state.apps.slot_of(app) {
                    if let Some(placement) = self.jobs.get_mut(slot, app) {
                        placement.reduce_hold_since = None;
                    }
                }
            }
            // A placed map sets the job's wait to the level it needed, from now.
            Observation::TaskStarted {
                app,
                rack,
                kind: TaskKind::Map,
                locality,
                time_ms,
                ..
            } => {
                let Some((slot, state_app)) = context.state.apps.with_slot(app) else {
                    return;
                };
                let Some(values) = context.steered(&state_app.queue) else {
                    return;
                };
                let params = values.typed(Params::of);
                if let Some(placement) = self.jobs.get_mut(slot, app) {
                    let off_racks = placement.off_racks(state_app.job.estimate.ratio, params);
                    placement.map_wait = Some(MapWait {
                        level: MapWait::needed(*locality, placement.prefers(rack), off_racks),
                        since_ms: *time_ms,
                    });
                }
            }
            _ => {}
        }
    }

    fn rank(&mut self, turn: &Turn, entries: &mut Vec<PlanEntry>) {
        let params = turn.params.typed(Params::of);
        let now_ms = turn.offer.now_ms;
        // A job's map wait starts at the first offer that sees its maps, and its reduce hold
        // at the first offer that holds it.
        let reduce_held: Vec<bool> = turn
            .candidates
            .iter()
            .map(|candidate| {
                let Some(placement) = self.jobs.get_mut(candidate.slot, candidate.id) else {
                    return false;
                };
                if placement.map_wait.is_none() && candidate.app.pending(TaskKind::Map) > 0 {
                    placement.map_wait = Some(MapWait {
                        level: 0,
                        since_ms: now_ms,
                    });
                }
                placement.holds_reduces(candidate.app, turn.offer.rack, params, now_ms)
            })
            .collect();
        let mut ask_facts = std::mem::take(&mut self.ask_facts);
        let jobs: Vec<nass::JobTurn> = turn
            .candidates
            .iter()
            .zip(reduce_held)
            .map(|(candidate, reduce_held)| {
                let placement = self.jobs.get(candidate.slot, candidate.id);
                // A job ShuffleWatcher knows nothing of is not held.
                let level = placement.map_or(ANY_MAP, |placement| {
                    placement.map_wait.map_or(ANY_MAP, |wait| {
                        wait.level(
                            now_ms,
                            placement.reachable.unwrap_or(Locality::NodeLocal),
                            placement.has_preference(),
                            params,
                        )
                    })
                });
                nass::JobTurn {
                    placement,
                    level,
                    reduce_held,
                }
            })
            .collect();
        let preferred = nass::rank(
            turn.candidates,
            &jobs,
            params,
            turn.offer,
            &mut ask_facts,
            entries,
        );
        ask_facts.clear();
        self.ask_facts = ask_facts;
        if params.relaxed_fairness
            && !turn.starved
            && self.would_pass(turn.queue, preferred, params, turn.offer.now_ms)
        {
            self.passing.push(Arc::clone(turn.queue));
        }
    }

    /// `jobOrder=apps`: NASS's categories across the user's jobs served some jobs again and
    /// again while others waited for the starvation guard (docs/simulator.md, "NAS between a
    /// user's jobs"). Except on an offer where the guard lifts an app: the lifted apps then go
    /// first, ahead of whichever app FairScheduler would offer the node to first. With the
    /// guard only loosening their locality (NAS's rule) ShuffleWatcher gains 2 % on FB-2009
    /// but loses on the mix from random nodes, on eleven of fourteen seeds (docs/simulator.md,
    /// "FairScheduler's own order between a queue's apps").
    fn scheduler_orders_apps(&self, turn: &Turn) -> bool {
        turn.params.typed(Params::of).jobs_by_app_order && !turn.starved
    }

    /// A queue passes its turn (all its apps vetoed, so FairScheduler offers the node to the
    /// next queue) only when some other queue will take the node: one whose plan has entries
    /// and does not pass too, or one the core does not steer with tasks pending. Otherwise
    /// passing would only idle the node, and the queues keep their entries: their run of
    /// skipping ends.
    fn settle(&mut self, context: &Context, plan: &mut Plan) {
        if self.passing.is_empty() {
            return;
        }
        // The plan has a queue for every steered queue with candidates, so any queue with
        // candidates beyond those is one FairScheduler schedules on its own.
        let unsteered_has_work = context.state.candidates_by_queue().len() > plan.queues.len();
        let someone_takes_the_node = unsteered_has_work
            || plan
                .queues
                .iter()
                .any(|queue| !queue.entries.is_empty() && !self.passing.contains(&queue.queue));
        for queue in plan.queues.iter_mut() {
            if self.passing.contains(&queue.queue) {
                if someone_takes_the_node {
                    queue.entries.clear();
                } else {
                    self.relaxed_skips.remove(&*queue.queue);
                }
            }
        }
        // Cleared, not dropped: the buffer is kept across offers, so an offer allocates none.
        self.passing.clear();
    }
}

/// What each rack with nodes can give a job asking for maps as `maps` does: how many of its map
/// containers the rack's nodes hold, an even share of the cluster's among the known apps, which
/// sets must give it (`sampCapacity`) and how many of its maps may read across racks at once per
/// rack of a set (`sampRemoteReadsPerRack`).
fn rack_capacity(
    state: &ClusterState,
    maps: &crate::protocol::Ask,
    params: &Params,
) -> RackCapacity {
    let asked = &maps.resources;
    // Counted in integers, which f64 holds exactly up to 2^53 containers, so the order they
    // are added in cannot change a sum. Nodes come in id order, in which a rack's nodes usually
    // follow one another: a run of them is added up before its rack is searched for.
    let mut per_rack: BTreeMap<&RackName, u64> = BTreeMap::new();
    let mut add_run = |(rack, count)| {
        let total = per_rack.entry(rack).or_insert(0);
        *total = total.saturating_add(count);
    };
    let mut run: Option<(&RackName, u64)> = None;
    for node in state.nodes.values() {
        let fit = containers_fitting(&node.capacity, asked);
        match &mut run {
            Some((rack, sum)) if *rack == &node.rack => *sum = sum.saturating_add(fit),
            _ => run
                .replace((&node.rack, fit))
                .into_iter()
                .for_each(&mut add_run),
        }
    }
    run.into_iter().for_each(add_run);
    let cluster = per_rack
        .values()
        .fold(0u64, |all, &on_rack| all.saturating_add(on_rack)) as f64;
    let containers: BTreeMap<RackName, f64> = per_rack
        .into_iter()
        .map(|(rack, count)| (rack.clone(), count as f64))
        .collect();
    let apps = state.apps.values().count().max(1) as f64;
    RackCapacity {
        containers,
        fair_share: cluster / apps,
        rule: params.samp_capacity,
        remote_reads_per_rack: params.samp_remote_reads_per_rack,
    }
}

/// Counts per rack as `/rack1=2,/rack2=1`, or `none`.
fn format_counts(counts: &BTreeMap<RackName, u32>) -> String {
    if counts.is_empty() {
        return "none".to_string();
    }
    counts
        .iter()
        .map(|(rack, count)| format!("{}={count}", rack.0))
        .collect::<Vec<_>>()
        .join(",")
}

/// `rack=share` pairs for log lines, e.g. `/rack1=0.75,/rack2=0.25`, or `none`.
fn format_shares(shares: &BTreeMap<RackName, f64>) -> String {
    if shares.is_empty() {
        return "none".to_string();
    }
    shares
        .iter()
        .map(|(rack, share)| format!("{}={share:.2}", rack.0))
        .collect::<Vec<_>>()
        .join(",")
}
