//! Named scenarios for the engine: each states a situation, feeds the events the shim would
//! send, and checks the plan for one node offer.

mod common;

use common::*;
use rackwise_core::protocol::*;
use rackwise_core::{CoreError, Engine};
use std::collections::BTreeMap;

/// Two jobs in the steered queue on two racks: `heavy` (hinted ratio 3) with maps whose
/// splits live on r1n1, and `light` (hinted ratio 0.2); both have maps and reduces pending.
/// The map-locality wait is off and NASS orders the jobs: these scenarios are Figure 3's
/// category order as written.
fn two_jobs(settings: &[(&str, &str)]) -> TestEnv {
    let mut env = TestEnv::with_queue(
        2,
        2,
        settings,
        &[("localityWaitMs", "0"), ("rackWaitMs", "0"), NASS_ORDER],
    );
    env.submit("heavy", "root.sw", 100, &["rackwise.shuffle-ratio=3"]);
    env.submit("light", "root.sw", 200, &["rackwise.shuffle-ratio=0.2"]);
    env.asks("heavy", &[(MAP, 4, &[(1, 1)]), (REDUCE, 2, &[])]);
    env.asks("light", &[(MAP, 4, &[(2, 1)]), (REDUCE, 2, &[])]);
    env
}

/// Running reduces of a shuffle-heavy job on rack 2 whose maps finished on rack 1 pull their
/// input across rack 1's link; with a 100 Mbit/s link and 200 Mbit/s per fetch it saturates.
fn saturate_rack_one(env: &mut TestEnv) {
    env.submit("bulk", "root.plain", 50, &["rackwise.shuffle-ratio=5"]);
    for _ in 0..4 {
        let map = env.run("bulk", MAP, 1, 2, Locality::NodeLocal);
        env.finish("bulk", map);
    }
    env.stats("bulk", 4, 4, 2, 4 * GIB, 20 * GIB);
    env.run("bulk", REDUCE, 2, 1, Locality::OffSwitch);
    env.run("bulk", REDUCE, 2, 2, Locality::OffSwitch);
}

#[test]
fn saturated_rack_gets_maps_first_local_before_remote_then_light_reduces_then_heavy() {
    let mut env = two_jobs(&[("yarn.scheduler.rackwise.netsat.rack-uplink-mbps", "100")]);
    saturate_rack_one(&mut env);
    let response = env.offer(1, 1);
    assert!(
        response.diagnostics.rack_saturated,
        "{:?}",
        response.diagnostics
    );
    assert_eq!(
        ranking(&response, "root.sw"),
        [
            "heavy:20:node", // line 4: maps of the job preferring this rack (SAMP), local first
            "heavy:20:rack",
            "heavy:20:any",
            "light:20:any", // line 6: any map
            "light:10:any", // line 7: reduce of a shuffle-light job
            "heavy:10:any", // line 8: shuffle-heavy reduce within its rack quota (SARP)
        ]
    );
}

#[test]
fn unsaturated_rack_gets_heavy_reduces_first_then_light_reduces_then_maps() {
    let mut env = two_jobs(&[]);
    let response = env.offer(1, 1);
    assert!(!response.diagnostics.rack_saturated);
    assert_eq!(
        ranking(&response, "root.sw"),
        [
            "heavy:10:any",  // line 13: heavy reduce, its rack quota not met
            "light:10:any",  // line 15: any reduce
            "heavy:20:node", // line 16: maps of the job preferring this rack, local first
            "heavy:20:rack",
            "heavy:20:any",
            "light:20:any", // line 18: any map
        ]
    );
}

#[test]
fn ties_inside_a_category_go_by_job_arrival_then_id() {
    let mut env = TestEnv::new(1, 1, &[]);
    env.submit("b-late", "root.sw", 300, &[]);
    env.submit("c-early", "root.sw", 100, &[]);
    env.submit("a-early", "root.sw", 100, &[]);
    for app in ["b-late", "c-early", "a-early"] {
        env.asks(app, &[(REDUCE, 1, &[])]);
    }
    assert_eq!(
        ranking(&env.offer(1, 1), "root.sw"),
        ["a-early:10:any", "c-early:10:any", "b-late:10:any"]
    );
}

