//! ShuffleWatcher's worked examples and its mechanisms beyond the NASS order: SAMP's preferred
//! map racks (Figure 5), SARP's reduce quotas (Figure 7), the starvation window and relaxed
//! fairness.

mod common;

use common::*;
use rackwise_core::mapreduce::Placement;
use rackwise_core::policy::shufflewatcher::sarp;
use rackwise_core::policy::Registry;
use rackwise_core::protocol::*;
use std::collections::BTreeMap;

fn preferred(env: &TestEnv, app: &str) -> Vec<String> {
    env.sw_job(app)
        .and_then(|job| job.samp.as_ref())
        .map(|samp| samp.preferred.iter().map(|r| r.0.to_string()).collect())
        .unwrap_or_default()
}

/// Figure 5: two jobs whose input is replicated on both racks. Previous schedulers spread both
/// jobs' maps (and so their map output) evenly; SAMP gives job1 rack1 and job2 rack2, so each
/// job's intermediate data sits on one rack and SARP can keep its shuffle there.
#[test]
fn figure5_samp_prefers_rack1_for_job1_and_rack2_for_job2() {
    let mut env = TestEnv::new(2, 2, &[]);
    env.submit("job1", "root.sw", 1, &["rackwise.shuffle-ratio=1"]);
    env.submit("job2", "root.sw", 2, &["rackwise.shuffle-ratio=1"]);
    // Every split has replicas on r1n1 and r2n1.
    env.asks("job1", &[(MAP, 8, &[(1, 1), (2, 1)])]);
    env.offer(1, 1);
    env.asks("job2", &[(MAP, 8, &[(1, 1), (2, 1)])]);
    env.offer(1, 1);
    assert_eq!(preferred(&env, "job1"), ["/r1"]);
    assert_eq!(preferred(&env, "job2"), ["/r2"]);

    // On each rack's data node the job preferring the rack goes (NASS line 4), node-local; the
    // other job's split there is node-local too, but it waits for its own rack (its locality
    // wait), so the preference binds.
    assert_eq!(ranking(&env.offer(2, 1), "root.sw"), ["job2:20:node"]);
    assert_eq!(ranking(&env.offer(1, 1), "root.sw"), ["job1:20:node"]);
}

/// Figure 7: each job's intermediate data sits 90/10 on two racks (job2 the other way round).
/// Reduces split evenly move half of it (50 GB of 100 GB) across racks; SARP's quotas (9 and 1
/// reduces) move 18 GB, 64 % less.
#[test]
fn figure7_sarp_cuts_cross_rack_shuffle_from_50_to_18_gb_per_job() {
    let mut env = TestEnv::new(2, 2, &[]);
    for (job, first_rack_maps) in [("job1", 90), ("job2", 10)] {
        env.submit(job, "root.sw", 1, &["rackwise.shuffle-ratio=1"]);
        env.asks(job, &[(MAP, 100, &[])]);
        for i in 0..100 {
            let r = if i < first_rack_maps { 1 } else { 2 };
            let map = env.run(job, MAP, r, 1, Locality::NodeLocal);
            env.finish(job, map);
        }
        env.stats(job, 100, 100, 10, 100 * GIB, 100 * GIB);
        env.asks(job, &[(REDUCE, 10, &[])]);
    }
    env.offer(1, 1);

    for (job, expected) in [("job1", [9, 1]), ("job2", [1, 9])] {
        let app = &env.engine.state().apps[&AppId(job.into())];
        let shares = env
            .sw_job(job)
            .and_then(|job| job.reduce_shares.clone())
            .expect("SARP ran");
        let quotas = sarp::apportion(10, &shares);
        assert_eq!(
            quotas.values().copied().collect::<Vec<_>>(),
            expected,
            "{job}"
        );

        let gb = GIB as f64;
        let output: BTreeMap<RackName, f64> = app
            .job
            .finished_maps_by_rack
            .iter()
            .map(|(rack, maps)| (rack.clone(), *maps as f64 * gb))
            .collect();
        let even = BTreeMap::from([(rack(1), 5), (rack(2), 5)]);
        let even_gb = sarp::cross_rack_shuffle_bytes(&output, &even) / gb;
        let sarp_gb = sarp::cross_rack_shuffle_bytes(&output, &quotas) / gb;
        assert!(
            (even_gb - 50.0).abs() < 1e-9,
            "{job}: even split moves {even_gb} GB"
        );
        assert!(
            (sarp_gb - 18.0).abs() < 1e-9,
            "{job}: SARP moves {sarp_gb} GB"
        );
    }
}

/// Shuffle-heavy job1 (ratio 3) on 2 racks of 2 nodes: 9 of its 10 maps finished on rack 1 and
/// one on rack 2, and its 10 reduces asked, so SARP's quotas are 9 on rack 1 and 1 on rack 2.
fn heavy_job_asking_ten_reduces_with_nine_maps_on_rack_1() -> TestEnv {
    let mut env = TestEnv::new(2, 2, &[]);
    env.submit("job1", "root.sw", 1, &["rackwise.shuffle-ratio=3"]);
    env.asks("job1", &[(MAP, 10, &[])]);
    for i in 0..10 {
        let map = env.run(
            "job1",
            MAP,
            if i < 9 { 1 } else { 2 },
            1,
            Locality::NodeLocal,
        );
        env.finish("job1", map);
    }
    env.asks("job1", &[(REDUCE, 10, &[])]);
    env
}

