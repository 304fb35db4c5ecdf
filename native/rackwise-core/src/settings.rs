//! The one registry of Rackwise settings: every key and element, its default, its bounds and
//! its documentation. The shim hands over raw strings; this module parses and validates them and
//! reports every problem at once, each naming the key or element, the value and the reason.

use crate::error::{ConfigProblem, CoreError};
use crate::protocol::{EngineConfig, QueueSettings, RackName};
use std::collections::BTreeMap;

/// Prefix of every yarn-site.xml key Rackwise reads.
pub const KEY_PREFIX: &str = "yarn.scheduler.rackwise.";

/// A numeric yarn-site key of the core: name, default, lower/upper bound (inclusive unless
/// `lower_exclusive`), and what it means.
struct NumericKey {
    name: &'static str,
    default: f64,
    min: f64,
    lower_exclusive: bool,
    max: f64,
    doc: &'static str,
}

const NETSAT_THRESHOLD: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.netsat.threshold",
    default: 0.8,
    min: 0.0,
    lower_exclusive: true,
    max: 1.0,
    doc: "fraction of a rack's cross-rack link capacity above which the rack counts as \
          network-saturated (ShuffleWatcher NWSaturationThreshold: 400 of 500 Mbps)",
};
const RACK_UPLINK_MBPS: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.netsat.rack-uplink-mbps",
    default: 1000.0,
    min: 0.0,
    lower_exclusive: true,
    max: 1.0e7,
    doc: "capacity of each rack's cross-rack link in Mbit/s; override one rack with \
          `<key>.<rack>`, e.g. `...rack-uplink-mbps./rack1`",
};
const REDUCE_FETCH_MBPS: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.netsat.fetch-mbps",
    default: 200.0,
    min: 0.0,
    lower_exclusive: true,
    max: 1.0e6,
    doc: "rate in Mbit/s at which the load model assumes one running task pulls data across \
          racks (a reduce's shuffle fetches, a remote map's split read)",
};
const FEED_MAX_AGE_MS: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.netsat.feed-max-age-ms",
    default: 30_000.0,
    min: 0.0,
    lower_exclusive: true,
    max: 86_400_000.0,
    doc: "a measured rack load older than this is ignored and the model estimate is used",
};
const NETSAT_PERIOD_MS: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.netsat.period-ms",
    default: 2_000.0,
    min: 0.0,
    lower_exclusive: false,
    max: 600_000.0,
    doc: "how often NetSat samples each rack's load (ShuffleWatcher: \"low frequency\"); 0 = \
          every offer",
};
const NETSAT_SMOOTHING: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.netsat.smoothing",
    default: 0.5,
    min: 0.0,
    lower_exclusive: true,
    max: 1.0,
    doc: "weight of the newest sample in the moving average of a rack's load (1 = no \
          smoothing; 0.5 spans about three samples)",
};
/// Where NetSat's rack loads come from; not numeric, so outside the numeric registry.
const NETSAT_SOURCE: &str = "yarn.scheduler.rackwise.netsat.source";

const STARVATION_GUARD_MS: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.starvation-guard-ms",
    default: 30_000.0,
    min: 0.0,
    lower_exclusive: true,
    max: 3_600_000.0,
    doc: "no app with pending tasks is held back by Rackwise for longer than this; keep it \
          well under MapReduce's 300 s reducer-preemption delay",
};
const DEFAULT_MAP_INPUT_MB: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.predictor.default-map-input-mb",
    default: 128.0,
    min: 0.0,
    lower_exclusive: true,
    max: 1.0e6,
    doc: "input bytes assumed per map before the job reports counters (HDFS block size)",
};
const MAX_HINT_RATIO: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.predictor.max-hint-ratio",
    default: 100.0,
    min: 0.0,
    lower_exclusive: true,
    max: 1.0e6,
    doc: "largest shuffle/input ratio a user may state in the rackwise.shuffle-ratio tag",
};