#[test]
fn rerun_maps_rank_with_maps_and_before_the_normal_map_ask_of_their_job() {
    let mut env = TestEnv::with_queue(1, 1, &[], &[("localityWaitMs", "0"), ("rackWaitMs", "0")]);
    env.submit("j", "root.sw", 1, &[]);
    env.asks("j", &[(MAP, 2, &[]), (RERUN_MAP, 1, &[])]);
    assert_eq!(
        ranking(&env.offer(1, 1), "root.sw"),
        ["j:5:any", "j:20:any"]
    );
}

#[test]
fn non_mapreduce_apps_apps_awaiting_their_am_and_unsteered_queues_are_left_alone() {
    let mut env = TestEnv::new(1, 1, &[]);
    env.submit("plain", "root.plain", 1, &[]);
    env.asks("plain", &[(REDUCE, 1, &[])]);
    env.submit("waiting-am", "root.sw", 2, &[]);
    env.asks("waiting-am", &[(0, 1, &[])]);
    env.pending.push(Event::AppAdded {
        app: AppId("spark".into()),
        name: "spark".into(),
        user: "bob".into(),
        queue: "root.sw".into(),
        app_type: "SPARK".into(),
        tags: vec![],
        submit_ms: 3,
    });
    env.asks("spark", &[(REDUCE, 1, &[])]);
    let response = env.offer(1, 1);
    assert!(response.plan.queues.is_empty(), "{:?}", response.plan);
}

#[test]
fn an_app_waiting_longer_than_the_guard_goes_first_with_all_its_asks() {
    let mut env = TestEnv::new(
        2,
        1,
        &[("yarn.scheduler.rackwise.starvation-guard-ms", "10000")],
    );
    env.submit("old", "root.sw", 1, &["rackwise.shuffle-ratio=0.1"]);
    env.submit("young", "root.sw", 2, &["rackwise.shuffle-ratio=9"]);
    env.asks("old", &[(MAP, 1, &[(2, 1)])]);
    env.asks("young", &[(REDUCE, 1, &[])]);
    let first = env.offer(1, 1);
    assert_eq!(ranking(&first, "root.sw")[0], "young:10:any");
    assert!(first.diagnostics.starved.is_empty());

    env.now_ms += 10_001;
    let later = env.offer(1, 1);
    assert_eq!(
        later.diagnostics.starved.len(),
        2,
        "both have waited past the guard"
    );
    assert_eq!(
        ranking(&later, "root.sw")[..2],
        ["old:20:any", "young:10:any"]
    );

    // A container for `old` restarts its clock; `young` stays starved.
    env.run("old", MAP, 1, 1, Locality::OffSwitch);
    env.asks("old", &[(MAP, 1, &[(2, 1)])]);
    let after = env.offer(1, 1);
    assert_eq!(after.diagnostics.starved, [AppId("young".into())]);
}

/// `root.long` sets its own guard of 60 s over the global 10 s; `root.sw` keeps the global one.
/// Each has one job whose reduce the other job's map outranks, so both wait from submission.
#[test]
fn a_queue_with_its_own_guard_holds_past_the_global_one_and_is_lifted_at_its_own() {
    let queues = vec![
        queue("root.sw", &[("policy", "shufflewatcher")]),
        queue(
            "root.long",
            &[("policy", "shufflewatcher"), ("starvationGuardMs", "60000")],
        ),
    ];
    let mut env = TestEnv::with_registry(
        1,
        1,
        &[("yarn.scheduler.rackwise.starvation-guard-ms", "10000")],
        queues,
        rackwise_core::policy::Registry::builtin(),
    )
    .expect("valid config");
    env.submit("global", "root.sw", 1, &[]);
    env.submit("own", "root.long", 2, &[]);
    env.asks("global", &[(REDUCE, 1, &[])]);
    env.asks("own", &[(REDUCE, 1, &[])]);
    assert!(env.offer(1, 1).diagnostics.starved.is_empty());

    // Past the global bound, well short of the queue's own: only root.sw's job is lifted.
    env.now_ms += 10_001;
    assert_eq!(
        env.offer(1, 1).diagnostics.starved,
        [AppId("global".into())]
    );

    // Still held at 59 s: the queue's bound, not the global one, applies.
    env.now_ms += 49_000;
    assert_eq!(
        env.offer(1, 1).diagnostics.starved,
        [AppId("global".into())]
    );

    env.now_ms += 1_000;
    let past_own = env.offer(1, 1);
    let mut starved = past_own.diagnostics.starved.clone();
    starved.sort();
    assert_eq!(starved, [AppId("global".into()), AppId("own".into())]);
}