/// SARP's quotas are enforced where reduces are placed: once job1's 9 reduces sit on rack 1,
/// rack 1 gets no more of them (strict mode) while rack 2 still takes its one.
#[test]
fn strict_quotas_veto_reduces_on_a_rack_whose_quota_is_used() {
    let mut env = heavy_job_asking_ten_reduces_with_nine_maps_on_rack_1();
    for _ in 0..9 {
        assert_eq!(ranking(&env.offer(1, 1), "root.sw"), ["job1:10:any"]);
        env.run("job1", REDUCE, 1, 1, Locality::OffSwitch);
    }
    env.asks("job1", &[(REDUCE, 1, &[])]);
    let full = env.offer(1, 2);
    assert!(
        ranking(&full, "root.sw").is_empty(),
        "rack 1's quota of 9 is used"
    );
    assert_eq!(
        full.plan.queues[0].steered,
        [AppId("job1".into())],
        "so job1 is vetoed"
    );
    assert_eq!(ranking(&env.offer(2, 1), "root.sw"), ["job1:10:any"]);
}

/// A reduce of the 9 on rack 1 is stopped and asked again. Preempted by the RM (its status
/// says the task did not complete), it no longer holds rack 1's quota; killed by the AM
/// (`KILLED_BY_APPMASTER`, which the RM cannot tell from a task that succeeded), it counts as
/// done and the rerun's ask raises the job's reduce count, so the quota grows. Either way the
/// rerun may go back to rack 1, where 9 of 10 maps' output sits.
#[test]
fn a_reduce_stopped_and_asked_again_keeps_its_place_on_its_rack() {
    for task_completed in [false, true] {
        let mut env = heavy_job_asking_ten_reduces_with_nine_maps_on_rack_1();
        let mut on_rack1 = Vec::new();
        for _ in 0..9 {
            env.offer(1, 1);
            on_rack1.push(env.run("job1", REDUCE, 1, 1, Locality::OffSwitch));
        }
        env.offer(2, 1);
        env.run("job1", REDUCE, 2, 1, Locality::OffSwitch);
        env.end("job1", on_rack1[0].clone(), task_completed);
        env.asks("job1", &[(REDUCE, 1, &[])]);
        assert_eq!(
            ranking(&env.offer(1, 2), "root.sw"),
            ["job1:10:any"],
            "task_completed {task_completed}: the rerun is vetoed from rack 1"
        );
    }
}

/// A shuffle-light job `light` (ratio 0.5, so no SARP quota) with one reduce asked once its
/// four maps finished, three on rack 2 and one on rack 1, and a shuffle-heavy one `heavy`
/// (ratio 3) with one reduce and its one map finished on rack 2, both in `root.sw` with
/// `reduceRackWaitMs` at its default, 5 s.
fn light_and_heavy_jobs_with_their_output_on_rack_2() -> TestEnv {
    let mut env = TestEnv::with_queue(3, 2, &[], &[NASS_ORDER]);
    env.submit("light", "root.sw", 1, &["rackwise.shuffle-ratio=0.5"]);
    env.asks("light", &[(MAP, 4, &[])]);
    for r in [2, 2, 2, 1] {
        let map = env.run("light", MAP, r, 1, Locality::NodeLocal);
        env.finish("light", map);
    }
    env.asks("light", &[(REDUCE, 1, &[])]);
    env.submit("heavy", "root.sw", 2, &["rackwise.shuffle-ratio=3"]);
    env.asks("heavy", &[(MAP, 1, &[])]);
    let map = env.run("heavy", MAP, 2, 2, Locality::NodeLocal);
    env.finish("heavy", map);
    env.asks("heavy", &[(REDUCE, 1, &[])]);
    env
}

/// `reduceRackWaitMs`: a shuffle-light job has no SARP quota, so without the wait its reduce
/// takes the first container its queue gets. With it, the reduce stays off rack 1 (a third of
/// the busiest rack's output) and rack 3 (none) for 5 s from the first hold, goes to rack 2 at
/// once, and anywhere after the wait; a reduce started restarts the wait.
#[test]
fn a_light_reduce_waits_for_a_rack_near_its_output_for_a_bounded_time() {
    let mut env = light_and_heavy_jobs_with_their_output_on_rack_2();
    let light = "light:10:any".to_string();
    let start = env.now_ms;
    for (offset, r) in [(0, 1), (2_000, 3), (4_999, 1)] {
        env.now_ms = start + offset;
        assert!(
            !ranking(&env.offer(r, 1), "root.sw").contains(&light),
            "held off rack {r} at +{offset} ms"
        );
    }
    assert!(ranking(&env.offer(2, 1), "root.sw").contains(&light));
    env.now_ms = start + 5_000;
    assert!(ranking(&env.offer(3, 1), "root.sw").contains(&light));

    // The reduce starts on rack 3 and the job asks for one more: the wait starts over, so
    // rack 3 is held again (of two reduces, rack 2 and rack 1 want one each).
    env.run("light", REDUCE, 3, 1, Locality::OffSwitch);
    env.asks("light", &[(REDUCE, 1, &[])]);
    assert!(!ranking(&env.offer(3, 2), "root.sw").contains(&light));
    assert!(ranking(&env.offer(1, 2), "root.sw").contains(&light));
    env.now_ms += 5_000;
    assert!(ranking(&env.offer(3, 2), "root.sw").contains(&light));
}

