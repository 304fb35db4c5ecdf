//! The messages exchanged between the ResourceManager shim and the core.
//!
//! Everything crosses the JNI boundary as one UTF-8 JSON document per call (see
//! `docs/boundary.md`): a [`EngineConfig`] when the engine is created or reconfigured, an
//! [`OfferRequest`] per node offer, answered by an [`OfferResponse`]. Unknown fields are
//! rejected so that a Java shim and a native library from different builds fail loudly
//! instead of silently dropping data.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

// App, node and rack ids are shared strings: every offer copies some of them (the offered
// node, each steered app, the rack in the diagnostics, plan entries), and copying an `Arc`
// allocates nothing. They compare, sort, print and serialize as the strings they hold; the
// ids' order is `str`'s, computed by `cmp_as_str`.

/// A YARN application id, e.g. `application_1700000000000_0001`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AppId(pub Arc<str>);

/// A NodeManager id as FairScheduler names nodes (`host:port`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub Arc<str>);

/// A network-topology rack path, e.g. `/rack1`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RackName(pub Arc<str>);

/// A YARN container id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContainerId(pub String);

/// `str`'s order (bytewise, then the shorter first), eight bytes at a time. The core's maps
/// are searched by these ids on every offer, and `str`'s own comparison calls `memcmp` at
/// each step of a search: for ids of a few bytes the call cost more than the comparing (in
/// perf, `memcmp` was a sixth of a simulated `nas` run).
fn cmp_as_str(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let common = a.len().min(b.len());
    let mut a_words = a[..common].chunks_exact(8);
    let mut b_words = b[..common].chunks_exact(8);
    for (x, y) in a_words.by_ref().zip(b_words.by_ref()) {
        // Big-endian, so that the first differing byte decides, as bytewise.
        let word = |bytes: &[u8]| u64::from_be_bytes(bytes.try_into().unwrap_or_default());
        match word(x).cmp(&word(y)) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
    }
    for (x, y) in a_words.remainder().iter().zip(b_words.remainder()) {
        match x.cmp(y) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
    }
    a.len().cmp(&b.len())
}

macro_rules! ordered_as_str {
    ($($id:ident),*) => {$(
        impl Ord for $id {
            fn cmp(&self, other: &Self) -> Ordering {
                cmp_as_str(&self.0, &other.0)
            }
        }

        impl PartialOrd for $id {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
    )*};
}

ordered_as_str!(AppId, NodeId, RackName, ContainerId);

/// A request priority as the ApplicationMaster set it. For MapReduce the value says which
/// kind of task the ask is for (see [`crate::mapreduce::TaskKind::of_mapreduce_priority`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Priority(pub i32);

/// Memory and virtual cores of a container or node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resources {
    pub memory_mb: u64,
    pub vcores: u32,
}

/// How close a container is to its data, YARN's `NodeType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Locality {
    NodeLocal,
    RackLocal,
    OffSwitch,
}

/// Everything the engine is built from; sent whole on create and on every reload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    /// Cluster-wide `yarn.scheduler.rackwise.*` keys from yarn-site.xml, as raw strings:
    /// the core owns their parsing, defaults and validation (one key registry).
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// Every queue of the allocation file, with its `<rackwise>` element if it has one.
    #[serde(default)]
    pub queues: Vec<QueueSettings>,
    /// Shuffle ratios learned from earlier runs of recurring jobs, as last persisted.
    #[serde(default)]
    pub learned: Vec<LearnedRatio>,
    /// The most job names the learned history keeps (the shim's bound on its persisted file);
    /// `None`: no bound.
    #[serde(default)]
    pub learned_max_entries: Option<usize>,
    /// Where the queue settings came from, for error messages (the allocation file path).
    #[serde(default)]
    pub source: String,
    /// The scheduler's minimum allocation (`yarn.scheduler.minimum-allocation-*`): the default
    /// resource unit a market policy prices containers in. All zero when the shim sends none.
    #[serde(default)]
    pub minimum_allocation: Resources,
}