#[test]
fn counters_turn_a_job_heavy_and_its_ratio_is_learned_for_the_next_run() {
    let mut env = TestEnv::with_queue(1, 1, &[], &[NASS_ORDER]);
    env.submit("run1", "root.sw", 1, &[]);
    env.submit("other", "root.sw", 2, &["rackwise.shuffle-ratio=1.5"]);
    env.asks("run1", &[(REDUCE, 1, &[])]);
    env.asks("other", &[(REDUCE, 1, &[])]);
    // Prior 1.0 is not heavy, so the hinted-heavy job goes first when unsaturated.
    assert_eq!(ranking(&env.offer(1, 1), "root.sw")[0], "other:10:any");

    env.stats("run1", 10, 5, 1, 5 * GIB, 10 * GIB);
    assert_eq!(ranking(&env.offer(1, 1), "root.sw")[0], "run1:10:any");

    env.pending.push(Event::AppRemoved {
        app: AppId("run1".into()),
    });
    let removed = env.offer(1, 1);
    assert_eq!(
        removed.learned,
        [LearnedRatio {
            job_name: "job-run1".into(),
            ratio: 2.0,
            runs: 1,
            ..LearnedRatio::default()
        }]
    );

    // The next run of the same job name starts heavy, from what the first one taught; with
    // the prior it would be light and rank behind `other`.
    env.pending.push(Event::AppAdded {
        app: AppId("run2".into()),
        name: "job-run1".into(),
        user: "alice".into(),
        queue: "root.sw".into(),
        app_type: "MAPREDUCE".into(),
        tags: vec![],
        submit_ms: 0,
    });
    env.asks("run2", &[(REDUCE, 1, &[])]);
    assert_eq!(ranking(&env.offer(1, 1), "root.sw")[0], "run2:10:any");
}

#[test]
fn learned_history_given_at_start_seeds_recurring_jobs() {
    let config = EngineConfig {
        queues: vec![QueueSettings {
            queue: "root".into(),
            rackwise: Some(BTreeMap::from([("policy".into(), "shufflewatcher".into())])),
        }],
        learned: vec![LearnedRatio {
            job_name: "nightly".into(),
            ratio: 4.0,
            runs: 7,
            ..LearnedRatio::default()
        }],
        ..EngineConfig::default()
    };
    let mut engine = Engine::new(&config).unwrap();
    let request = OfferRequest {
        now_ms: 1,
        events: vec![
            Event::NodeAdded {
                node: NodeId("h:1".into()),
                host: "h".into(),
                rack: RackName("/r".into()),
                capacity: Resources {
                    memory_mb: 1,
                    vcores: 1,
                },
            },
            Event::AppAdded {
                app: AppId("a".into()),
                name: "nightly".into(),
                user: "u".into(),
                queue: "root.default".into(),
                app_type: "MAPREDUCE".into(),
                tags: vec![],
                submit_ms: 0,
            },
        ],
        node: NodeOffer {
            node: NodeId("h:1".into()),
            unallocated: Resources::default(),
            utilization: None,
        },
    };
    engine.offer(request);
    let job = &engine.state().apps[&AppId("a".into())].job;
    assert_eq!(job.estimate.ratio, 4.0);
}