/// The wait is for shuffle-light jobs: a heavy job's reduces follow SARP's quotas, under which
/// rack 1 (no output, quota 0) is vetoed with or without it; 0 turns it off.
#[test]
fn reduce_rack_wait_leaves_heavy_reduces_to_sarp_and_zero_turns_it_off() {
    let mut env = light_and_heavy_jobs_with_their_output_on_rack_2();
    assert_eq!(
        ranking(&env.offer(2, 1), "root.sw"),
        ["heavy:10:any", "light:10:any"]
    );
    assert!(ranking(&env.offer(1, 1), "root.sw").is_empty());

    let mut off = TestEnv::with_queue(3, 2, &[], &[("reduceRackWaitMs", "0")]);
    off.submit("light", "root.sw", 1, &["rackwise.shuffle-ratio=0.5"]);
    off.asks("light", &[(MAP, 2, &[])]);
    for r in [2, 2] {
        let map = off.run("light", MAP, r, 1, Locality::NodeLocal);
        off.finish("light", map);
    }
    off.asks("light", &[(REDUCE, 1, &[])]);
    assert_eq!(ranking(&off.offer(1, 1), "root.sw"), ["light:10:any"]);
}

/// SARP's split at a reduce's placement, not at the job's first reduce ask: when the reduces
/// are asked 2 of the job's 10 maps have finished, both on rack 1; the other 8 then finish on
/// rack 2. Fixed at the ask (`first-ask`), rack 1 holds every reduce's quota and rack 2 none,
/// so rack 2 is vetoed although 80 % of the output sits there; measured at placement (the
/// default), rack 2's quota is 8 of the 10 reduces and rack 1's 2.
#[test]
fn measured_shares_follow_the_output_finished_after_the_first_reduce_ask() {
    for (mode, rack2_takes_a_reduce) in [("measured", true), ("first-ask", false)] {
        let mut env = TestEnv::with_queue(2, 1, &[], &[("sarpShares", mode)]);
        env.submit("job1", "root.sw", 1, &["rackwise.shuffle-ratio=3"]);
        env.asks("job1", &[(MAP, 10, &[])]);
        for _ in 0..2 {
            let map = env.run("job1", MAP, 1, 1, Locality::NodeLocal);
            env.finish("job1", map);
        }
        env.asks("job1", &[(REDUCE, 10, &[])]);
        env.offer(1, 1);
        for _ in 0..8 {
            let map = env.run("job1", MAP, 2, 1, Locality::NodeLocal);
            env.finish("job1", map);
        }
        let on_rack2 = ranking(&env.offer(2, 1), "root.sw");
        assert_eq!(
            on_rack2.contains(&"job1:10:any".to_string()),
            rack2_takes_a_reduce,
            "{mode}: rack 2 ranked {on_rack2:?}"
        );
        // Rack 1 holds 2 of the 10 finished maps: under `measured` it takes 2 reduces, then
        // no more.
        if mode == "measured" {
            for _ in 0..2 {
                assert_eq!(ranking(&env.offer(1, 1), "root.sw"), ["job1:10:any"]);
                env.run("job1", REDUCE, 1, 1, Locality::OffSwitch);
            }
            assert!(
                ranking(&env.offer(1, 1), "root.sw").is_empty(),
                "rack 1's measured quota of 2 is used"
            );
        }
    }
}

#[test]
fn preference_quotas_only_rank_an_over_quota_reduce_last() {
    let mut env = TestEnv::with_queue(2, 1, &[], &[("sarpQuota", "preference")]);
    env.submit("heavy", "root.sw", 1, &["rackwise.shuffle-ratio=3"]);
    env.submit("light", "root.sw", 2, &["rackwise.shuffle-ratio=0.1"]);
    env.asks("heavy", &[(MAP, 1, &[(2, 1)])]);
    let map = env.run("heavy", MAP, 2, 1, Locality::NodeLocal);
    env.finish("heavy", map);
    env.asks("heavy", &[(REDUCE, 1, &[])]);
    env.asks("light", &[(REDUCE, 1, &[])]);
    // All of heavy's output is on rack 2: its quota on rack 1 is 0.
    assert_eq!(
        ranking(&env.offer(1, 1), "root.sw"),
        ["heavy:10:any", "light:10:any"],
        "unsaturated: Figure 3 line 14 still ranks any heavy reduce before light ones"
    );
}

/// A job from an earlier starvation window goes first whatever the categories say: here its
/// remote map beats a newer job's data-local map.
#[test]
fn an_earlier_starvation_window_overrides_the_nass_categories() {
    for (window_ms, first) in [("600000", "old:20:any"), ("0", "new:20:node")] {
        // Without the locality wait, which would hold the old job's remote map for a while.
        let mut env = TestEnv::with_queue(
            2,
            1,
            &[],
            &[
                ("starvationWindowMs", window_ms),
                ("localityWaitMs", "0"),
                ("rackWaitMs", "0"),
                NASS_ORDER,
            ],
        );
        env.submit("old", "root.sw", 0, &["rackwise.shuffle-ratio=0.5"]);
        env.submit("new", "root.sw", 700_000, &["rackwise.shuffle-ratio=0.5"]);
        env.asks("old", &[(MAP, 1, &[(2, 1)])]);
        env.asks("new", &[(MAP, 1, &[(1, 1)])]);
        assert_eq!(
            ranking(&env.offer(1, 1), "root.sw")[0],
            first,
            "window {window_ms}"
        );
    }
}

