//! The one registry of Rackwise settings. The shim hands over raw strings; this module parses
//! and validates them against the declared parameters (the core's keys in [`cluster`], each
//! policy's in its [`Declaration`]) and reports every problem at once, each naming the file,
//! queue, key or element, the value and the reason.

pub mod cluster;
pub mod params;
pub mod queues;

use crate::error::{ConfigProblem, CoreError};
use crate::protocol::{EngineConfig, RackName, Resources};
pub use cluster::{LoadSource, NetSatSettings, CONGESTION_THRESHOLD, CORE_KEYS, KEY_PREFIX};
pub use params::{Declaration, Param, ParamKind, ParamProblem, ParamValues, Value};
pub use queues::{starvation_guard_element, QueueSetup, ELEMENT_STARVATION_GUARD};
use std::collections::BTreeMap;

/// The known key closest to a misspelt `key`, when it is close enough to be the one meant: at
/// most a third of its characters differ (a typo or two, a missing plural), not merely a key
/// that shares the common prefix.
/// A key given without the common prefix (`netsat.threshold`) is compared as if it had it.
fn nearest_known_key<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let full = if key.starts_with(KEY_PREFIX) {
        key.to_string()
    } else {
        format!("{KEY_PREFIX}{key}")
    };
    known
        .iter()
        .map(|candidate| (strsim::levenshtein(&full, candidate), *candidate))
        .filter(|(distance, candidate)| {
            let suffix = candidate.strip_prefix(KEY_PREFIX).unwrap_or(candidate);
            *distance * 3 <= suffix.chars().count()
        })
        .min()
        .map(|(_, candidate)| candidate)
}

/// Every yarn-site key the core reads: its own and each policy's (per-rack uplink keys aside).
fn known_keys(declarations: &[Declaration]) -> Vec<&'static str> {
    CORE_KEYS
        .iter()
        .chain(declarations.iter().flat_map(|d| d.cluster_params))
        .map(|p| p.name)
        .collect()
}

/// The prefix of the per-rack uplink keys (`…netsat.rack-uplink-mbps.<rack>`).
fn rack_uplink_prefix() -> String {
    format!("{}.", cluster::RACK_UPLINK_MBPS)
}

/// A setting no Rackwise key declares, with the known key it most likely misspells.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownSetting {
    pub key: String,
    pub value: String,
    pub nearest: Option<&'static str>,
}

impl UnknownSetting {
    /// " (did you mean …?)" when a known key is close enough, else nothing.
    pub fn hint(&self) -> String {
        self.nearest
            .map(|near| format!(" (did you mean {near}?)"))
            .unwrap_or_default()
    }
}

/// The settings the core would not read under `declarations`. The RM passes every
/// `yarn.scheduler.rackwise.*` key and the core warns about these, as Hadoop ignores unknown
/// keys; a caller that names each setting on purpose (the simulator's `--core-setting`)
/// refuses them instead.
pub fn unknown_settings(
    settings: &BTreeMap<String, String>,
    declarations: &[Declaration],
) -> Vec<UnknownSetting> {
    let known = known_keys(declarations);
    let rack_prefix = rack_uplink_prefix();
    settings
        .iter()
        .filter(|(key, _)| !key.starts_with(&rack_prefix) && !known.contains(&key.as_str()))
        .map(|(key, value)| UnknownSetting {
            key: key.clone(),
            value: value.clone(),
            nearest: nearest_known_key(key, &known),
        })
        .collect()
}