#[test]
fn model_saturation_ends_once_the_shuffle_would_have_been_fetched() {
    let mut env = TestEnv::new(
        2,
        2,
        &[
            ("yarn.scheduler.rackwise.netsat.rack-uplink-mbps", "100"),
            ("yarn.scheduler.rackwise.netsat.smoothing", "1"),
            ("yarn.scheduler.rackwise.netsat.period-ms", "0"),
        ],
    );
    saturate_rack_one(&mut env);
    let busy = env.offer(1, 1);
    // Two reduces each pull 200 Mbit/s, all of it from rack 1: 400 of 100 Mbit/s outbound.
    assert!(
        busy.diagnostics
            .rack_utilization
            .is_some_and(|utilization| (utilization - 4.0).abs() < 1e-9),
        "{:?}",
        busy.diagnostics
    );
    // Each reduce fetches 10 GiB at 200 Mbit/s: done after 429.5 s.
    env.now_ms += 429_000;
    assert!(env.offer(1, 1).diagnostics.rack_saturated);
    env.now_ms += 1_000;
    assert!(!env.offer(1, 1).diagnostics.rack_saturated);
}

#[test]
fn a_fresh_measured_rack_load_overrides_the_model_and_a_stale_one_does_not() {
    let mut env = two_jobs(&[
        ("yarn.scheduler.rackwise.netsat.source", "feed"),
        ("yarn.scheduler.rackwise.netsat.feed-max-age-ms", "5000"),
        ("yarn.scheduler.rackwise.netsat.smoothing", "1"),
    ]);
    env.pending.push(Event::RackLoad {
        rack: rack(1),
        utilization: 0.95,
        time_ms: env.now_ms,
    });
    assert!(env.offer(1, 1).diagnostics.rack_saturated);
    env.now_ms += 5_001;
    assert!(!env.offer(1, 1).diagnostics.rack_saturated);
}

#[test]
fn the_same_events_give_the_same_response_bytes() {
    let run = || {
        let mut env = two_jobs(&[("yarn.scheduler.rackwise.netsat.rack-uplink-mbps", "100")]);
        saturate_rack_one(&mut env);
        serde_json::to_vec(&env.offer(1, 1)).expect("a response serializes")
    };
    assert_eq!(run(), run());
}

#[test]
fn an_offer_for_an_unknown_node_is_left_to_fairscheduler() {
    let mut env = two_jobs(&[]);
    let response = env.offer(9, 9);
    assert!(response.plan.queues.is_empty());
    assert_eq!(response.diagnostics.rack, None);
}

#[test]
fn a_refused_reconfiguration_keeps_the_previous_settings() {
    let mut env = two_jobs(&[("yarn.scheduler.rackwise.netsat.threshold", "0.5")]);
    let bad = EngineConfig {
        settings: BTreeMap::from([(
            "yarn.scheduler.rackwise.netsat.threshold".to_string(),
            "2".to_string(),
        )]),
        ..EngineConfig::default()
    };
    assert!(matches!(
        env.engine.reconfigure(&bad),
        Err(CoreError::Config(_))
    ));
    assert_eq!(env.engine.settings().netsat.threshold, 0.5);
    assert!(
        !env.offer(1, 1).plan.queues.is_empty(),
        "queue policies kept too"
    );
}

#[test]
fn host_figures_of_a_feed_add_up_against_the_rack_link() {
    let mut env = two_jobs(&[
        ("yarn.scheduler.rackwise.netsat.source", "feed"),
        ("yarn.scheduler.rackwise.netsat.rack-uplink-mbps", "500"),
        ("yarn.scheduler.rackwise.netsat.smoothing", "1"),
    ]);
    for (n, mbps) in [(1, 250.0), (2, 200.0)] {
        env.pending.push(Event::HostFigures {
            host: host(1, n),
            time_ms: env.now_ms,
            cross_rack_mbps: Some(mbps),
            disk_utilization: None,
            network_utilization: None,
            cpu_speed: None,
        });
    }
    let response = env.offer(1, 1);
    assert!(response
        .diagnostics
        .rack_utilization
        .is_some_and(|utilization| (utilization - 0.9).abs() < 1e-9));
    assert!(response.diagnostics.rack_saturated);
    assert!(
        !env.offer(2, 1).diagnostics.rack_saturated,
        "rack 2 reported nothing: model"
    );
}