#[test]
fn quotas_sum_to_the_reduce_count_when_it_grows_later() {
    let mut env = TestEnv::new(3, 1, &[]);
    env.submit("job", "root.sw", 1, &["rackwise.shuffle-ratio=3"]);
    env.asks("job", &[(MAP, 3, &[])]);
    for r in 1..=3 {
        let map = env.run("job", MAP, r, 1, Locality::NodeLocal);
        env.finish("job", map);
    }
    env.asks("job", &[(REDUCE, 1, &[])]);
    env.offer(1, 1);
    // The AM ramps reduces up: first 1 asked, then the job reports 4 in all.
    env.stats("job", 3, 3, 4, 3 * GIB, 9 * GIB);
    env.offer(1, 1);
    let job = &env.engine.state().apps[&AppId("job".into())].job;
    let shares = env.sw_job("job").and_then(|j| j.reduce_shares.as_ref());
    let quotas = sarp::apportion(job.known_reduces(1), shares.unwrap());
    assert_eq!(quotas.values().copied().collect::<Vec<_>>(), [2, 1, 1]);
}

/// Relaxed fairness: a queue with nothing preferred here passes its turn (every app vetoed)
/// while another queue has tasks to take the node, for at most `relaxedIntervalMs`; a
/// preferred task ends the skipping.
#[test]
fn relaxed_fairness_skips_a_queue_without_preferred_work_for_a_bounded_time() {
    let mut env = TestEnv::with_queue(
        2,
        1,
        &[],
        // Without the locality wait, which would hold the remote map on its own.
        &[
            ("relaxedFairness", "true"),
            ("relaxedIntervalMs", "5000"),
            ("localityWaitMs", "0"),
            ("rackWaitMs", "0"),
        ],
    );
    env.submit("job", "root.sw", 1, &["rackwise.shuffle-ratio=0.5"]);
    env.asks("job", &[(MAP, 2, &[(2, 1)])]);
    // Alone on the cluster, the queue does not pass its turn: no one else would take the node.
    assert_eq!(ranking(&env.offer(1, 1), "root.sw"), ["job:20:any"]);
    env.submit("other", "root.plain", 2, &[]);
    env.asks("other", &[(MAP, 1, &[])]);
    // Rack 1 holds none of the job's data and it prefers rack 2.
    let skipped = env.offer(1, 1);
    assert!(ranking(&skipped, "root.sw").is_empty());
    assert_eq!(skipped.plan.queues[0].steered, [AppId("job".into())]);
    env.now_ms += 4_999;
    assert!(ranking(&env.offer(1, 1), "root.sw").is_empty());
    env.now_ms += 1;
    assert_eq!(ranking(&env.offer(1, 1), "root.sw"), ["job:20:any"]);
    // On rack 2 the map is preferred and data-local: no skipping, and the clock resets.
    assert_eq!(ranking(&env.offer(2, 1), "root.sw")[0], "job:20:node");
    assert!(ranking(&env.offer(1, 1), "root.sw").is_empty());
    // Once the other queue has nothing pending, the node is not left idle.
    env.run("other", MAP, 1, 1, Locality::OffSwitch);
    env.asks("other", &[(MAP, 0, &[])]);
    assert_eq!(ranking(&env.offer(1, 1), "root.sw"), ["job:20:any"]);
}

/// Relaxed fairness passes a queue's turn only to a queue that takes the node: where two
/// steered queues both have nothing preferred, neither passes (the node would idle, as stock
/// FairScheduler's own tests caught in `shufflewatcher-mr-priorities` mode); where one has
/// something preferred, the other passes to it.
#[test]
fn relaxed_fairness_never_passes_a_turn_that_no_queue_takes() {
    let elements = [
        ("policy", "shufflewatcher"),
        ("relaxedFairness", "true"),
        ("localityWaitMs", "0"),
        ("rackWaitMs", "0"),
    ];
    let queues = vec![queue("root.sw", &elements), queue("root.sw2", &elements)];
    let mut env = TestEnv::with_registry(3, 1, &[], queues, Registry::builtin()).unwrap();
    env.submit("a", "root.sw", 1, &["rackwise.shuffle-ratio=0.5"]);
    env.asks("a", &[(MAP, 2, &[(2, 1)])]);
    env.submit("b", "root.sw2", 2, &["rackwise.shuffle-ratio=0.5"]);
    env.asks("b", &[(MAP, 2, &[(3, 1)])]);
    // Rack 1 holds neither job's data: each queue would pass, and no one would take the node.
    let neither = env.offer(1, 1);
    assert_eq!(ranking(&neither, "root.sw"), ["a:20:any"]);
    assert_eq!(ranking(&neither, "root.sw2"), ["b:20:any"]);
    // Rack 3 holds `b`'s: its queue takes the node, and `a`'s passes its turn to it.
    let one = env.offer(3, 1);
    assert!(ranking(&one, "root.sw").is_empty());
    assert_eq!(ranking(&one, "root.sw2")[0], "b:20:node");
}