/// One `<queue>` of fair-scheduler.xml.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSettings {
    /// Full queue path, e.g. `root.analytics`.
    pub queue: String,
    /// The children of the queue's `<rackwise>` element, element name to text; `None`
    /// when the queue has no `<rackwise>` element and inherits from its parent.
    #[serde(default)]
    pub rackwise: Option<BTreeMap<String, String>>,
}

/// What is learned for a recurring job name: its shuffle/input ratio, and its mean map and
/// reduce task times (FRESH's profiles). Histories written before the task times were kept
/// have none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearnedRatio {
    pub job_name: String,
    pub ratio: f64,
    /// How many completed runs contributed to the ratio (0: none had counters, no ratio).
    pub runs: u32,
    /// Mean map task time, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_ms: Option<f64>,
    /// Mean reduce task time, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduce_ms: Option<f64>,
    /// How many completed runs contributed task times.
    #[serde(default)]
    pub profile_runs: u32,
}

/// One node offer: what changed since the previous offer, then the node being offered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfferRequest {
    /// The ResourceManager's clock; the core never reads a clock of its own.
    pub now_ms: u64,
    #[serde(default)]
    pub events: Vec<Event>,
    pub node: NodeOffer,
}

/// The node whose heartbeat is being served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeOffer {
    pub node: NodeId,
    pub unallocated: Resources,
    /// The NodeManager's latest utilization report, when it sends one.
    #[serde(default)]
    pub utilization: Option<Utilization>,
}

/// A NodeManager utilization report (YARN's `ResourceUtilization`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Utilization {
    pub pmem_mb: u64,
    /// Virtual cores in use.
    pub cpu: f64,
}

/// A change the shim observed since the previous offer, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// A node joined or changed capacity.
    NodeAdded {
        node: NodeId,
        host: String,
        rack: RackName,
        capacity: Resources,
    },
    NodeRemoved {
        node: NodeId,
    },
    AppAdded {
        app: AppId,
        name: String,
        user: String,
        queue: String,
        /// `MAPREDUCE` for MapReduce jobs; other types are never steered.
        app_type: String,
        #[serde(default)]
        tags: Vec<String>,
        submit_ms: u64,
    },
    AppRemoved {
        app: AppId,
    },
    /// Rows of the app's outstanding ask table that changed: each row replaces the app's row
    /// of its priority, a row with `any == 0` removes it, and priorities not named keep their
    /// rows. Where asks change, the shim reports only the priorities that changed.
    AsksChanged {
        app: AppId,
        rows: Vec<Ask>,
    },
    /// `AsksChanged` from a caller that keeps the locations of the rows the core holds in step
    /// by their changes instead of re-sending them: `rows` replace rows as there, then each of
    /// `moves` changes a row the core holds, all as one change of the app's asks. A map row
    /// names every host holding a pending split (hundreds for a large job) and moves with every
    /// allocation, so re-sending it whole costs a copy and a drop of its tables per allocation.
    /// The simulator sends this; the JNI shim sends `AsksChanged` (this is not on the protobuf
    /// wire).
    AsksMoved {
        app: AppId,
        rows: Vec<Ask>,
        moves: Vec<AskMove>,
    },
    ContainerAllocated {
        app: AppId,
        container: ContainerId,
        node: NodeId,
        priority: Priority,
        locality: Locality,
        resources: Resources,
        time_ms: u64,
    },
    ContainerFinished {
        app: AppId,
        container: ContainerId,
        time_ms: u64,
        /// False when the container ended without its task's work (preempted, released
        /// unused, lost, killed by the RM): it frees its slot but is no finished task, so
        /// it moves no map-finished count, task time or per-node latency.
        task_completed: bool,
    },
    /// Job counters read from the MapReduce ApplicationMaster.
    JobStats {
        app: AppId,
        maps_total: u32,
        maps_completed: u32,
        reduces_total: u32,
        map_input_bytes: u64,
        /// `MAP_OUTPUT_MATERIALIZED_BYTES` of the completed maps.
        map_output_bytes: u64,
    },
    /// A measured cross-rack link utilization (0..1) from an operator feed.
    RackLoad {
        rack: RackName,
        utilization: f64,
        time_ms: u64,
    },
    /// An operator's measured figures of one host, each optional (schema 2 of the feed):
    /// cross-rack traffic in Mbit/s (both directions' larger; NetSat sums a rack's hosts
    /// against the rack's link capacity), disk and network utilization (0..1) and a relative
    /// CPU speed (1 = the cluster's reference).
    HostFigures {
        host: String,
        time_ms: u64,
        #[serde(default)]
        cross_rack_mbps: Option<f64>,
        #[serde(default)]
        disk_utilization: Option<f64>,
        #[serde(default)]
        network_utilization: Option<f64>,
        #[serde(default)]
        cpu_speed: Option<f64>,
    },
    /// Sets a Dynamic Priority budget queue's balance (credits) and spending rate (credits
    /// per resource unit per allocation interval): from the ledger at start, or from an admin.
    /// Both must be finite and `>= 0`.
    Account {
        queue: String,
        budget: f64,
        spending: f64,
    },
}