#[test]
fn netsat_samples_once_per_period_and_smooths_a_burst() {
    let mut env = two_jobs(&[
        ("yarn.scheduler.rackwise.netsat.source", "feed"),
        ("yarn.scheduler.rackwise.netsat.period-ms", "2000"),
        ("yarn.scheduler.rackwise.netsat.smoothing", "0.5"),
    ]);
    let load = |env: &mut TestEnv, utilization: f64| {
        env.pending.push(Event::RackLoad {
            rack: rack(1),
            utilization,
            time_ms: env.now_ms,
        });
        env.offer(1, 1)
            .diagnostics
            .rack_utilization
            .expect("a shufflewatcher queue reads NetSat")
    };
    assert_eq!(
        load(&mut env, 0.6),
        0.6,
        "the first sample is taken as it is"
    );
    env.now_ms += 1_000;
    assert_eq!(
        load(&mut env, 1.0),
        0.6,
        "within the period the last sample stands"
    );
    env.now_ms += 1_000;
    assert_eq!(
        load(&mut env, 1.0),
        0.8,
        "half the new sample, half the average"
    );
    env.now_ms += 2_000;
    assert_eq!(load(&mut env, 1.0), 0.9);
}

/// NetSat's sample walks every running container; while no queue is under a policy that reads
/// it (FRESH here) none is taken, and a queue switched back to ShuffleWatcher starts a fresh
/// average rather than one that blends figures from before the gap.
#[test]
fn netsat_is_sampled_only_while_a_queue_names_a_policy_that_reads_it() {
    let feed = [
        ("yarn.scheduler.rackwise.netsat.source", "feed"),
        ("yarn.scheduler.rackwise.netsat.smoothing", "0.5"),
    ];
    let mut env = TestEnv::new(2, 2, &feed);
    let queue_under = |env: &mut TestEnv, policy: &str| {
        env.engine
            .reconfigure(&EngineConfig {
                settings: feed
                    .iter()
                    .map(|(key, value)| (key.to_string(), value.to_string()))
                    .collect(),
                queues: vec![queue("root.sw", &[("policy", policy)])],
                source: "test".into(),
                ..EngineConfig::default()
            })
            .unwrap();
    };
    let load = |env: &mut TestEnv, utilization: f64| {
        env.pending.push(Event::RackLoad {
            rack: rack(1),
            utilization,
            time_ms: env.now_ms,
        });
        env.now_ms += 5_000;
        env.offer(1, 1).diagnostics
    };
    assert_eq!(load(&mut env, 0.95).rack_utilization, Some(0.95));
    queue_under(&mut env, "fresh");
    let unread = load(&mut env, 0.95);
    assert_eq!(unread.rack_utilization, None);
    assert!(!unread.rack_saturated);
    queue_under(&mut env, "shufflewatcher");
    assert_eq!(
        load(&mut env, 0.4).rack_utilization,
        Some(0.4),
        "the first sample after the gap is taken as it is, not averaged with 0.95"
    );
}

#[test]
fn an_unknown_load_source_is_refused() {
    let config = EngineConfig {
        settings: BTreeMap::from([(
            "yarn.scheduler.rackwise.netsat.source".to_string(),
            "snmp".to_string(),
        )]),
        ..EngineConfig::default()
    };
    match Engine::new(&config) {
        Err(CoreError::Config(problems)) => {
            assert_eq!(
                problems[0].to_string(),
                "yarn.scheduler.rackwise.netsat.source: value 'snmp' must be model or feed"
            );
        }
        other => panic!("expected a config error, got {:?}", other.err()),
    }
}

#[test]
fn the_rack_set_follows_nodes_joining_moving_and_leaving() {
    let mut env = TestEnv::new(2, 2, &[]);
    env.offer(1, 1);
    assert_eq!(env.engine.state().rack_count(), 2);
    // r2n1 re-registers on rack 3, then both rack-2 nodes leave: rack 2 is gone.
    env.pending.push(Event::NodeAdded {
        node: node(2, 1),
        host: host(2, 1),
        rack: rack(3),
        capacity: Resources {
            memory_mb: 8192,
            vcores: 8,
        },
    });
    env.offer(1, 1);
    assert_eq!(env.engine.state().rack_count(), 3);
    env.pending.push(Event::NodeRemoved { node: node(2, 2) });
    env.offer(1, 1);
    let racks: Vec<&str> = env.engine.state().racks().map(|r| &*r.0).collect();
    assert_eq!(racks, ["/r1", "/r3"]);
}