/// Locality inside NASS's map lines (delay scheduling's mechanism): a job takes node-local maps
/// on its SAMP racks at once, rack-local ones there after `localityWaitMs`, and maps elsewhere
/// after `rackWaitMs` more; a placement starts the clock again.
#[test]
fn nass_map_waits_for_a_local_placement_for_a_bounded_time() {
    let mut env = TestEnv::with_queue(
        2,
        2,
        &[],
        &[("localityWaitMs", "3000"), ("rackWaitMs", "5000")],
    );
    env.submit("job", "root.sw", 1, &["rackwise.shuffle-ratio=1"]);
    env.asks("job", &[(MAP, 4, &[(1, 1)])]);
    assert_eq!(ranking(&env.offer(1, 1), "root.sw")[0], "job:20:node");
    assert_eq!(preferred(&env, "job"), ["/r1"]);
    // Rack-local on its preferred rack after the locality wait; off its rack after the rack
    // wait more.
    let start = env.now_ms;
    for (offset, same_rack, other_rack) in [
        (0, vec![], vec![]),
        (2_999, vec![], vec![]),
        (3_000, vec!["job:20:rack", "job:20:any"], vec![]),
        (7_999, vec!["job:20:rack", "job:20:any"], vec![]),
        (8_000, vec!["job:20:rack", "job:20:any"], vec!["job:20:any"]),
    ] {
        env.now_ms = start + offset;
        let at = format!("at +{offset} ms");
        assert_eq!(ranking(&env.offer(1, 2), "root.sw"), same_rack, "{at}");
        assert_eq!(ranking(&env.offer(2, 1), "root.sw"), other_rack, "{at}");
    }
    // A node-local placement sets the job back to level 0, from then.
    env.run("job", MAP, 1, 1, Locality::NodeLocal);
    env.asks("job", &[(MAP, 3, &[(1, 1)])]);
    assert!(ranking(&env.offer(2, 1), "root.sw").is_empty());
}

/// `offRackMaps`: once a job has waited `localityWaitMs` for a node-local map on its SAMP
/// rack, a light job (shuffle/input 0.5: its output crossing racks costs half a remote read)
/// takes a node off the rack that holds its split rather than read it remotely on its rack; a
/// heavy one (ratio 2) keeps waiting for its rack. Rack-local maps off the rack only under
/// `rack-local`, the default (`None`: the element left out); any map elsewhere only after
/// `rackWaitMs`.
#[test]
fn off_rack_maps_go_node_local_elsewhere_only_where_samp_prices_them_below_a_remote_read() {
    let node_and_rack = vec!["job:20:node", "job:20:rack"];
    for (mode, ratio, node_local_elsewhere, rack_local_elsewhere) in [
        (Some("node-local"), "0.5", vec!["job:20:node"], vec![]),
        (
            Some("rack-local"),
            "0.5",
            node_and_rack.clone(),
            vec!["job:20:rack"],
        ),
        (None, "0.5", node_and_rack, vec!["job:20:rack"]),
        (Some("node-local"), "2", vec![], vec![]),
        (Some("none"), "0.5", vec![], vec![]),
    ] {
        let mut elements = vec![("localityWaitMs", "3000"), ("rackWaitMs", "5000")];
        elements.extend(mode.map(|mode| ("offRackMaps", mode)));
        let mode = mode.unwrap_or("the default");
        let mut env = TestEnv::with_queue(2, 2, &[], &elements);
        env.submit(
            "job",
            "root.sw",
            1,
            &[&format!("rackwise.shuffle-ratio={ratio}")],
        );
        // Every split on r1n1 and r2n1: one rack holds them all, so SAMP prefers one.
        env.asks("job", &[(MAP, 4, &[(1, 1), (2, 1)])]);
        env.offer(1, 2);
        assert_eq!(preferred(&env, "job"), ["/r1"], "{mode} {ratio}");
        let case = format!("offRackMaps={mode}, ratio {ratio}");
        // Before the locality wait, only a node-local map on its rack.
        assert!(ranking(&env.offer(2, 1), "root.sw").is_empty(), "{case}");
        env.now_ms += 3_000;
        assert_eq!(
            ranking(&env.offer(2, 1), "root.sw"),
            node_local_elsewhere,
            "{case}: r2n1 holds the split"
        );
        assert_eq!(
            ranking(&env.offer(2, 2), "root.sw"),
            rack_local_elsewhere,
            "{case}: r2n2 is on a rack holding it"
        );
        env.now_ms += 5_000;
        assert_eq!(
            ranking(&env.offer(2, 2), "root.sw"),
            ["job:20:rack", "job:20:any"],
            "{case}: after the rack wait"
        );
    }
}

/// A job nothing is known about starts at ShuffleWatcher's prior ratio, 1.0: off its rack its
/// output would cross as many bytes as a remote read on its rack moves, so it keeps waiting for
/// its rack. Once its finished maps' counters show a ratio of 0.1, it takes a node-local map
/// elsewhere.
#[test]
fn off_rack_maps_follow_the_ratio_the_counters_measure() {
    let mut env = TestEnv::with_queue(
        2,
        2,
        &[],
        &[
            ("localityWaitMs", "3000"),
            ("rackWaitMs", "30000"),
            ("offRackMaps", "node-local"),
        ],
    );
    env.submit("job", "root.sw", 1, &[]);
    env.asks("job", &[(MAP, 4, &[(1, 1), (2, 1)])]);
    env.offer(1, 2);
    assert_eq!(preferred(&env, "job"), ["/r1"]);
    env.now_ms += 3_000;
    assert!(
        ranking(&env.offer(2, 1), "root.sw").is_empty(),
        "prior ratio 1.0: a tie, the job waits for its rack"
    );
    env.stats("job", 4, 1, 1, GIB, GIB / 10);
    assert_eq!(ranking(&env.offer(2, 1), "root.sw"), ["job:20:node"]);
}