/// Outstanding containers of one priority, by location.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ask {
    pub priority: Priority,
    /// Containers still wanted anywhere (the `*` request).
    pub any: u32,
    pub resources: Resources,
    #[serde(default)]
    pub racks: BTreeMap<RackName, u32>,
    /// Keyed by shared strings like the ids above: a map row is re-sent after every allocation
    /// of its job, with one entry per host holding a pending split.
    #[serde(default)]
    pub hosts: BTreeMap<Arc<str>, u32>,
}

/// Changes to the row of `priority` that the core holds for an app: its new `any` (`0`
/// removes the row), and changes of its host and rack counts, applied in order (a count that
/// reaches zero leaves its table, as in a whole row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskMove {
    pub priority: Priority,
    pub any: u32,
    #[serde(default)]
    pub hosts: Vec<(Arc<str>, i32)>,
    #[serde(default)]
    pub racks: Vec<(RackName, i32)>,
}

/// The core's answer to one offer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfferResponse {
    pub plan: Plan,
    /// Ratios learned since the previous response, for the shim to persist.
    #[serde(default)]
    pub learned: Vec<LearnedRatio>,
    pub diagnostics: Diagnostics,
    /// Log records the native side produced, for the shim to write to the RM's own log.
    #[serde(default)]
    pub logs: Vec<LogRecord>,
    /// Weights the policies set on FairScheduler queues (the shim applies them as the queues'
    /// weights); empty, and left out of the JSON, when nothing changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue_weights: Vec<QueueWeight>,
    /// The market intervals that closed at this offer, for the shim's ledger; empty, and left
    /// out of the JSON, when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<MarketInterval>,
    /// DRMJS's per-node scores of the queues whose scores went to the log at this offer (at
    /// most once per refresh interval per queue), for the shim's metrics; empty, and left out
    /// of the JSON, otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_scores: Vec<NodeScoreReport>,
}

/// A node's performance class for one task kind: High, Medium or Low by its score relative to
/// the best node's (DRMJS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PerformanceClass {
    Low,
    Medium,
    High,
}

/// One node's DRMJS scores in one queue and the inputs behind them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeScoreReport {
    pub queue: String,
    pub node: NodeId,
    /// The host's CPU speed relative to the fastest node's (1 for the fastest).
    pub cpu_speed: f64,
    /// The free share of the node's CPU by its NodeManager's latest report (1 without one).
    pub cpu_free: f64,
    /// The disk term (map score) and network term (reduce score), each with whether it came
    /// from the operator feed (else it is the node's observed slowdown).
    pub disk: f64,
    pub disk_from_feed: bool,
    pub net: f64,
    pub net_from_feed: bool,
    pub map_influence: f64,
    pub reduce_influence: f64,
    pub map_score: f64,
    pub map_class: PerformanceClass,
    pub reduce_score: f64,
    pub reduce_class: PerformanceClass,
}

/// One closed allocation interval of a Dynamic Priority market (a `dp` parent queue): what each
/// budget queue was charged, and the shares for the next interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarketInterval {
    /// The `dp` parent queue, e.g. `root.users`.
    pub market: String,
    /// Numbers the market's intervals from 1 (0 is the opening, which charges nothing), so a
    /// ledger can tell an interval it already holds.
    pub sequence: u64,
    pub end_ms: u64,
    /// The sum of the spending rates of the queues that are active and can pay.
    pub price: f64,
    /// Every budget queue of the market, by name.
    pub queues: Vec<QueueAccount>,
}