const NAS_TRAFFIC_THRESHOLD_MB: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.nas.traffic-threshold-mb",
    default: 0.0,
    min: 0.0,
    lower_exclusive: false,
    max: 1.0e9,
    doc: "NAS per-node TrafficThreshold in MiB set by the operator; 0 = computed as \
          m * sum(S_i) / sum(K_i) over the active jobs (the paper lets operators override it)",
};
const NAS_THRESHOLD_INTERVAL_MS: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.nas.traffic-threshold-interval-ms",
    default: 5_000.0,
    min: 0.0,
    lower_exclusive: false,
    max: 3_600_000.0,
    doc: "how often NAS recomputes the TrafficThreshold from the active jobs; 0 = every offer",
};
const NAS_CONTAINERS_PER_NODE: NumericKey = NumericKey {
    name: "yarn.scheduler.rackwise.nas.containers-per-node",
    default: 0.0,
    min: 0.0,
    lower_exclusive: false,
    max: 100_000.0,
    doc: "m of the TrafficThreshold, containers per node; 0 = each node's capacity divided by \
          the mean map container size of the active jobs",
};

const NUMERIC_KEYS: [&NumericKey; 12] = [
    &NETSAT_THRESHOLD,
    &NETSAT_PERIOD_MS,
    &NETSAT_SMOOTHING,
    &RACK_UPLINK_MBPS,
    &REDUCE_FETCH_MBPS,
    &FEED_MAX_AGE_MS,
    &STARVATION_GUARD_MS,
    &DEFAULT_MAP_INPUT_MB,
    &MAX_HINT_RATIO,
    &NAS_TRAFFIC_THRESHOLD_MB,
    &NAS_THRESHOLD_INTERVAL_MS,
    &NAS_CONTAINERS_PER_NODE,
];

/// The keys of the core with their defaults and meaning, for documentation and the checker.
pub fn documented_keys() -> Vec<(&'static str, f64, &'static str)> {
    NUMERIC_KEYS
        .iter()
        .map(|k| (k.name, k.default, k.doc))
        .collect()
}

/// Which decision policy steers a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyKind {
    /// Stock FairScheduler behaviour: the core does not touch the queue.
    None,
    /// ShuffleWatcher (ATC'14): NASS ordering driven by per-rack network saturation.
    ShuffleWatcher,
    /// NAS: MTS for maps under a per-node TrafficThreshold, CA-RTS / CR-RTS for reduces by
    /// congestion of the offered node's rack.
    Nas,
}