/// Storage without locality (`file:///`): splits name `localhost` on `/default-rack`, which no
/// node is on. SAMP prefers no rack (never that one): no rack reads the input better than
/// another, so the job's maps wait neither for a node-local placement that can never come nor
/// for a rack.
#[test]
fn storage_without_locality_samp_skips_rackless_racks_and_maps_are_not_held() {
    let mut env = TestEnv::with_queue(
        3,
        2,
        &[],
        &[("localityWaitMs", "3000"), ("rackWaitMs", "3000")],
    );
    env.submit("job", "root.sw", 1, &["rackwise.shuffle-ratio=1"]);
    env.map_asks_naming("job", 4, &["localhost"], &["/default-rack"]);
    let first = env.offer(1, 1);
    assert!(
        preferred(&env, "job").is_empty(),
        "no rack, never /default-rack"
    );
    // A map goes at once on whichever rack offers.
    assert_eq!(ranking(&first, "root.sw"), ["job:20:any"]);
    assert_eq!(ranking(&env.offer(2, 1), "root.sw"), ["job:20:any"]);
    assert_eq!(ranking(&env.offer(3, 1), "root.sw"), ["job:20:any"]);
}

/// By default FairScheduler's app order decides between a user's jobs: on an unsaturated rack
/// NASS puts the shuffle-heavy job's reduces first, but whichever job FairScheduler offers the
/// node to first places its own reduce (under fair share the light job, running nothing, before
/// the heavy one, running a map); with `jobOrder=nass` Figure 3's categories decide and the
/// light job is vetoed.
#[test]
fn job_order_apps_lets_fairscheduler_choose_between_the_jobs_nass_ranks() {
    for (order, light) in [
        (
            None,
            Placement::Place {
                priority: Priority(REDUCE),
                cap: Locality::OffSwitch,
            },
        ),
        (Some(NASS_ORDER), Placement::Vetoed),
    ] {
        let mut queue_elements = vec![("localityWaitMs", "0"), ("rackWaitMs", "0")];
        queue_elements.extend(order);
        let mut env = TestEnv::with_queue(2, 2, &[], &queue_elements);
        env.submit("heavy", "root.sw", 100, &["rackwise.shuffle-ratio=3"]);
        env.submit("light", "root.sw", 200, &["rackwise.shuffle-ratio=0.2"]);
        env.run("heavy", MAP, 2, 2, Locality::NodeLocal);
        env.asks("heavy", &[(REDUCE, 2, &[])]);
        env.asks("light", &[(REDUCE, 2, &[])]);
        let response = env.offer(1, 1);
        assert!(!response.diagnostics.rack_saturated);
        assert_eq!(
            ranking(&response, "root.sw"),
            ["heavy:10:any", "light:10:any"],
            "{order:?}"
        );
        assert_eq!(
            placement_of(&response, "root.sw", "light"),
            light,
            "{order:?}"
        );
        assert!(
            matches!(
                placement_of(&response, "root.sw", "heavy"),
                Placement::Place { .. }
            ),
            "{order:?}"
        );
    }
}

/// A 30 s starvation guard (not shufflewatcher's own default, so the tests read the same if that
/// moves) and no waits for a placement: only the guard holds an app back.
const GUARD_30_S_NO_WAITS: &[(&str, &str)] = &[
    ("starvationGuardMs", "30000"),
    ("localityWaitMs", "0"),
    ("rackWaitMs", "0"),
];

/// The starvation guard puts a lifted app first in its queue even where FairScheduler orders the
/// queue's apps: on that offer the plan's order decides, and the app FairScheduler would offer
/// the node to first (the heavy job here, NASS's first) is vetoed.
#[test]
fn a_starved_job_goes_first_though_fairscheduler_orders_the_users_jobs() {
    let mut env = TestEnv::with_queue(2, 2, &[], GUARD_30_S_NO_WAITS);
    env.submit("heavy", "root.sw", 100, &["rackwise.shuffle-ratio=3"]);
    env.submit("light", "root.sw", 200, &["rackwise.shuffle-ratio=0.2"]);
    env.asks("heavy", &[(REDUCE, 2, &[])]);
    env.asks("light", &[(REDUCE, 2, &[])]);
    let orders =
        |response: &OfferResponse| queue_plan(response, "root.sw").map(|q| q.scheduler_orders_apps);
    let response = env.offer(1, 1);
    assert!(response.diagnostics.starved.is_empty());
    assert_eq!(orders(&response), Some(true));
    assert!(matches!(
        placement_of(&response, "root.sw", "heavy"),
        Placement::Place { .. }
    ));

    // Past the 30 s guard the heavy job gets a container and the light one has had none.
    env.now_ms += 30_001;
    env.run("heavy", REDUCE, 2, 2, Locality::OffSwitch);
    let response = env.offer(1, 1);
    assert_eq!(response.diagnostics.starved, [AppId("light".into())]);
    assert_eq!(orders(&response), Some(false));
    assert_eq!(ranking(&response, "root.sw")[0], "light:10:any");
    assert_eq!(
        placement_of(&response, "root.sw", "heavy"),
        Placement::Vetoed
    );
}

