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

const NUMERIC_KEYS: [&NumericKey; 9] = [
    &NETSAT_THRESHOLD,
    &NETSAT_PERIOD_MS,
    &NETSAT_SMOOTHING,
    &RACK_UPLINK_MBPS,
    &REDUCE_FETCH_MBPS,
    &FEED_MAX_AGE_MS,
    &STARVATION_GUARD_MS,
    &DEFAULT_MAP_INPUT_MB,
    &MAX_HINT_RATIO,
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
}

impl PolicyKind {
    const NAMES: [(&'static str, PolicyKind); 2] = [
        ("none", PolicyKind::None),
        ("shufflewatcher", PolicyKind::ShuffleWatcher),
    ];

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
        }
    }
}

/// Children of a queue's `<rackwise>` element that are not numbers.
const ELEMENT_POLICY: &str = "policy";
const ELEMENT_RELAXED: &str = "relaxedFairness";
const ELEMENT_QUOTA: &str = "sarpQuota";

/// Numeric children of `<rackwise>`, with where their value goes.
struct QueueNumber {
    key: NumericKey,
    set: fn(&mut QueuePolicy, f64),
}

const QUEUE_NUMBERS: [QueueNumber; 4] = [
    QueueNumber {
        key: NumericKey {
            name: "shuffleHeavyRatio",
            default: 1.0,
            min: 0.0,
            lower_exclusive: true,
            max: 1.0e6,
            doc: "shuffle/input ratio above which a job is shuffle-heavy",
        },
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
        set: |p, v| p.relaxed_interval_ms = v as u64,
    },
];

fn queue_elements() -> String {
    let mut names = vec![ELEMENT_POLICY, ELEMENT_RELAXED, ELEMENT_QUOTA];
    names.extend(QUEUE_NUMBERS.iter().map(|n| n.key.name));
    names.join(", ")
}

/// Where NetSat reads rack loads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadSource {
    /// Estimated from the traffic the core knows is moving (the default: YARN reports none).
    Model,
    /// Measured by an operator's monitoring feed (`rack_load`/`host_load` events); a rack
    /// whose figures went stale falls back to the model.
    Feed,
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

        let mut uplink_mbps = BTreeMap::new();
        let rack_prefix = format!("{}.", RACK_UPLINK_MBPS.name);
        for (key, raw) in keys {
            if let Some(rack) = key.strip_prefix(&rack_prefix) {
                if let Some(value) = check_numeric(key, raw, &RACK_UPLINK_MBPS, &mut problems) {
                    uplink_mbps.insert(RackName(rack.to_string()), value);
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
                        if let Some(value) =
                            check_numeric(&element(name), raw, &number.key, problems)
                        {
                            (number.set)(&mut policy, value);
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
}