impl PolicyKind {
    const NAMES: [(&'static str, PolicyKind); 3] = [
        ("none", PolicyKind::None),
        ("shufflewatcher", PolicyKind::ShuffleWatcher),
        ("nas", PolicyKind::Nas),
    ];

    fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, kind)| *kind == self)
            .map_or("", |(name, _)| *name)
    }

    fn parse(text: &str) -> Option<PolicyKind> {
        let wanted = text.trim().to_ascii_lowercase();
        Self::NAMES
            .iter()
            .find(|(name, _)| *name == wanted)
            .map(|(_, kind)| *kind)
    }

    fn expected() -> String {
        Self::NAMES
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The resolved policy of one queue and its parameters (children of `<rackwise>`).
#[derive(Debug, Clone, PartialEq)]
pub struct QueuePolicy {
    pub kind: PolicyKind,
    /// A job is shuffle-heavy when its shuffle/input ratio exceeds this (paper: 1.0).
    pub shuffle_heavy_ratio: f64,
    /// SARP trusts measured map output once this fraction of a job's maps completed (15 %).
    pub map_completion_threshold: f64,
    /// Jobs submitted in an earlier window of this length go first (10 min); 0 turns it off.
    pub starvation_window_ms: u64,
    /// ShuffleWatcher's relaxed fairness: a user with nothing preferred may be skipped.
    pub relaxed_fairness: bool,
    /// For how long relaxed fairness may skip a user (5 s, as Delay Scheduling).
    pub relaxed_interval_ms: u64,
    /// SARP quotas: `strict` vetoes a shuffle-heavy job's reduces on racks whose quota is used;
    /// `preference` only ranks them lower (Figure 3 lines 9/14 taken literally).
    pub strict_reduce_quotas: bool,
    /// Parameters of the `nas` policy.
    pub nas: NasQueueSettings,
}

impl Default for QueuePolicy {
    fn default() -> Self {
        QueuePolicy {
            kind: PolicyKind::None,
            shuffle_heavy_ratio: 1.0,
            map_completion_threshold: 0.15,
            starvation_window_ms: 600_000,
            relaxed_fairness: false,
            relaxed_interval_ms: 5_000,
            strict_reduce_quotas: true,
            nas: NasQueueSettings::default(),
        }
    }
}

/// Children of a queue's `<rackwise>` element that are not numbers.
const ELEMENT_POLICY: &str = "policy";
const ELEMENT_RELAXED: &str = "relaxedFairness";
const ELEMENT_QUOTA: &str = "sarpQuota";

/// Numeric children of `<rackwise>`: the policy they belong to, whether they must be whole,
/// and where their value goes.
struct QueueNumber {
    key: NumericKey,
    policy: PolicyKind,
    whole: bool,
    set: fn(&mut QueuePolicy, f64),
}

const QUEUE_NUMBERS: [QueueNumber; 9] = [
    QueueNumber {
        key: NumericKey {
            name: "shuffleHeavyRatio",
            default: 1.0,
            min: 0.0,
            lower_exclusive: true,
            max: 1.0e6,
            doc: "shuffle/input ratio above which a job is shuffle-heavy",
        },
        policy: PolicyKind::ShuffleWatcher,
        whole: false,
        set: |p, v| p.shuffle_heavy_ratio = v,
    },
    QueueNumber {
        key: NumericKey {
            name: "mapCompletionThreshold",
            default: 0.15,
            min: 0.0,
            lower_exclusive: false,
            max: 1.0,
            doc: "fraction of a job's maps completed before SARP trusts measured map output",
        },
        policy: PolicyKind::ShuffleWatcher,
        whole: false,
        set: |p, v| p.map_completion_threshold = v,
    },
    QueueNumber {
        key: NumericKey {
            name: "starvationWindowMs",
            default: 600_000.0,
            min: 0.0,
            lower_exclusive: false,
            max: 86_400_000.0,
            doc: "jobs from an earlier submission window of this length go first; 0 = off",
        },
        policy: PolicyKind::ShuffleWatcher,
        whole: false,
        set: |p, v| p.starvation_window_ms = v as u64,
    },
    QueueNumber {
        key: NumericKey {
            name: "relaxedIntervalMs",
            default: 5_000.0,
            min: 0.0,
            lower_exclusive: false,
            max: 3_600_000.0,
            doc: "longest a user may be skipped under relaxed fairness",
        },
        policy: PolicyKind::ShuffleWatcher,
        whole: false,
        set: |p, v| p.relaxed_interval_ms = v as u64,
    },
    QueueNumber {
        key: NumericKey {
            name: "shuffleLightMb",
            default: 1.0,
            min: 0.0,
            lower_exclusive: true,
            max: 1.0e9,
            doc: "predicted job shuffle in MiB below which a job is shuffle-light",
        },
        policy: PolicyKind::Nas,
        whole: false,
        set: |p, v| p.nas.light_below_bytes = v * MIB,
    },
    QueueNumber {
        key: NumericKey {
            name: "shuffleHeavyMb",
            default: 100.0,
            min: 0.0,
            lower_exclusive: true,
            max: 1.0e9,
            doc: "predicted job shuffle in MiB above which a job is shuffle-heavy",
        },
        policy: PolicyKind::Nas,
        whole: false,
        set: |p, v| p.nas.heavy_above_bytes = v * MIB,
    },
    QueueNumber {
        key: NumericKey {
            name: "smallInputMb",
            default: 10.0,
            min: 0.0,
            lower_exclusive: true,
            max: 1.0e9,
            doc: "job input in MiB below which MTS treats a job as small-input",
        },
        policy: PolicyKind::Nas,
        whole: false,
        set: |p, v| p.nas.small_input_below_bytes = v * MIB,
    },
    QueueNumber {
        key: NumericKey {
            name: "maxWaitMs",
            default: 5_000.0,
            min: 0.0,
            lower_exclusive: false,
            max: 3_600_000.0,
            doc: "how long MTS and CR-RTS may skip a user before relaxing their preference",
        },
        policy: PolicyKind::Nas,
        whole: false,
        set: |p, v| p.nas.max_wait_ms = v as u64,
    },
    QueueNumber {
        key: NumericKey {
            name: "maxSkips",
            default: 0.0,
            min: 0.0,
            lower_exclusive: false,
            max: 1.0e6,
            doc: "skip count bound used instead of maxWaitMs when above 0 (the paper's D^m = D^r)",
        },
        policy: PolicyKind::Nas,
        whole: true,
        set: |p, v| p.nas.max_skips = v as u32,
    },
];

fn queue_elements() -> String {
    let mut names = vec![ELEMENT_POLICY, ELEMENT_RELAXED, ELEMENT_QUOTA];
    names.extend(QUEUE_NUMBERS.iter().map(|n| n.key.name));
    names.join(", ")
}

/// A NAS queue's job classes and skip bound.
#[derive(Debug, Clone, PartialEq)]
pub struct NasQueueSettings {
    /// A job whose predicted shuffle is below this is shuffle-light (paper: 1 MB).
    pub light_below_bytes: f64,
    /// A job whose predicted shuffle is above this is shuffle-heavy (paper: 100 MB); between
    /// the two it is shuffle-medium.
    pub heavy_above_bytes: f64,
    /// A job whose input is below this is a small-input job (paper: 10 MB).
    pub small_input_below_bytes: f64,
    /// How long MTS and CR-RTS may skip a user before relaxing (paper, real cluster: 5 s).
    pub max_wait_ms: u64,
    /// When > 0, skip this many offers instead of waiting `max_wait_ms` (paper's D^m = D^r).
    pub max_skips: u32,
}

impl Default for NasQueueSettings {
    fn default() -> Self {
        NasQueueSettings {
            light_below_bytes: MIB,
            heavy_above_bytes: 100.0 * MIB,
            small_input_below_bytes: 10.0 * MIB,
            max_wait_ms: 5_000,
            max_skips: 0,
        }
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// Where NetSat reads rack loads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadSource {
    /// Estimated from the traffic the core knows is moving (the default: YARN reports none).
    Model,
    /// Measured by an operator's monitoring feed (`rack_load`/`host_load` events); a rack
    /// whose figures went stale falls back to the model.
    Feed,
}

/// Cluster-wide NAS settings: how the per-node TrafficThreshold is obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct NasSettings {
    /// The operator's TrafficThreshold in bytes, replacing the computed one.
    pub traffic_threshold_bytes: Option<f64>,
    pub threshold_interval_ms: u64,
    /// The operator's m; `None` derives it per node.
    pub containers_per_node: Option<u32>,
}

/// Cross-rack load settings (NetSat).
#[derive(Debug, Clone, PartialEq)]
pub struct NetSatSettings {
    pub source: LoadSource,
    pub period_ms: u64,
    pub smoothing: f64,
    pub threshold: f64,
    pub default_uplink_mbps: f64,
    pub uplink_mbps: BTreeMap<RackName, f64>,
    pub fetch_mbps: f64,
    pub feed_max_age_ms: u64,
}

impl NetSatSettings {
    pub fn uplink_mbps(&self, rack: &RackName) -> f64 {
        self.uplink_mbps
            .get(rack)
            .copied()
            .unwrap_or(self.default_uplink_mbps)
    }
}

/// Every validated setting the engine runs with.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub netsat: NetSatSettings,
    pub starvation_guard_ms: u64,
    pub default_map_input_bytes: u64,
    pub max_hint_ratio: f64,
    pub nas: NasSettings,
    /// Queues with a `<rackwise>` element; others inherit from their nearest ancestor.
    queue_policies: BTreeMap<String, QueuePolicy>,
}