/// Of two apps the guard lifts, the one that has waited longer goes first, though it arrived
/// later: the earlier job's wait restarted at its last container. In arrival order the earlier
/// job, tripping the guard again one bound after each container, would head the queue every time.
#[test]
fn the_guard_lifts_the_longest_waiting_app_first() {
    let mut env = TestEnv::with_queue(2, 2, &[], GUARD_30_S_NO_WAITS);
    env.submit("early", "root.sw", 100, &["rackwise.shuffle-ratio=3"]);
    env.submit("late", "root.sw", 200, &["rackwise.shuffle-ratio=3"]);
    env.asks("early", &[(REDUCE, 4, &[])]);
    env.asks("late", &[(REDUCE, 2, &[])]);
    assert!(env.offer(1, 1).diagnostics.starved.is_empty());

    env.now_ms += 20_000;
    env.run("early", REDUCE, 1, 1, Locality::OffSwitch);
    // Past the 30 s guard for both: the early job 30.001 s since its container, the late one
    // 50.001 s with none.
    env.now_ms += 30_001;
    let response = env.offer(1, 1);
    assert_eq!(
        response.diagnostics.starved,
        [AppId("late".into()), AppId("early".into())]
    );
    assert_eq!(
        ranking(&response, "root.sw"),
        ["late:10:any", "early:10:any", "early:10:any", "late:10:any"]
    );
    assert!(matches!(
        placement_of(&response, "root.sw", "late"),
        Placement::Place { .. }
    ));
    assert_eq!(
        placement_of(&response, "root.sw", "early"),
        Placement::Vetoed
    );
}

/// NASS places by locality first: another job's data-local map beats the preferring job's
/// rack-local or remote one; at each locality the job preferring the rack goes first.
#[test]
fn nass_ranks_locality_before_rack_preference() {
    let mut env = TestEnv::with_queue(
        2,
        2,
        &[],
        &[("localityWaitMs", "0"), ("rackWaitMs", "0"), NASS_ORDER],
    );
    env.submit("job1", "root.sw", 1, &["rackwise.shuffle-ratio=1"]);
    env.submit("job2", "root.sw", 2, &["rackwise.shuffle-ratio=1"]);
    env.asks("job1", &[(MAP, 8, &[(1, 1)])]);
    env.offer(1, 1);
    // Both racks hold job2's splits equally: it takes rack 2, which no other job prefers.
    env.asks("job2", &[(MAP, 8, &[(1, 2), (2, 1)])]);
    env.offer(1, 1);
    assert_eq!(preferred(&env, "job1"), ["/r1"]);
    assert_eq!(preferred(&env, "job2"), ["/r2"]);
    assert_eq!(
        ranking(&env.offer(1, 2), "root.sw"),
        [
            "job2:20:node",
            "job1:20:rack",
            "job2:20:rack",
            "job1:20:any",
            "job2:20:any"
        ]
    );
}

/// `sampRecheck`: a job nothing is known about is placed by SAMP at the prior ratio 1.0, at
/// which one rack holding a third of its splits is its cheapest set (8 remote reads against
/// 11.3 and 11.6 maps' worth of bytes for two and three racks). Once its counters measure 0.1,
/// every rack is the cheapest set (4.4 against 8): the job drops its preference and its maps
/// wait for locality as a job without one (rack-local anywhere after `localityWaitMs`), where
/// with its first choice it would keep waiting for its rack. At a measured 2.0 one rack still
/// pays, and the preference stands.
#[test]
fn samp_weighs_its_choice_again_with_the_ratio_the_counters_measure() {
    for (recheck, measured_output, preferred_after, rack_local_elsewhere) in [
        ("true", GIB / 10, vec![], vec!["job:20:rack"]),
        ("true", 2 * GIB, vec!["/r1"], vec![]),
        ("false", GIB / 10, vec!["/r1"], vec![]),
    ] {
        let mut env = TestEnv::with_queue(
            3,
            2,
            &[],
            &[
                ("localityWaitMs", "3000"),
                ("rackWaitMs", "30000"),
                ("offRackMaps", "node-local"),
                ("sampRecheck", recheck),
            ],
        );
        env.submit("job", "root.sw", 1, &[]);
        // 12 maps, 4 on each rack's first node.
        env.pending.push(Event::AsksChanged {
            app: AppId("job".into()),
            rows: vec![Ask {
                priority: Priority(MAP),
                any: 12,
                resources: Resources {
                    memory_mb: CONTAINER_MB,
                    vcores: 1,
                },
                hosts: (1..=3).map(|r| (host(r, 1).into(), 4)).collect(),
                racks: (1..=3).map(|r| (rack(r), 4)).collect(),
            }],
        });
        env.offer(1, 1);
        let case = format!("sampRecheck={recheck}, measured output {measured_output} B");
        assert_eq!(preferred(&env, "job"), ["/r1"], "{case}: at the prior");
        env.now_ms += 3_000;
        assert!(
            ranking(&env.offer(3, 2), "root.sw").is_empty(),
            "{case}: at the prior the job waits for its rack"
        );
        env.stats("job", 12, 1, 1, GIB, measured_output);
        env.offer(1, 1);
        assert_eq!(preferred(&env, "job"), preferred_after, "{case}");
        assert_eq!(
            ranking(&env.offer(3, 2), "root.sw"),
            rack_local_elsewhere,
            "{case}: r3n2 is on a rack holding 4 splits"
        );
    }
}