/// Every validated setting the engine runs with.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub netsat: NetSatSettings,
    /// The yarn-site `starvation-guard-ms`; a queue's own bound, or its policy's, may replace
    /// it (see [`Settings::starvation_guard_ms`]).
    starvation_guard_ms: u64,
    /// By registry position: the policy's own guard ([`Declaration::starvation_guard_ms`]),
    /// kept only while the yarn-site key is unset, since an operator's bound wins.
    policy_starvation_guard_ms: Vec<Option<u64>>,
    pub default_map_input_bytes: u64,
    pub max_hint_ratio: f64,
    /// Each policy's name and own yarn-site keys, by its position in the registry.
    policy_keys: Vec<(&'static str, ParamValues)>,
    /// Queues with a `<rackwise>` element; others inherit from their nearest ancestor.
    queues: BTreeMap<String, QueueSetup>,
    /// The setup of a queue no `<rackwise>` element reaches: left to FairScheduler.
    unsteered: QueueSetup,
    /// By registry position: whether [`Settings::queues_of`] lists any queue. Kept, not asked
    /// of `queues`, because it is read for every policy on every offer.
    named_by_a_queue: Vec<bool>,
    /// Whether some queue names a policy that [reads NetSat](Declaration::reads_netsat).
    netsat_read: bool,
    /// The scheduler's minimum allocation, as the shim sent it (all zero when it sent none).
    pub minimum_allocation: Resources,
}

