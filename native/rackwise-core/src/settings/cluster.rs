//! The core's own yarn-site keys (`yarn.scheduler.rackwise.*`): NetSat, the starvation guard
//! and the predictor. Policies declare their own keys next to their code.

use super::params::{Param, ParamValues};
use crate::protocol::RackName;
use std::collections::BTreeMap;

/// Prefix of every yarn-site.xml key Rackwise reads.
pub const KEY_PREFIX: &str = "yarn.scheduler.rackwise.";

/// NetSat's default congestion threshold: a rack is saturated above 80 % of its cross-rack
/// link (ShuffleWatcher's NWSaturationThreshold, 400 of 500 Mbps; NAS's experiments used 80 %
/// too). The simulator counts congestion against the same figure.
pub const CONGESTION_THRESHOLD: f64 = 0.8;

pub(super) const NETSAT_THRESHOLD: &str = "yarn.scheduler.rackwise.netsat.threshold";
pub(super) const NETSAT_SOURCE: &str = "yarn.scheduler.rackwise.netsat.source";
pub(super) const NETSAT_PERIOD_MS: &str = "yarn.scheduler.rackwise.netsat.period-ms";
pub(super) const NETSAT_SMOOTHING: &str = "yarn.scheduler.rackwise.netsat.smoothing";
pub(super) const RACK_UPLINK_MBPS: &str = "yarn.scheduler.rackwise.netsat.rack-uplink-mbps";
pub(super) const FETCH_MBPS: &str = "yarn.scheduler.rackwise.netsat.fetch-mbps";
pub(super) const FEED_MAX_AGE_MS: &str = "yarn.scheduler.rackwise.netsat.feed-max-age-ms";
pub(super) const STARVATION_GUARD_MS: &str = "yarn.scheduler.rackwise.starvation-guard-ms";
pub(super) const DEFAULT_MAP_INPUT_MB: &str =
    "yarn.scheduler.rackwise.predictor.default-map-input-mb";
pub(super) const MAX_HINT_RATIO: &str = "yarn.scheduler.rackwise.predictor.max-hint-ratio";

/// The core's keys, in the order they are checked and documented.
pub const CORE_KEYS: &[Param] = &[
    Param::number(
        NETSAT_THRESHOLD,
        CONGESTION_THRESHOLD,
        (0.0, true),
        1.0,
        "fraction of a rack's cross-rack link capacity above which the rack counts as \
         network-saturated (ShuffleWatcher NWSaturationThreshold: 400 of 500 Mbps)",
    ),
    Param::number(
        NETSAT_PERIOD_MS,
        2_000.0,
        (0.0, false),
        600_000.0,
        "how often NetSat samples each rack's load (ShuffleWatcher: \"low frequency\"); 0 = \
         every offer",
    ),
    Param::number(
        NETSAT_SMOOTHING,
        0.5,
        (0.0, true),
        1.0,
        "weight of the newest sample in the moving average of a rack's load (1 = no \
         smoothing; 0.5 spans about three samples)",
    ),
    Param::number(
        RACK_UPLINK_MBPS,
        1000.0,
        (0.0, true),
        1.0e7,
        "capacity of each rack's cross-rack link in Mbit/s; override one rack with \
         `<key>.<rack>`, e.g. `...rack-uplink-mbps./rack1`",
    ),
    Param::number(
        FETCH_MBPS,
        200.0,
        (0.0, true),
        1.0e6,
        "rate in Mbit/s at which the load model assumes one running task pulls data across \
         racks (a reduce's shuffle fetches, a remote map's split read)",
    ),
    Param::number(
        FEED_MAX_AGE_MS,
        30_000.0,
        (0.0, true),
        86_400_000.0,
        "a measured rack load older than this is ignored and the model estimate is used",
    ),
    Param::number(
        STARVATION_GUARD_MS,
        30_000.0,
        (0.0, true),
        3_600_000.0,
        "no app with pending tasks is held back by Rackwise for longer than this; keep it \
         well under MapReduce's 300 s reducer-preemption delay; unset, a policy that declares \
         a guard of its own (shufflewatcher) has that one",
    ),
    Param::number(
        DEFAULT_MAP_INPUT_MB,
        128.0,
        (0.0, true),
        1.0e6,
        "input bytes assumed per map before the job reports counters (HDFS block size)",
    ),
    Param::number(
        MAX_HINT_RATIO,
        100.0,
        (0.0, true),
        1.0e6,
        "largest shuffle/input ratio a user may state in the rackwise.shuffle-ratio tag",
    ),
    Param::word(
        NETSAT_SOURCE,
        "model",
        &["model", "feed"],
        "where NetSat's rack loads come from: `model` (estimated from the traffic the core \
         knows is moving) or `feed` (the operator's measurements)",
    ),
];

/// Where NetSat reads rack loads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadSource {
    /// Estimated from the traffic the core knows is moving (the default: YARN reports none).
    Model,
    /// Measured by an operator's monitoring feed (`rack_load`/`host_figures` events); a rack
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

/// The starvation guard's declaration in [`CORE_KEYS`]: its bounds and doc also check a queue's
/// own `<starvationGuardMs>`.
pub(super) fn starvation_guard_key() -> &'static Param {
    CORE_KEYS
        .iter()
        .find(|p| p.name == STARVATION_GUARD_MS)
        .expect("the starvation guard key is declared")
}

/// NetSat's settings from the parsed [`CORE_KEYS`] and the per-rack link overrides.
pub(super) fn netsat_settings(
    values: &ParamValues,
    uplink_mbps: BTreeMap<RackName, f64>,
) -> NetSatSettings {
    NetSatSettings {
        source: match values.word(NETSAT_SOURCE) {
            "feed" => LoadSource::Feed,
            _ => LoadSource::Model,
        },
        period_ms: values.number(NETSAT_PERIOD_MS) as u64,
        smoothing: values.number(NETSAT_SMOOTHING),
        threshold: values.number(NETSAT_THRESHOLD),
        default_uplink_mbps: values.number(RACK_UPLINK_MBPS),
        uplink_mbps,
        fetch_mbps: values.number(FETCH_MBPS),
        feed_max_age_ms: values.number(FEED_MAX_AGE_MS) as u64,
    }
}