/// A map-only job shuffles nothing, so SAMP has no reason to pull its maps off their splits.
/// At the prior ratio 1.0 a job with 4 of its 12 splits on each of 3 racks prefers one rack
/// (as in the test above). Its AM's report of no reduces makes its ratio 0, at which every
/// rack is its cheapest set: reported after its first asks (the shim's poller runs behind the
/// AM), the job drops its preference and takes a rack-local map elsewhere once it has waited
/// `localityWaitMs`; reported with them (the simulator), it never prefers a rack.
#[test]
fn a_map_only_job_drops_its_rack_preference_at_its_first_report() {
    for report_before_asks in [false, true] {
        let mut env = TestEnv::with_queue(
            3,
            2,
            &[],
            &[("localityWaitMs", "3000"), ("offRackMaps", "node-local")],
        );
        env.submit("job", "root.sw", 1, &[]);
        if report_before_asks {
            env.stats("job", 12, 0, 0, 0, 0);
        }
        env.map_asks_on("job", &[(1, 1, 4), (2, 1, 4), (3, 1, 4)]);
        env.offer(1, 1);
        if !report_before_asks {
            assert_eq!(preferred(&env, "job"), ["/r1"], "at the prior");
            env.stats("job", 12, 0, 0, 0, 0);
            env.offer(1, 1);
        }
        let case = format!("report before the asks: {report_before_asks}");
        assert_eq!(preferred(&env, "job"), Vec::<String>::new(), "{case}");
        env.now_ms += 3_000;
        assert_eq!(
            ranking(&env.offer(3, 2), "root.sw"),
            ["job:20:rack"],
            "{case}: r3n2 is on a rack holding 4 splits"
        );
    }
}

/// A rack gives a job its containers shared with the other jobs' claims on it, each job
/// claiming the share of its maps it puts there. On 3 racks of 16 containers, a shuffle-light
/// job (ratio 0.01) with 4 splits on rack 1 and 4 on rack 2 prefers both, half its maps on
/// each. A shuffle-heavy job (ratio 10) then asks for 10 maps, 8 of whose splits are on rack 1
/// and 2 on rack 3: rack 1 alone costs 2 remote reads and gives it 16 / 1.5 = 10.7 containers,
/// enough for its 10 maps. Counted as a whole job there, the light job would leave it 8, and the
/// heavy job would take rack 3 alone for 8 remote reads.
#[test]
fn a_job_spread_over_racks_claims_each_by_the_share_of_maps_it_puts_there() {
    let mut env = TestEnv::new(3, 2, &[]);
    env.submit("light", "root.sw", 1, &["rackwise.shuffle-ratio=0.01"]);
    env.map_asks_on("light", &[(1, 1, 4), (2, 1, 4)]);
    env.offer(3, 2);
    assert_eq!(preferred(&env, "light"), ["/r1", "/r2"]);
    env.submit("heavy", "root.sw", 2, &["rackwise.shuffle-ratio=10"]);
    env.map_asks_on("heavy", &[(1, 1, 8), (3, 1, 2)]);
    env.offer(3, 2);
    assert_eq!(preferred(&env, "heavy"), ["/r1"]);
}

/// `sampRemoteReadsPerRack`: a shuffle-heavy job of 16 maps on 3 racks of 2 nodes (16
/// containers each), with 8 of its splits on rack 1 and 4 on each other rack. Rack 1 alone is
/// SAMP's cheapest set: 8 remote reads, and the whole shuffle on one rack. Alone on the cluster
/// the job's share runs all 16 maps at once, 8 of them reading through rack 1's link. A cap of 5
/// per rack refuses that set, and the job takes racks 1 and 2, 6 remote reads over two links; a
/// cap of 8 lets it stand, as does no cap. Beside five other jobs its share is 8 containers, 4 of
/// them reading at once, and a cap of 5 lets rack 1 stand: the cap follows the load.
#[test]
fn samp_remote_reads_per_rack_spreads_a_job_whose_share_would_read_through_one_link() {
    for (cap, other_jobs, expected) in [
        ("0", 0, vec!["/r1"]),
        ("5", 0, vec!["/r1", "/r2"]),
        ("8", 0, vec!["/r1"]),
        ("5", 5, vec!["/r1"]),
    ] {
        let mut env = TestEnv::with_queue(3, 2, &[], &[("sampRemoteReadsPerRack", cap)]);
        for other in 0..other_jobs {
            env.submit(&format!("other{other}"), "root.plain", 1, &[]);
        }
        env.submit("heavy", "root.sw", 2, &["rackwise.shuffle-ratio=10"]);
        env.map_asks_on("heavy", &[(1, 1, 8), (2, 1, 4), (3, 1, 4)]);
        env.offer(1, 1);
        assert_eq!(
            preferred(&env, "heavy"),
            expected,
            "sampRemoteReadsPerRack={cap}, {other_jobs} other jobs"
        );
    }
}

/// `sampCapacity`: a job alone on 2 racks of 2 nodes (8 containers each) with all 24 of its
/// splits on rack 1. Its even share is the whole cluster (32 containers) and rack 1 gives 16,
/// so under `always` rack 1 alone cannot run its 24 maps at once and its best set is every
/// rack, which is no preference. Rack 1 forces no remote read: under `remote-reads` and `never`
/// it costs nothing (the whole shuffle on one rack) and is chosen.
#[test]
fn samp_capacity_decides_whether_a_rack_holding_every_split_must_give_the_job_its_share() {
    for (capacity, expected) in [
        ("always", vec![]),
        ("remote-reads", vec!["/r1"]),
        ("never", vec!["/r1"]),
    ] {
        let mut env = TestEnv::with_queue(2, 2, &[], &[("sampCapacity", capacity)]);
        env.submit("job", "root.sw", 1, &["rackwise.shuffle-ratio=1"]);
        env.asks("job", &[(MAP, 24, &[(1, 1), (1, 2)])]);
        env.offer(1, 1);
        assert_eq!(preferred(&env, "job"), expected, "sampCapacity={capacity}");
    }
}
