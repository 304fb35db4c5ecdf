//! The settings registry, parsed against the built-in policies' declarations: defaults, every
//! bad value reported with file, queue, element, value and reason, inheritance between queues.

use rackwise_core::policy::nas::{Keys, Params as NasParams};
use rackwise_core::policy::Registry;
use rackwise_core::protocol::{EngineConfig, QueueSettings, RackName};
use rackwise_core::settings::{unknown_settings, Settings};
use rackwise_core::{ConfigProblem, CoreError};

const MIB: f64 = 1024.0 * 1024.0;

fn parse(config: &EngineConfig) -> Result<Settings, CoreError> {
    Settings::from_config(config, Registry::builtin().declarations())
}

fn config(settings: &[(&str, &str)], queues: Vec<QueueSettings>) -> EngineConfig {
    EngineConfig {
        settings: settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        queues,
        learned: vec![],
        source: "fair-scheduler.xml".to_string(),
        ..EngineConfig::default()
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
    let settings = parse(&config(&[], vec![])).unwrap();
    assert_eq!(settings.netsat.threshold, 0.8);
    assert_eq!(settings.netsat.uplink_mbps(&RackName("/r1".into())), 1000.0);
    assert_eq!(settings.queue_policy("root.a").policy_name, "none");
}

#[test]
fn every_bad_value_is_reported_with_key_value_and_reason() {
    let found = problems(parse(&config(
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
    let found = problems(parse(&config(
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
fn unknown_keys_are_listed_with_the_key_they_most_likely_mean() {
    let given = config(
        &[
            ("yarn.scheduler.rackwise.netsat.threshold", "0.9"),
            (
                "yarn.scheduler.rackwise.netsat.rack-uplink-mbps.rack3",
                "500",
            ),
            ("yarn.scheduler.rackwise.nas.traffic-threshold-mb", "10"),
            ("netsat.threshold", "0.7"),
            ("yarn.scheduler.rackwise.starvation-guard-msec", "1"),
            ("yarn.scheduler.rackwise.unrelated-thing", "x"),
        ],
        vec![],
    );
    let unknown = unknown_settings(&given.settings, Registry::builtin().declarations());
    let listed: Vec<(&str, &str, Option<&str>)> = unknown
        .iter()
        .map(|u| (u.key.as_str(), u.value.as_str(), u.nearest))
        .collect();
    assert_eq!(
        listed,
        vec![
            (
                "netsat.threshold",
                "0.7",
                Some("yarn.scheduler.rackwise.netsat.threshold")
            ),
            (
                "yarn.scheduler.rackwise.starvation-guard-msec",
                "1",
                Some("yarn.scheduler.rackwise.starvation-guard-ms")
            ),
            ("yarn.scheduler.rackwise.unrelated-thing", "x", None),
        ]
    );
    // The engine still starts: the RM passes every key of the prefix and only warns.
    assert!(parse(&given).is_ok());
}

#[test]
fn queues_inherit_from_their_nearest_configured_ancestor() {
    let settings = parse(&config(
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
    assert_eq!(alice.policy_name, "shufflewatcher");
    assert_eq!(alice.values.number("shuffleHeavyRatio"), 2.0);
    assert_eq!(settings.queue_policy("root.users.bob").policy_name, "none");
    assert_eq!(settings.queue_policy("root.other").policy_name, "none");
    assert_eq!(settings.netsat.uplink_mbps(&RackName("/r2".into())), 500.0);
}

#[test]
fn with_no_guard_set_a_policy_has_its_own_default_and_the_others_the_keys() {
    let settings = parse(&config(
        &[],
        vec![
            queue("root.sw", &[("policy", "shufflewatcher")]),
            queue(
                "root.sw.quick",
                &[("policy", "shufflewatcher"), ("starvationGuardMs", "10000")],
            ),
            queue("root.nas", &[("policy", "nas")]),
        ],
    ))
    .unwrap();
    let guard = |queue: &str| settings.starvation_guard_ms(settings.queue_policy(queue));
    assert_eq!(guard("root.sw"), 60_000, "shufflewatcher's own bound");
    assert_eq!(guard("root.sw.alice"), 60_000, "inherited with the policy");
    assert_eq!(guard("root.sw.quick"), 10_000, "the queue's element wins");
    assert_eq!(guard("root.nas"), 30_000, "the key's default");
}

#[test]
fn a_queue_guard_is_its_own_else_the_global_key_and_bad_ones_are_refused() {
    let settings = parse(&config(
        &[("yarn.scheduler.rackwise.starvation-guard-ms", "20000")],
        vec![
            queue(
                "root.batch",
                &[("policy", "fresh"), ("starvationGuardMs", "3600000")],
            ),
            queue("root.batch.quick", &[("policy", "fresh")]),
            queue("root.sw", &[("policy", "shufflewatcher")]),
        ],
    ))
    .unwrap();
    let guard = |queue: &str| settings.starvation_guard_ms(settings.queue_policy(queue));
    assert_eq!(guard("root.batch"), 3_600_000);
    assert_eq!(
        guard("root.batch.alice"),
        3_600_000,
        "inherited with the element"
    );
    assert_eq!(
        guard("root.batch.quick"),
        20_000,
        "its own element sets none"
    );
    assert_eq!(
        guard("root.sw"),
        20_000,
        "the operator's key wins over the policy's own default"
    );

    let found = problems(parse(&config(
        &[],
        vec![
            queue("root.a", &[("policy", "fresh"), ("starvationGuardMs", "0")]),
            queue(
                "root.b",
                &[("policy", "nas"), ("starvationGuardMs", "soon")],
            ),
            queue(
                "root.c",
                &[("policy", "none"), ("starvationGuardMs", "60000")],
            ),
        ],
    )));
    let text: Vec<String> = found.iter().map(|p| p.to_string()).collect();
    assert_eq!(text.len(), 3, "{text:?}");
    assert!(
        text[0].contains(
            "queue root.a <rackwise><starvationGuardMs>: value '0' is out of range (0, 3600000]"
        ),
        "{}",
        text[0]
    );
    assert!(
        text[1]
            .contains("queue root.b <rackwise><starvationGuardMs>: value 'soon' is not a number"),
        "{}",
        text[1]
    );
    assert!(
        text[2].contains("queue root.c <rackwise><starvationGuardMs>: value '60000' applies only to a steered queue"),
        "{}",
        text[2]
    );
}

#[test]
fn nas_queue_elements_and_keys_are_parsed_with_their_defaults() {
    let settings = parse(&config(
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
    let setup = settings.queue_policy("root.nas.alice");
    assert_eq!(setup.policy_name, "nas");
    let defaults = NasParams::of(&setup.values);
    assert_eq!(defaults.light_below_bytes, MIB);
    assert_eq!(defaults.heavy_above_bytes, 100.0 * MIB);
    assert_eq!(defaults.small_input_below_bytes, 10.0 * MIB);
    assert_eq!((defaults.max_wait_ms, defaults.max_skips), (5000, 0));
    let tuned = NasParams::of(&settings.queue_policy("root.tuned").values);
    assert_eq!(tuned.light_below_bytes, 2.0 * MIB);
    assert_eq!(tuned.heavy_above_bytes, 50.0 * MIB);
    assert_eq!(tuned.small_input_below_bytes, 64.0 * MIB);
    assert_eq!(tuned.max_skips, 135);
    let keys = Keys::of(settings.keys_of("nas").unwrap());
    assert_eq!(keys.traffic_threshold_bytes, Some(256.0 * MIB));
    assert_eq!(keys.containers_per_node, Some(16));
    assert_eq!(keys.threshold_interval_ms, 5000);

    let computed = parse(&config(&[], vec![])).unwrap();
    let keys = Keys::of(computed.keys_of("nas").unwrap());
    assert_eq!(keys.traffic_threshold_bytes, None);
    assert_eq!(keys.containers_per_node, None);
}

#[test]
fn bad_nas_elements_are_refused_with_element_value_and_reason() {
    let found = problems(parse(&config(
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