impl Settings {
    /// Validates a whole configuration against the policies' declarations (in registry
    /// order); on any problem, returns all of them.
    pub fn from_config(
        config: &EngineConfig,
        declarations: &[Declaration],
    ) -> Result<Settings, CoreError> {
        let mut problems = Vec::new();
        let keys = &config.settings;
        let raw = |name: &str| keys.get(name).map(String::as_str);
        let named = |name: &str| name.to_string();
        let core = ParamValues::parse(CORE_KEYS, raw, &named, &mut problems);
        let policy_keys: Vec<(&'static str, ParamValues)> = declarations
            .iter()
            .map(|d| {
                let keys = ParamValues::parse(d.cluster_params, raw, &named, &mut problems);
                (d.name, keys)
            })
            .collect();

        let uplink = CORE_KEYS
            .iter()
            .find(|p| p.name == cluster::RACK_UPLINK_MBPS)
            .expect("the rack uplink key is declared");
        let mut uplink_mbps = BTreeMap::new();
        let rack_prefix = rack_uplink_prefix();
        for (key, raw) in keys {
            if let Some(rack) = key.strip_prefix(&rack_prefix) {
                match uplink.parse(raw) {
                    Ok(Value::Number(value)) => {
                        uplink_mbps.insert(RackName(rack.into()), value);
                    }
                    Ok(_) => {}
                    Err(reason) => problems.push(ConfigProblem {
                        element: key.clone(),
                        value: raw.clone(),
                        reason,
                    }),
                }
            }
        }
        let unknown = unknown_settings(keys, declarations);
        if !unknown.is_empty() {
            let listed = known_keys(declarations).join(", ");
            for unknown in unknown {
                log::warn!(
                    "unknown setting {}={} is ignored{}; Rackwise core keys are: {listed}",
                    unknown.key,
                    unknown.value,
                    unknown.hint(),
                );
            }
        }

        let queues =
            queues::parse_queues(&config.source, &config.queues, declarations, &mut problems);
        if !problems.is_empty() {
            return Err(CoreError::Config(problems));
        }
        let unsteered = declarations
            .iter()
            .position(|d| !d.steers)
            .unwrap_or_default();
        let mut settings = Settings {
            netsat: cluster::netsat_settings(&core, uplink_mbps),
            starvation_guard_ms: core.number(cluster::STARVATION_GUARD_MS) as u64,
            policy_starvation_guard_ms: declarations
                .iter()
                .map(|d| d.starvation_guard_ms)
                .map(|own| own.filter(|_| raw(cluster::STARVATION_GUARD_MS).is_none()))
                .collect(),
            default_map_input_bytes: (core.number(cluster::DEFAULT_MAP_INPUT_MB) * 1024.0 * 1024.0)
                as u64,
            max_hint_ratio: core.number(cluster::MAX_HINT_RATIO),
            policy_keys,
            queues,
            unsteered: QueueSetup {
                policy: unsteered,
                policy_name: declarations.get(unsteered).map_or("", |d| d.name),
                values: ParamValues::defaults(&[]),
                starvation_guard_ms: None,
            },
            named_by_a_queue: Vec::new(),
            netsat_read: false,
            minimum_allocation: config.minimum_allocation,
        };
        settings.named_by_a_queue = (0..declarations.len())
            .map(|index| settings.queues_of(index).next().is_some())
            .collect();
        settings.netsat_read = declarations
            .iter()
            .enumerate()
            .any(|(index, d)| d.reads_netsat && settings.is_named_by_a_queue(index));
        Ok(settings)
    }

    /// The policy of a queue: its own `<rackwise>` element, else its nearest ancestor's, else
    /// none. Queues created at run time (e.g. `root.users.alice`) inherit from their parent.
    pub fn queue_policy(&self, queue: &str) -> &QueueSetup {
        let mut path = queue;
        loop {
            if let Some(setup) = self.queues.get(path) {
                return setup;
            }
            match path.rfind('.') {
                Some(dot) => path = &path[..dot],
                None => return &self.unsteered,
            }
        }
    }

    /// How long an app of a queue may wait with tasks pending before the starvation guard puts
    /// all its asks first: the `<starvationGuardMs>` of the queue's setup (its
    /// [`queue_policy`](Self::queue_policy)), else the yarn-site `starvation-guard-ms` if set,
    /// else the setup's policy's own default, else the key's. An operator's bound, for one
    /// queue or for the cluster, always wins over what a policy measured best.
    pub fn starvation_guard_ms(&self, setup: &QueueSetup) -> u64 {
        setup
            .starvation_guard_ms
            .or_else(|| {
                self.policy_starvation_guard_ms
                    .get(setup.policy)
                    .copied()
                    .flatten()
            })
            .unwrap_or(self.starvation_guard_ms)
    }

    /// The queues whose own `<rackwise>` element names the policy at `index`, in name order,
    /// with their parameters (queues that only inherit it are not listed).
    pub fn queues_of(&self, index: usize) -> impl Iterator<Item = (&str, &ParamValues)> {
        self.queues
            .iter()
            .filter(move |(_, setup)| setup.policy == index)
            .map(|(queue, setup)| (queue.as_str(), &setup.values))
    }

    /// Whether some queue's own `<rackwise>` element names the policy at `index`: only such a
    /// policy has queue weights, market intervals or node scores to give.
    pub fn is_named_by_a_queue(&self, index: usize) -> bool {
        self.named_by_a_queue.get(index).copied().unwrap_or(false)
    }

    /// Whether some queue names a policy that reads NetSat's verdict on the offered rack.
    pub fn netsat_read(&self) -> bool {
        self.netsat_read
    }

    /// The yarn-site keys of the policy at `index` in the registry.
    pub fn policy_keys(&self, index: usize) -> &ParamValues {
        &self.policy_keys[index].1
    }

    /// The yarn-site keys of the policy named `policy`.
    pub fn keys_of(&self, policy: &str) -> Option<&ParamValues> {
        self.policy_keys
            .iter()
            .find(|(name, _)| *name == policy)
            .map(|(_, keys)| keys)
    }
}

#[cfg(test)]
mod tests {
    use super::nearest_known_key;

    const KNOWN: &[&str] = &[
        "yarn.scheduler.rackwise.netsat.threshold",
        "yarn.scheduler.rackwise.netsat.period-ms",
        "yarn.scheduler.rackwise.starvation-guard-ms",
    ];

    #[test]
    fn a_typo_names_the_key_meant() {
        assert_eq!(
            nearest_known_key("yarn.scheduler.rackwise.netsat.treshold", KNOWN),
            Some("yarn.scheduler.rackwise.netsat.threshold")
        );
        assert_eq!(
            nearest_known_key("yarn.scheduler.rackwise.starvation-guard", KNOWN),
            Some("yarn.scheduler.rackwise.starvation-guard-ms")
        );
    }

    #[test]
    fn a_key_like_none_names_none() {
        assert_eq!(
            nearest_known_key("yarn.scheduler.rackwise.something-else", KNOWN),
            None
        );
        assert_eq!(nearest_known_key("yarn.scheduler.rackwise.x", KNOWN), None);
    }
}