/// One budget queue at the close of an interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueAccount {
    /// Full queue path, e.g. `root.users.alice`.
    pub queue: String,
    /// The balance after this interval's charge.
    pub budget: f64,
    pub spending: f64,
    /// Resource units the queue held at the close, and those of them within its share.
    pub used: f64,
    pub charged_units: f64,
    /// `spending × charged_units`, at most what the budget held.
    pub charge: f64,
    /// The share for the next interval (its FairScheduler weight).
    pub share: f64,
}

/// A FairScheduler queue's weight, as a policy sets it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueWeight {
    /// Full queue path, e.g. `root.analytics`.
    pub queue: String,
    pub weight: f64,
}

/// What may be placed on the offered node. FairScheduler still picks the queue; within a
/// steered queue only the first entry that the app can still satisfy is allowed (the first of
/// the app's own entries where the queue leaves the order between its apps to FairScheduler),
/// and apps of the queue that no entry names are vetoed for this offer. Queues and apps the
/// plan does not mention are scheduled exactly as stock FairScheduler would.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub queues: Vec<QueuePlan>,
}

/// The ranked choices within one leaf queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueuePlan {
    /// Shared with the core's candidate index, like the ids above.
    pub queue: Arc<str>,
    /// Apps of this queue the core steers; every one of them not at the head of `entries`
    /// is vetoed for this offer.
    pub steered: Vec<AppId>,
    pub entries: Vec<PlanEntry>,
    /// Whether FairScheduler's own order between the queue's apps (its leaf queue's policy:
    /// fair share, FIFO or DRF) decides which app places: each steered app FairScheduler
    /// offers the node to places at the first of its own entries it can satisfy, or is vetoed
    /// when it has none. When false the core's order decides: only the queue's head entry
    /// places (ShuffleWatcher's plan is in the core's order on an offer where the starvation
    /// guard lifts one of the queue's apps, which then goes first).
    #[serde(default)]
    pub scheduler_orders_apps: bool,
}

/// One allowed (app, priority) placement with the loosest locality it may take here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanEntry {
    pub app: AppId,
    pub priority: Priority,
    pub locality: Locality,
    /// Why this entry is where it is (e.g. `nass:saturated:node-local-map`), for logs and
    /// tests. The core's reasons are fixed strings, borrowed so that the entries an offer
    /// builds (dozens per offer, most of them dropped unread) allocate none; on the wire it is
    /// a plain JSON string either way.
    pub reason: Cow<'static, str>,
}

/// Facts about this decision that operators and tests read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Diagnostics {
    pub rack: Option<RackName>,
    /// Estimated cross-rack link utilization of the offered node's rack (0..1); `None` when
    /// no queue's policy reads NetSat, which then takes no sample.
    pub rack_utilization: Option<f64>,
    pub rack_saturated: bool,
    /// Apps whose vetoes the starvation guard lifted in this offer.
    #[serde(default)]
    pub starved: Vec<AppId>,
}

/// A log record emitted by native code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogRecord {
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub level: String,
    pub target: String,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_order_as_the_strings_they_hold() {
        let words = [
            "",
            "a",
            "ab",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefgh\0",
            "abcdefgi",
            "abcdefghabcdefgh",
            "abcdefghabcdefgha",
            "abcdefghabcdefgi",
            "app_10",
            "app_2",
            "application_1700000000000_0001",
            "application_1700000000000_0010",
            "r12n3:8041",
            "r1n20:8041",
            "/rack1",
            "/rack10",
            "é",
            "z\u{7f}",
            "z\u{80}",
        ];
        for a in words {
            for b in words {
                assert_eq!(cmp_as_str(a, b), a.cmp(b), "{a:?} vs {b:?}");
                assert_eq!(
                    AppId(a.into()).cmp(&AppId(b.into())),
                    a.cmp(b),
                    "{a:?} vs {b:?}"
                );
                assert_eq!(
                    ContainerId(a.into()).partial_cmp(&ContainerId(b.into())),
                    Some(a.cmp(b))
                );
            }
        }
    }
}