impl Settings {
    /// Validates a whole configuration; on any problem, returns all of them.
    pub fn from_config(config: &EngineConfig) -> Result<Settings, CoreError> {
        let mut problems = Vec::new();
        let keys = &config.settings;
        let mut number = |key: &NumericKey| parse_numeric(keys, key, &mut problems);
        let threshold = number(&NETSAT_THRESHOLD);
        let period_ms = number(&NETSAT_PERIOD_MS) as u64;
        let smoothing = number(&NETSAT_SMOOTHING);
        let default_uplink_mbps = number(&RACK_UPLINK_MBPS);
        let fetch_mbps = number(&REDUCE_FETCH_MBPS);
        let feed_max_age_ms = number(&FEED_MAX_AGE_MS) as u64;
        let starvation_guard_ms = number(&STARVATION_GUARD_MS) as u64;
        let default_map_input_mb = number(&DEFAULT_MAP_INPUT_MB);
        let max_hint_ratio = number(&MAX_HINT_RATIO);
        let nas_threshold_mb = number(&NAS_TRAFFIC_THRESHOLD_MB);
        let nas_interval_ms = number(&NAS_THRESHOLD_INTERVAL_MS) as u64;
        let nas_containers_per_node = number(&NAS_CONTAINERS_PER_NODE) as u32;

        let mut uplink_mbps = BTreeMap::new();
        let rack_prefix = format!("{}.", RACK_UPLINK_MBPS.name);
        for (key, raw) in keys {
            if let Some(rack) = key.strip_prefix(&rack_prefix) {
                if let Some(value) = check_numeric(key, raw, &RACK_UPLINK_MBPS, &mut problems) {
                    uplink_mbps.insert(RackName(rack.into()), value);
                }
            } else if !NUMERIC_KEYS.iter().any(|k| k.name == key) && key != NETSAT_SOURCE {
                log::warn!(
                    "unknown setting {key}={raw} is ignored; Rackwise core keys are: {}",
                    NUMERIC_KEYS
                        .iter()
                        .map(|k| k.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }

        let source = match keys.get(NETSAT_SOURCE).map(|raw| raw.trim()) {
            None | Some("model") => LoadSource::Model,
            Some("feed") => LoadSource::Feed,
            Some(other) => {
                problems.push(ConfigProblem {
                    element: NETSAT_SOURCE.to_string(),
                    value: other.to_string(),
                    reason: "must be model or feed".to_string(),
                });
                LoadSource::Model
            }
        };
        let queue_policies = parse_queues(&config.source, &config.queues, &mut problems);
        if !problems.is_empty() {
            return Err(CoreError::Config(problems));
        }
        Ok(Settings {
            netsat: NetSatSettings {
                source,
                period_ms,
                smoothing,
                threshold,
                default_uplink_mbps,
                uplink_mbps,
                fetch_mbps,
                feed_max_age_ms,
            },
            starvation_guard_ms,
            default_map_input_bytes: (default_map_input_mb * 1024.0 * 1024.0) as u64,
            max_hint_ratio,
            nas: NasSettings {
                traffic_threshold_bytes: (nas_threshold_mb > 0.0).then_some(nas_threshold_mb * MIB),
                threshold_interval_ms: nas_interval_ms,
                containers_per_node: (nas_containers_per_node > 0)
                    .then_some(nas_containers_per_node),
            },
            queue_policies,
        })
    }

    /// The policy of a queue: its own `<rackwise>` element, else its nearest ancestor's, else
    /// none. Queues created at run time (e.g. `root.users.alice`) inherit from their parent.
    pub fn queue_policy(&self, queue: &str) -> QueuePolicy {
        let mut path = queue;
        loop {
            if let Some(policy) = self.queue_policies.get(path) {
                return policy.clone();
            }
            match path.rfind('.') {
                Some(dot) => path = &path[..dot],
                None => return QueuePolicy::default(),
            }
        }
    }
}

fn parse_numeric(
    keys: &BTreeMap<String, String>,
    key: &NumericKey,
    problems: &mut Vec<ConfigProblem>,
) -> f64 {
    match keys.get(key.name) {
        None => key.default,
        Some(raw) => check_numeric(key.name, raw, key, problems).unwrap_or(key.default),
    }
}

fn check_numeric(
    element: &str,
    raw: &str,
    key: &NumericKey,
    problems: &mut Vec<ConfigProblem>,
) -> Option<f64> {
    let refuse = |problems: &mut Vec<ConfigProblem>, reason: String| {
        problems.push(ConfigProblem {
            element: element.to_string(),
            value: raw.to_string(),
            reason,
        });
        None
    };
    let value = match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => v,
        _ => return refuse(problems, "is not a number".to_string()),
    };
    let below = if key.lower_exclusive {
        value <= key.min
    } else {
        value < key.min
    };
    if below || value > key.max {
        let open = if key.lower_exclusive { "(" } else { "[" };
        return refuse(
            problems,
            format!(
                "is out of range {open}{}, {}]: {}",
                key.min, key.max, key.doc
            ),
        );
    }
    Some(value)
}

/// The steering policy an element of `<rackwise>` belongs to (`None` for `<policy>`).
fn owner_of(name: &str) -> Option<PolicyKind> {
    match name {
        ELEMENT_RELAXED | ELEMENT_QUOTA => Some(PolicyKind::ShuffleWatcher),
        _ => QUEUE_NUMBERS
            .iter()
            .find(|n| n.key.name == name)
            .map(|n| n.policy),
    }
}

/// Under one steering policy an element of the other would be silently ignored, so it is
/// refused (under `none` every element is kept, so a queue can be switched off and on by its
/// `<policy>` alone); and NAS's light and heavy bounds must leave medium a (possibly empty)
/// range.
fn check_policy_elements(
    policy: &QueuePolicy,
    elements: &BTreeMap<String, String>,
    element: &dyn Fn(&str) -> String,
    problems: &mut Vec<ConfigProblem>,
) {
    if policy.kind == PolicyKind::None {
        return;
    }
    for (name, raw) in elements {
        match owner_of(name) {
            Some(owner) if owner != policy.kind => problems.push(ConfigProblem {
                element: element(name),
                value: raw.clone(),
                reason: format!("applies only to <policy>{}</policy>", owner.name()),
            }),
            _ => {}
        }
    }
    let nas = &policy.nas;
    if policy.kind == PolicyKind::Nas && nas.light_below_bytes > nas.heavy_above_bytes {
        problems.push(ConfigProblem {
            element: element("shuffleLightMb"),
            value: elements.get("shuffleLightMb").cloned().unwrap_or_default(),
            reason: format!(
                "must not exceed <shuffleHeavyMb> ({} MiB): a light job cannot shuffle more \
                 than a heavy one",
                nas.heavy_above_bytes / MIB
            ),
        });
    }
}

fn parse_queues(
    source: &str,
    queues: &[QueueSettings],
    problems: &mut Vec<ConfigProblem>,
) -> BTreeMap<String, QueuePolicy> {
    let mut policies = BTreeMap::new();
    for queue in queues {
        let Some(elements) = &queue.rackwise else {
            continue;
        };
        let element = |name: &str| format!("{source}: queue {} <rackwise><{name}>", queue.queue);
        let refuse = |problems: &mut Vec<ConfigProblem>, name: &str, raw: &str, reason: &str| {
            problems.push(ConfigProblem {
                element: element(name),
                value: raw.to_string(),
                reason: reason.to_string(),
            })
        };
        let mut policy = QueuePolicy::default();
        for (name, raw) in elements {
            let trimmed = raw.trim();
            match name.as_str() {
                ELEMENT_POLICY => match PolicyKind::parse(trimmed) {
                    Some(kind) => policy.kind = kind,
                    None => refuse(
                        problems,
                        name,
                        raw,
                        &format!(
                            "is not a policy; expected one of: {}",
                            PolicyKind::expected()
                        ),
                    ),
                },
                ELEMENT_RELAXED => match trimmed {
                    "true" => policy.relaxed_fairness = true,
                    "false" => policy.relaxed_fairness = false,
                    _ => refuse(problems, name, raw, "must be true or false"),
                },
                ELEMENT_QUOTA => match trimmed {
                    "strict" => policy.strict_reduce_quotas = true,
                    "preference" => policy.strict_reduce_quotas = false,
                    _ => refuse(problems, name, raw, "must be strict or preference"),
                },
                _ => match QUEUE_NUMBERS.iter().find(|n| n.key.name == name) {
                    Some(number) => {
                        match check_numeric(&element(name), raw, &number.key, problems) {
                            Some(value) if number.whole && value.fract() != 0.0 => refuse(
                                problems,
                                name,
                                raw,
                                &format!("must be a whole number: {}", number.key.doc),
                            ),
                            Some(value) => (number.set)(&mut policy, value),
                            None => {}
                        }
                    }
                    None => problems.push(ConfigProblem {
                        element: format!("{source}: queue {} <rackwise>", queue.queue),
                        value: name.clone(),
                        reason: format!(
                            "is not a Rackwise element; expected one of: {}",
                            queue_elements()
                        ),
                    }),
                },
            }
        }
        check_policy_elements(&policy, elements, &element, problems);
        if !elements.contains_key(ELEMENT_POLICY) {
            problems.push(ConfigProblem {
                element: element(ELEMENT_POLICY),
                value: String::new(),
                reason: format!(
                    "is missing; a <rackwise> element must name its policy, one of: {}",
                    PolicyKind::expected()
                ),
            });
        }
        policies.insert(queue.queue.clone(), policy);
    }
    policies
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(settings: &[(&str, &str)], queues: Vec<QueueSettings>) -> EngineConfig {
        EngineConfig {
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            queues,
            learned: vec![],
            source: "fair-scheduler.xml".to_string(),
        }
    }

    fn queue(name: &str, elements: &[(&str, &str)]) -> QueueSettings {
        QueueSettings {
            queue: name.to_string(),
            rackwise: Some(
                elements
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
        }
    }

    fn problems(result: Result<Settings, CoreError>) -> Vec<ConfigProblem> {
        match result {
            Err(CoreError::Config(problems)) => problems,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn defaults_apply_when_nothing_is_set() {
        let settings = Settings::from_config(&config(&[], vec![])).unwrap();
        assert_eq!(settings.netsat.threshold, 0.8);
        assert_eq!(settings.netsat.uplink_mbps(&RackName("/r1".into())), 1000.0);
        assert_eq!(settings.queue_policy("root.a").kind, PolicyKind::None);
    }

    #[test]
    fn every_bad_value_is_reported_with_key_value_and_reason() {
        let found = problems(Settings::from_config(&config(
            &[
                ("yarn.scheduler.rackwise.netsat.threshold", "1.5"),
                ("yarn.scheduler.rackwise.netsat.fetch-mbps", "fast"),
            ],
            vec![queue("root.a", &[("policy", "shufflewatch")])],
        )));
        assert_eq!(found.len(), 3, "{found:?}");
        let text: Vec<String> = found.iter().map(|p| p.to_string()).collect();
        assert!(text[0].contains("netsat.threshold: value '1.5' is out of range (0, 1]"));
        assert!(text[1].contains("netsat.fetch-mbps: value 'fast' is not a number"));
        assert!(text[2].contains("queue root.a <rackwise><policy>: value 'shufflewatch'"));
        assert!(text[2].contains("expected one of: none, shufflewatcher"));
    }

    #[test]
    fn unknown_rackwise_element_and_missing_policy_are_refused() {
        let found = problems(Settings::from_config(&config(
            &[],
            vec![queue("root.a", &[("shuffleHevyRatio", "2")])],
        )));
        assert!(found[0]
            .to_string()
            .contains("value 'shuffleHevyRatio' is not a Rackwise element"));
        assert!(found[1]
            .to_string()
            .contains("<rackwise><policy>: value '' is missing"));
    }

    #[test]
    fn queues_inherit_from_their_nearest_configured_ancestor() {
        let settings = Settings::from_config(&config(
            &[("yarn.scheduler.rackwise.netsat.rack-uplink-mbps./r2", "500")],
            vec![
                queue(
                    "root.users",
                    &[("policy", "shufflewatcher"), ("shuffleHeavyRatio", "2")],
                ),
                queue("root.users.bob", &[("policy", "none")]),
            ],
        ))
        .unwrap();
        let alice = settings.queue_policy("root.users.alice");
        assert_eq!(alice.kind, PolicyKind::ShuffleWatcher);
        assert_eq!(alice.shuffle_heavy_ratio, 2.0);
        assert_eq!(
            settings.queue_policy("root.users.bob").kind,
            PolicyKind::None
        );
        assert_eq!(settings.queue_policy("root.other").kind, PolicyKind::None);
        assert_eq!(settings.netsat.uplink_mbps(&RackName("/r2".into())), 500.0);
    }

    #[test]
    fn nas_queue_elements_and_keys_are_parsed_with_their_defaults() {
        let settings = Settings::from_config(&config(
            &[
                ("yarn.scheduler.rackwise.nas.traffic-threshold-mb", "256"),
                ("yarn.scheduler.rackwise.nas.containers-per-node", "16"),
            ],
            vec![
                queue("root.nas", &[("policy", "nas")]),
                queue(
                    "root.tuned",
                    &[
                        ("policy", "NAS"),
                        ("shuffleLightMb", "2"),
                        ("shuffleHeavyMb", "50"),
                        ("smallInputMb", "64"),
                        ("maxSkips", "135"),
                    ],
                ),
            ],
        ))
        .unwrap();
        let defaults = settings.queue_policy("root.nas.alice");
        assert_eq!(defaults.kind, PolicyKind::Nas);
        assert_eq!(defaults.nas, NasQueueSettings::default());
        assert_eq!(defaults.nas.light_below_bytes, MIB);
        assert_eq!(defaults.nas.heavy_above_bytes, 100.0 * MIB);
        assert_eq!(defaults.nas.small_input_below_bytes, 10.0 * MIB);
        assert_eq!(
            (defaults.nas.max_wait_ms, defaults.nas.max_skips),
            (5000, 0)
        );
        let tuned = settings.queue_policy("root.tuned").nas;
        assert_eq!(tuned.light_below_bytes, 2.0 * MIB);
        assert_eq!(tuned.heavy_above_bytes, 50.0 * MIB);
        assert_eq!(tuned.small_input_below_bytes, 64.0 * MIB);
        assert_eq!(tuned.max_skips, 135);
        assert_eq!(settings.nas.traffic_threshold_bytes, Some(256.0 * MIB));
        assert_eq!(settings.nas.containers_per_node, Some(16));
        assert_eq!(settings.nas.threshold_interval_ms, 5000);

        let computed = Settings::from_config(&config(&[], vec![])).unwrap();
        assert_eq!(computed.nas.traffic_threshold_bytes, None);
        assert_eq!(computed.nas.containers_per_node, None);
    }

    #[test]
    fn bad_nas_elements_are_refused_with_element_value_and_reason() {
        let found = problems(Settings::from_config(&config(
            &[("yarn.scheduler.rackwise.nas.traffic-threshold-mb", "-1")],
            vec![
                queue(
                    "root.a",
                    &[
                        ("policy", "nas"),
                        ("maxSkips", "2.5"),
                        ("shuffleHeavyMb", "0"),
                        ("shuffleHeavyRatio", "2"),
                    ],
                ),
                queue(
                    "root.b",
                    &[
                        ("policy", "nas"),
                        ("shuffleLightMb", "200"),
                        ("maxWaitMs", "soon"),
                    ],
                ),
                queue(
                    "root.c",
                    &[("policy", "shufflewatcher"), ("maxWaitMs", "1")],
                ),
            ],
        )));
        let text: Vec<String> = found.iter().map(|p| p.to_string()).collect();
        let expected = [
            "nas.traffic-threshold-mb: value '-1' is out of range [0, 1000000000]",
            "queue root.a <rackwise><maxSkips>: value '2.5' must be a whole number",
            "queue root.a <rackwise><shuffleHeavyMb>: value '0' is out of range (0, 1000000000]",
            "queue root.a <rackwise><shuffleHeavyRatio>: value '2' applies only to \
             <policy>shufflewatcher</policy>",
            "queue root.b <rackwise><maxWaitMs>: value 'soon' is not a number",
            "queue root.b <rackwise><shuffleLightMb>: value '200' must not exceed \
             <shuffleHeavyMb> (100 MiB)",
            "queue root.c <rackwise><maxWaitMs>: value '1' applies only to <policy>nas</policy>",
        ];
        assert_eq!(text.len(), expected.len(), "{text:#?}");
        for (found, expected) in text.iter().zip(expected) {
            assert!(
                found.contains(expected),
                "{found}\n does not contain\n{expected}"
            );
        }
    }
}
