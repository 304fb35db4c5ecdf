//! NAS (paper Algorithms 1–4): the TrafficThreshold on a worked example, each algorithm's
//! category order as named scenarios, the map hold on a congested rack, the order between task
//! kinds (within a job and between a user's jobs), switching a queue between `nas` and
//! `shufflewatcher` on reload, and the paper's skip probability checked by a seeded Monte-Carlo
//! run of MTS.

mod common;

use common::*;
use rackwise_core::mapreduce::Placement;
use rackwise_core::policy::nas::Keys;
use rackwise_core::protocol::*;

const MIB: u64 = 1 << 20;
const TRAFFIC_THRESHOLD_MB: &str = "yarn.scheduler.rackwise.nas.traffic-threshold-mb";
const DEFAULT_MAP_INPUT_MB: &str = "yarn.scheduler.rackwise.predictor.default-map-input-mb";
/// Rack loads from the operator feed (`rack_load`), read on every offer, unsmoothed.
const FEED: [(&str, &str); 3] = [
    ("yarn.scheduler.rackwise.netsat.source", "feed"),
    ("yarn.scheduler.rackwise.netsat.period-ms", "0"),
    ("yarn.scheduler.rackwise.netsat.smoothing", "1"),
];

/// Counters making `app` a predicted job of `maps` maps and one reduce, each map reading
/// `input_mib` and writing `output_mib` (one completed map is enough for the predictor).
fn predicted(env: &mut TestEnv, app: &str, maps: u32, input_mib: f64, output_mib: f64) {
    let bytes = |mib: f64| (mib * MIB as f64) as u64;
    env.stats(app, maps, 1, 1, bytes(input_mib), bytes(output_mib));
}

/// Why each entry of `queue`'s plan is where it is.
fn reasons(response: &OfferResponse, queue: &str) -> Vec<String> {
    queue_plan(response, queue)
        .map(|q| q.entries.iter().map(|e| e.reason.to_string()).collect())
        .unwrap_or_default()
}

/// NAS's own ranking across a user's jobs, as the paper has it: the tests of MTS's and CR-RTS's
/// orders use it, since by default FairScheduler's app order decides between jobs.
const PAPER_ORDER: (&str, &str) = ("kindOrder", "priority");

/// Only the reduce entries of a ranking.
fn reduces_of(ranking: Vec<String>) -> Vec<String> {
    ranking
        .into_iter()
        .filter(|e| e.contains(&format!(":{REDUCE}:")))
        .collect()
}

/// An operator feed reading for rack `r`, now (the suite's `FEED` settings make it count).
fn rack_load(env: &mut TestEnv, r: u32, utilization: f64) {
    env.pending.push(Event::RackLoad {
        rack: rack(r),
        utilization,
        time_ms: env.now_ms,
    });
}

/// A map of `app` that ran on node `n` of rack `r` and finished: its output sits there.
fn finished_map(env: &mut TestEnv, app: &str, r: u32, n: u32) {
    let container = env.run(app, MAP, r, n, Locality::NodeLocal);
    env.finish(app, container);
}

#[test]
fn nas_traffic_threshold_is_m_times_the_mean_predicted_shuffle_per_map_worked_example() {
    // m = 8: nodes of 8192 MB / 8 vcores, map containers of 1024 MB / 1 vcore.
    let mut env = TestEnv::nas(2, 2, &[], &[]);
    env.submit("a", "root.nas", 1, &[]);
    env.submit("b", "root.nas", 2, &[]);
    env.asks("a", &[(MAP, 8, &[(1, 1)])]);
    env.asks("b", &[(MAP, 20, &[(1, 1)])]);
    // A: K = 10 maps of 64 MiB at ratio 1.5, 96 MiB each: S = 960 MiB.
    env.stats("a", 10, 2, 1, 128 * MIB, 192 * MIB);
    // B: K = 30 maps of 32 MiB at ratio 0.25, 8 MiB each: S = 240 MiB.
    env.stats("b", 30, 10, 1, 320 * MIB, 80 * MIB);
    // TrafficThreshold = m·ΣS/ΣK = 8 × (960 + 240) MiB / (10 + 30) = 8 × 30 MiB = 240 MiB.
    let first = env.offer(1, 1);
    let snapshot = env.nas_memory().threshold().expect("computed on the offer");
    assert_eq!(snapshot.output_per_map_bytes, (30 * MIB) as f64);
    let threshold = snapshot.threshold_bytes(
        &env.engine.state().nodes[&node(1, 1)],
        &Keys::of(env.engine.settings().keys_of("nas").unwrap()),
    );
    assert_eq!(threshold, (240 * MIB) as f64);
    // Both fit the empty node; A's 96 MiB is closer to the 240 MiB available than B's 8 MiB.
    assert_eq!(ranking(&first, "root.nas"), ["a:20:node", "b:20:node"]);

    // Two of A's maps running on the node leave 240 − 2 × 96 = 48 MiB: only B still fits.
    env.run("a", MAP, 1, 1, Locality::NodeLocal);
    env.run("a", MAP, 1, 1, Locality::NodeLocal);
    env.asks("a", &[(MAP, 6, &[(1, 1)])]);
    assert_eq!(ranking(&env.offer(1, 1), "root.nas"), ["b:20:node"]);

    // Recomputed at its period (5 s), not per offer: B's ratio doubling (S_B = 480 MiB)
    // shows once the period is over: (960 + 480) / 40 = 36 MiB per map.
    env.stats("b", 30, 10, 1, 320 * MIB, 160 * MIB);
    env.now_ms += 4_999;
    env.offer(1, 1);
    let per_map = |env: &TestEnv| env.nas_memory().threshold().unwrap().output_per_map_bytes;
    assert_eq!(per_map(&env), (30 * MIB) as f64);
    env.now_ms += 1;
    env.offer(1, 1);
    assert_eq!(per_map(&env), (36 * MIB) as f64);
}

#[test]
fn nas_an_operator_traffic_threshold_replaces_the_computed_one() {
    let mut env = TestEnv::nas(1, 1, &[(TRAFFIC_THRESHOLD_MB, "50")], &[]);
    env.submit("a", "root.nas", 1, &[]);
    env.submit("b", "root.nas", 2, &[]);
    env.asks("a", &[(MAP, 8, &[(1, 1)])]);
    env.asks("b", &[(MAP, 8, &[(1, 1)])]);
    predicted(&mut env, "a", 10, 64.0, 96.0);
    predicted(&mut env, "b", 10, 32.0, 8.0);
    assert_eq!(ranking(&env.offer(1, 1), "root.nas"), ["b:20:node"]);
}

#[test]
fn nas_mts_takes_local_qualified_maps_unpredicted_first_then_output_closest_to_the_space() {
    let mut env = TestEnv::nas(
        2,
        2,
        &[(TRAFFIC_THRESHOLD_MB, "100"), (DEFAULT_MAP_INPUT_MB, "50")],
        &[PAPER_ORDER],
    );
    for (i, app) in ["big", "far", "close", "fresh", "remote"]
        .iter()
        .enumerate()
    {
        env.submit(app, "root.nas", i as u64, &[]);
    }
    for app in ["big", "far", "close", "fresh"] {
        env.asks(app, &[(MAP, 4, &[(1, 1)])]);
    }
    env.asks("remote", &[(MAP, 4, &[(2, 1)])]);
    predicted(&mut env, "big", 4, 50.0, 150.0); // exceeds the 100 MiB available
    predicted(&mut env, "far", 4, 50.0, 10.0);
    predicted(&mut env, "close", 4, 50.0, 90.0);
    predicted(&mut env, "remote", 4, 50.0, 95.0); // fits, but its split is elsewhere
                                                  // `fresh` is unpredicted: prior ratio 1 × 50 MiB.
    let response = env.offer(1, 1);
    assert_eq!(
        ranking(&response, "root.nas"),
        ["fresh:20:node", "close:20:node", "far:20:node"]
    );
    assert!(reasons(&response, "root.nas")
        .iter()
        .all(|r| r == "nas:mts:local-qualified"));
}

#[test]
fn nas_mts_skips_a_user_until_the_wait_then_takes_qualified_maps_by_category_and_map_cost() {
    let mut env = TestEnv::nas(
        2,
        2,
        &[(TRAFFIC_THRESHOLD_MB, "100"), (DEFAULT_MAP_INPUT_MB, "50")],
        &[("smallInputMb", "200"), PAPER_ORDER],
    );
    for (i, app) in ["lp", "lu", "sp_far", "sp_near", "sp_close", "su"]
        .iter()
        .enumerate()
    {
        env.submit(app, "root.nas", i as u64, &[]);
    }
    // Offers go to r1n1: splits on r1n2 are rack-local, on r2n1 off-rack. All fit 100 MiB.
    env.asks("lp", &[(MAP, 10, &[(1, 2)])]);
    predicted(&mut env, "lp", 10, 40.0, 20.0); // large-input (400 MiB), predicted
    env.asks("lu", &[(MAP, 8, &[(2, 1)])]); // large-input (8 × 50 MiB), unpredicted
    env.asks("sp_far", &[(MAP, 2, &[(2, 1)])]);
    predicted(&mut env, "sp_far", 2, 40.0, 10.0); // small-input (80 MiB), predicted
    env.asks("sp_near", &[(MAP, 2, &[(1, 2)])]);
    predicted(&mut env, "sp_near", 2, 40.0, 10.0);
    env.asks("sp_close", &[(MAP, 2, &[(1, 2)])]);
    predicted(&mut env, "sp_close", 2, 40.0, 60.0);
    env.asks("su", &[(MAP, 2, &[(2, 1)])]); // small-input (2 × 50 MiB), unpredicted

    // No data-local map here: the user is skipped (all its apps vetoed) until 5 s have passed.
    let start = env.now_ms;
    for (offset, skips) in [(0, 1), (4_999, 2)] {
        env.now_ms = start + offset;
        let skipped = env.offer(1, 1);
        assert_eq!(ranking(&skipped, "root.nas"), Vec::<String>::new());
        assert_eq!(skipped.plan.queues[0].steered.len(), 6);
        assert_eq!(env.nas_memory().map_skips("root.nas"), skips);
    }
    env.now_ms = start + 5_000;
    let relaxed = env.offer(1, 1);
    assert_eq!(
        ranking(&relaxed, "root.nas"),
        [
            "su:20:any",        // (1) small-input unpredicted
            "sp_close:20:rack", // (2) small-input predicted, MapCost 1 × 40 MiB, closest
            "sp_near:20:rack",  //     same MapCost, output further from the space
            "sp_far:20:any",    //     MapCost 2 × 40 MiB
            "lu:20:any",        // (3) large-input unpredicted
            "lp:20:rack",       // (4) large-input predicted
        ]
    );
    assert_eq!(
        reasons(&relaxed, "root.nas")[..2],
        [
            "nas:mts:relaxed:small-unpredicted",
            "nas:mts:relaxed:small-predicted"
        ]
    );
}

/// A map of `app` that ran on its data for `local_ms`, then one that started as it finished
/// and ran off its data for `remote_ms`.
fn maps_that_took(env: &mut TestEnv, app: &str, local_ms: u64, remote_ms: u64) {
    let local = env.run(app, MAP, 1, 2, Locality::NodeLocal);
    env.now_ms += local_ms;
    env.finish(app, local);
    let remote = env.run(app, MAP, 2, 2, Locality::OffSwitch);
    env.now_ms += remote_ms;
    env.finish(app, remote);
}

#[test]
fn nas_mts_waits_as_long_as_maps_off_their_data_lately_took_longer_than_data_local_ones() {
    // A job's data-local map took 10 s and its map placed off its data 40 s: a user with no
    // data-local map on the offer is skipped for the 30 s that cost (read-cost, the default),
    // or for maxWaitMs (fixed, the paper).
    for (map_wait, relaxed_after_ms) in [(None, 30_000), (Some("fixed"), 5_000)] {
        let elements: Vec<(&str, &str)> = map_wait.map(|w| ("mapWait", w)).into_iter().collect();
        let mut env = TestEnv::nas(2, 2, &[(TRAFFIC_THRESHOLD_MB, "1000")], &elements);
        env.submit("earlier", "root.nas", 1, &[]);
        maps_that_took(&mut env, "earlier", 10_000, 40_000);
        // Its split is on the offered rack: the second wait (mapRackWait) does not apply.
        env.submit("waiting", "root.nas", 2, &[]);
        env.asks("waiting", &[(MAP, 1, &[(1, 2)])]);
        let start = env.now_ms;
        for offset in [0, relaxed_after_ms - 1] {
            env.now_ms = start + offset;
            let skipped = env.offer(1, 1);
            assert_eq!(
                ranking(&skipped, "root.nas"),
                Vec::<String>::new(),
                "{map_wait:?}"
            );
        }
        assert_eq!(env.nas_memory().read_penalty_ms(), Some(30_000.0));
        env.now_ms = start + relaxed_after_ms;
        assert_eq!(ranking(&env.offer(1, 1), "root.nas"), ["waiting:20:rack"]);
    }
}

#[test]
fn nas_read_cost_is_a_moving_mean_and_never_shortens_the_wait_below_max_wait() {
    let mut env = TestEnv::nas(2, 2, &[(TRAFFIC_THRESHOLD_MB, "1000")], &[]);
    env.submit("earlier", "root.nas", 1, &[]);
    maps_that_took(&mut env, "earlier", 10_000, 40_000);
    // The job's data-local map took 10 s; this one off its data took 130 s, 120 s more: the
    // mean moves a twentieth of the way, from 30 s to 34.5 s.
    let remote = env.run("earlier", MAP, 2, 1, Locality::RackLocal);
    env.now_ms += 130_000;
    env.finish("earlier", remote);
    env.offer(1, 1);
    let penalty = env.nas_memory().read_penalty_ms().expect("learned");
    assert!((penalty - 34_500.0).abs() < 1e-6, "{penalty}");

    // Maps off their data that were faster than the job's data-local ones (an idle remote
    // link, a busy local disk) drive the mean below maxWaitMs: the wait stays 5 s.
    let mut env = TestEnv::nas(2, 2, &[(TRAFFIC_THRESHOLD_MB, "1000")], &[]);
    env.submit("earlier", "root.nas", 1, &[]);
    maps_that_took(&mut env, "earlier", 10_000, 8_000);
    env.submit("waiting", "root.nas", 2, &[]);
    env.asks("waiting", &[(MAP, 1, &[(1, 2)])]);
    let start = env.now_ms;
    assert!(ranking(&env.offer(1, 1), "root.nas").is_empty());
    assert_eq!(env.nas_memory().read_penalty_ms(), Some(-2_000.0));
    env.now_ms = start + 5_000;
    assert_eq!(ranking(&env.offer(1, 1), "root.nas"), ["waiting:20:rack"]);
}

#[test]
fn nas_mts_with_nothing_qualified_takes_the_local_map_exceeding_least_then_the_smallest() {
    let mut env = TestEnv::nas(
        2,
        2,
        &[(TRAFFIC_THRESHOLD_MB, "100"), (DEFAULT_MAP_INPUT_MB, "50")],
        &[("maxWaitMs", "0"), PAPER_ORDER],
    );
    // A map of another queue runs on r1n1 and will write 90 MiB: 10 MiB are left.
    env.submit("x", "root.plain", 0, &[]);
    predicted(&mut env, "x", 4, 50.0, 90.0);
    env.run("x", MAP, 1, 1, Locality::NodeLocal);
    for (i, app) in ["l_big", "l_small", "r_mid", "r_small"].iter().enumerate() {
        env.submit(app, "root.nas", i as u64 + 1, &[]);
    }
    env.asks("l_big", &[(MAP, 4, &[(1, 1)])]);
    predicted(&mut env, "l_big", 4, 50.0, 80.0);
    env.asks("l_small", &[(MAP, 4, &[(1, 1)])]);
    predicted(&mut env, "l_small", 4, 50.0, 40.0);
    env.asks("r_mid", &[(MAP, 4, &[(1, 2)])]);
    predicted(&mut env, "r_mid", 4, 50.0, 30.0);
    env.asks("r_small", &[(MAP, 4, &[(2, 1)])]);
    predicted(&mut env, "r_small", 4, 50.0, 20.0);
    // maxWaitMs 0: no skipping, straight to lines 13–16.
    let response = env.offer(1, 1);
    assert_eq!(
        ranking(&response, "root.nas"),
        [
            "l_small:20:node",
            "l_big:20:node",
            "r_small:20:any",
            "r_mid:20:any"
        ]
    );
    assert_eq!(
        reasons(&response, "root.nas"),
        [
            "nas:mts:relaxed:local-smallest",
            "nas:mts:relaxed:local-smallest",
            "nas:mts:relaxed:smallest",
            "nas:mts:relaxed:smallest",
        ]
    );
}

#[test]
fn nas_mts_skip_count_variant_relaxes_after_max_skips_and_a_node_local_map_resets_it() {
    let mut env = TestEnv::nas(
        2,
        2,
        &[(TRAFFIC_THRESHOLD_MB, "1000")],
        &[("maxSkips", "3")],
    );
    env.submit("j", "root.nas", 1, &[]);
    env.asks("j", &[(MAP, 4, &[(1, 2)])]);
    let j = AppId("j".into());
    for skips in 1..=3 {
        assert!(ranking(&env.offer(1, 1), "root.nas").is_empty());
        assert_eq!(env.nas_memory().job_map_skips(&j), skips);
    }
    // D^m skips done: the user is served, and stays relaxed until it gets a node-local map.
    for _ in 0..2 {
        assert_eq!(ranking(&env.offer(1, 1), "root.nas"), ["j:20:rack"]);
    }
    env.run("j", MAP, 1, 2, Locality::NodeLocal);
    env.asks("j", &[(MAP, 3, &[(1, 2)])]);
    assert!(ranking(&env.offer(1, 1), "root.nas").is_empty());
    assert_eq!(env.nas_memory().job_map_skips(&j), 1);
}

#[test]
fn nas_mts_past_its_map_wait_takes_only_rack_local_maps_for_one_more_wait_then_any() {
    // A job whose splits are on rack 2. Offers on rack 1 skip it through the map wait (5 s)
    // and, by default, one more wait as long; past the first, an offer on rack 2 places its map
    // there. `mapRackWait=none` (the paper) takes it on any rack past the first wait.
    for (rack_wait, any_after_ms) in [(None, 10_000), (Some("none"), 5_000)] {
        let elements: Vec<(&str, &str)> =
            rack_wait.map(|w| ("mapRackWait", w)).into_iter().collect();
        let mut env = TestEnv::nas(2, 2, &[(TRAFFIC_THRESHOLD_MB, "1000")], &elements);
        env.submit("j", "root.nas", 1, &[]);
        env.asks("j", &[(MAP, 4, &[(2, 1)])]);
        let start = env.now_ms;
        for offset in [0, 4_999] {
            env.now_ms = start + offset;
            assert!(ranking(&env.offer(1, 1), "root.nas").is_empty());
        }
        env.now_ms = start + 5_000;
        assert_eq!(ranking(&env.offer(2, 2), "root.nas"), ["j:20:rack"]);
        for offset in [5_000, 9_999, 10_000] {
            env.now_ms = start + offset;
            let expected: &[&str] = if offset >= any_after_ms {
                &["j:20:any"]
            } else {
                &[]
            };
            assert_eq!(
                ranking(&env.offer(1, 1), "root.nas"),
                expected,
                "{rack_wait:?} at {offset} ms"
            );
        }
    }

    // With maxSkips the second wait is as many skips again.
    let mut env = TestEnv::nas(
        2,
        2,
        &[(TRAFFIC_THRESHOLD_MB, "1000")],
        &[("maxSkips", "2")],
    );
    env.submit("j", "root.nas", 1, &[]);
    env.asks("j", &[(MAP, 4, &[(2, 1)])]);
    let j = AppId("j".into());
    for skips in 1..=4 {
        assert!(ranking(&env.offer(1, 1), "root.nas").is_empty());
        assert_eq!(env.nas_memory().job_map_skips(&j), skips);
    }
    assert_eq!(ranking(&env.offer(1, 1), "root.nas"), ["j:20:any"]);
}

#[test]
fn nas_forgets_the_skips_of_a_queue_an_offer_does_not_plan_and_keeps_the_others() {
    // The paper's order: one wait per user.
    let mut env = TestEnv::nas(
        2,
        1,
        &[(TRAFFIC_THRESHOLD_MB, "1000")],
        &[("maxSkips", "10"), PAPER_ORDER],
    );
    let users = ["a", "b", "c"];
    for (i, user) in users.iter().enumerate() {
        env.submit(user, &format!("root.nas.{user}"), i as u64, &[]);
        env.asks(user, &[(MAP, 2, &[(2, 1)])]);
    }
    let skips =
        |env: &TestEnv| users.map(|user| env.nas_memory().map_skips(&format!("root.nas.{user}")));
    // No split on r1n1: every user is skipped on every offer there.
    for offer in 1..=2 {
        env.offer(1, 1);
        assert_eq!(skips(&env), [offer; 3]);
    }
    // With nothing pending `b` is not planned: its wait ends, the others' go on.
    env.asks("b", &[]);
    env.offer(1, 1);
    assert_eq!(skips(&env), [3, 0, 3]);
    env.asks("b", &[(MAP, 2, &[(2, 1)])]);
    env.offer(1, 1);
    assert_eq!(skips(&env), [4, 1, 4]);
    // A node-local map ends its own queue's wait only.
    env.run("c", MAP, 2, 1, Locality::NodeLocal);
    env.offer(1, 1);
    assert_eq!(skips(&env), [5, 2, 1]);
}

#[test]
fn nas_ca_rts_ranks_six_categories_then_delayed_maps_done_and_larger_shuffle_first() {
    // Without the hold on reached racks (the default), so every category shows in one ranking,
    // and with NAS's ranking across jobs (`kindOrder=priority`): by default FairScheduler's app
    // order would put `l_reached`, which runs a reduce, last.
    let mut env = TestEnv::nas(2, 2, &FEED, &[PAPER_ORDER]);
    // A heavy job whose reduces CR-RTS delayed while rack 2 was congested.
    env.submit("h_delayed", "root.nas", 1, &[]);
    finished_map(&mut env, "h_delayed", 1, 2);
    env.asks("h_delayed", &[(MAP, 9, &[(2, 2)]), (REDUCE, 2, &[])]);
    predicted(&mut env, "h_delayed", 10, 50.0, 12.0); // 120 MiB
    rack_load(&mut env, 2, 0.95);
    assert_eq!(
        reduces_of(ranking(&env.offer(2, 1), "root.nas")),
        Vec::<String>::new()
    );
    assert_eq!(
        env.nas_memory().delayed_reduces(&AppId("h_delayed".into())),
        2
    );

    // Jobs whose map output is all on rack 1 (ReduceNum on rack 1 = all their reduces) ...
    for (i, (app, maps, output, maps_pending)) in [
        ("h_small", 10, 20.0, true), // 200 MiB
        ("h_big", 10, 50.0, true),   // 500 MiB
        ("h_done", 1, 150.0, false), // 150 MiB, every map done
        ("m_under", 2, 10.0, true),  // 20 MiB
        ("l_under", 1, 0.25, false), // 0.25 MiB
    ]
    .into_iter()
    .enumerate()
    {
        env.submit(app, "root.nas", 10 + i as u64, &[]);
        finished_map(&mut env, app, 1, 2);
        let map_asks = if maps_pending { maps - 1 } else { 0 };
        env.asks(app, &[(MAP, map_asks, &[(2, 2)]), (REDUCE, 1, &[])]);
        predicted(&mut env, app, maps, 50.0, output);
    }
    // ... and jobs whose rack-1 quota is met: output only on rack 2 (ReduceNum 0), or half
    // on each rack with 1 of 2 reduces already on rack 1.
    for (i, (app, output)) in [("h_reached", 20.0), ("m_reached", 10.0)]
        .into_iter()
        .enumerate()
    {
        env.submit(app, "root.nas", 20 + i as u64, &[]);
        finished_map(&mut env, app, 2, 2);
        env.asks(app, &[(REDUCE, 1, &[])]);
        predicted(&mut env, app, 10, 1.0, output);
    }
    env.submit("l_reached", "root.nas", 30, &[]);
    finished_map(&mut env, "l_reached", 1, 2);
    finished_map(&mut env, "l_reached", 2, 2);
    env.run("l_reached", REDUCE, 1, 2, Locality::OffSwitch);
    env.asks("l_reached", &[(REDUCE, 1, &[])]);
    env.stats("l_reached", 2, 2, 2, 2 * MIB, MIB / 4);

    let response = env.offer(1, 1);
    assert!(!response.diagnostics.rack_saturated);
    assert_eq!(
        reduces_of(ranking(&response, "root.nas")),
        [
            "h_delayed:10:any", // (1) heavy under ReduceNum: delayed first,
            "h_done:10:any",    //     then all maps done,
            "h_big:10:any",     //     then the larger shuffle
            "h_small:10:any",
            "m_under:10:any",   // (2) medium under ReduceNum
            "l_under:10:any",   // (3) light under ReduceNum
            "l_reached:10:any", // (4) light, ReduceNum reached
            "m_reached:10:any", // (5) medium, reached
            "h_reached:10:any", // (6) heavy, reached
        ]
    );
    assert_eq!(
        reasons(&response, "root.nas")[0],
        "nas:ca-rts:heavy-under-reduce-num"
    );
}

#[test]
fn nas_keeps_a_reduce_off_racks_past_its_whole_reduce_num_until_the_wait_then_anywhere() {
    let mut env = TestEnv::nas(3, 2, &FEED, &[("reduceRackWaitMs", "5000")]);
    // One reduce, finished maps 3 on rack 2 and 1 on rack 1: ReduceNum in whole reduces is 1
    // on rack 2 and 0 elsewhere (the unrounded product, 1/4, would count rack 1 as under).
    env.submit("one", "root.nas", 1, &[]);
    for (r, n) in [(2, 1), (2, 2), (2, 1), (1, 1)] {
        finished_map(&mut env, "one", r, n);
    }
    env.asks("one", &[(REDUCE, 1, &[])]);
    predicted(&mut env, "one", 4, 50.0, 50.0); // heavy: 200 MiB
    let start = env.now_ms;
    for (offset, r) in [(0, 1), (2_000, 3), (4_999, 1)] {
        env.now_ms = start + offset;
        assert!(
            reduces_of(ranking(&env.offer(r, 1), "root.nas")).is_empty(),
            "held off rack {r} at +{offset} ms"
        );
    }
    // The rack holding most of its output takes it at once, under its ReduceNum.
    let home = env.offer(2, 1);
    assert_eq!(reduces_of(ranking(&home, "root.nas")), ["one:10:any"]);
    assert_eq!(
        reasons(&home, "root.nas"),
        ["nas:ca-rts:heavy-under-reduce-num"]
    );
    // Past the wait (counted from the first hold), any rack: rack 3, without output, as a
    // reached ReduceNum in CA-RTS's ranking.
    env.now_ms = start + 5_000;
    let relaxed = env.offer(3, 1);
    assert_eq!(reduces_of(ranking(&relaxed, "root.nas")), ["one:10:any"]);
    assert_eq!(
        reasons(&relaxed, "root.nas"),
        ["nas:ca-rts:heavy-reached-reduce-num"]
    );

    // A reduce start restarts the wait: two reduces, output 4 : 1 on racks 2 and 1, so
    // ReduceNum is 2 on rack 2 (1.6 and its larger remainder) and 0 on rack 1.
    env.submit("two", "root.nas", 2, &[]);
    for (r, n) in [(2, 1), (2, 1), (2, 2), (2, 2), (1, 2)] {
        finished_map(&mut env, "two", r, n);
    }
    env.asks("two", &[(REDUCE, 2, &[])]);
    predicted(&mut env, "two", 5, 50.0, 50.0);
    let held_at = env.now_ms;
    assert!(!ranking(&env.offer(1, 2), "root.nas").contains(&"two:10:any".to_string()));
    env.now_ms = held_at + 5_000;
    assert!(ranking(&env.offer(1, 2), "root.nas").contains(&"two:10:any".to_string()));
    env.run("two", REDUCE, 1, 2, Locality::OffSwitch);
    env.asks("two", &[(REDUCE, 1, &[])]);
    assert!(!ranking(&env.offer(1, 2), "root.nas").contains(&"two:10:any".to_string()));
    assert!(ranking(&env.offer(2, 2), "root.nas").contains(&"two:10:any".to_string()));
}

#[test]
fn nas_does_not_hold_a_reduce_off_a_rack_with_half_the_output_of_the_busiest() {
    let mut env = TestEnv::nas(3, 2, &FEED, &[("reduceRackWaitMs", "5000")]);
    // One reduce, output 2 : 1 on racks 2 and 1: ReduceNum in whole reduces is 0 on rack 1,
    // but a reduce there fetches little more across racks than one on rack 2, so it is
    // placed; rack 3, with none of the output, is held.
    env.submit("job", "root.nas", 1, &[]);
    for (r, n) in [(2, 1), (2, 2), (1, 1)] {
        finished_map(&mut env, "job", r, n);
    }
    env.asks("job", &[(REDUCE, 1, &[])]);
    predicted(&mut env, "job", 3, 50.0, 50.0);
    let half = env.offer(1, 1);
    assert_eq!(reduces_of(ranking(&half, "root.nas")), ["job:10:any"]);
    assert!(reduces_of(ranking(&env.offer(3, 1), "root.nas")).is_empty());
}

#[test]
fn nas_reduce_rack_wait_zero_only_ranks_as_the_paper_does() {
    // The default, reduceRackWaitMs 0: the reduce is ranked on a rack without its output.
    let mut env = TestEnv::nas(2, 2, &FEED, &[]);
    env.submit("job", "root.nas", 1, &[]);
    finished_map(&mut env, "job", 2, 1);
    env.asks("job", &[(REDUCE, 1, &[])]);
    predicted(&mut env, "job", 1, 50.0, 150.0);
    let response = env.offer(1, 1);
    assert_eq!(reduces_of(ranking(&response, "root.nas")), ["job:10:any"]);
    assert_eq!(
        reasons(&response, "root.nas"),
        ["nas:ca-rts:heavy-reached-reduce-num"]
    );
}

#[test]
fn nas_cr_rts_lets_only_light_reduces_onto_a_congested_rack_until_the_wait_then_any() {
    // CR-RTS alone: without the hold on racks where a job reached its ReduceNum (the default).
    let mut env = TestEnv::nas(2, 2, &FEED, &[PAPER_ORDER]);
    for (i, (app, maps, output)) in [
        ("heavy", 4, 50.0),  // 200 MiB
        ("medium", 2, 10.0), // 20 MiB
        ("light1", 1, 0.8),
        ("light2", 1, 0.2),
    ]
    .into_iter()
    .enumerate()
    {
        env.submit(app, "root.nas", i as u64, &[]);
        env.asks(app, &[(REDUCE, if app == "heavy" { 2 } else { 1 }, &[])]);
        predicted(&mut env, app, maps, 50.0, output);
    }
    rack_load(&mut env, 1, 0.95);
    let congested = env.offer(1, 1);
    assert!(congested.diagnostics.rack_saturated);
    // Shuffle-light reduces only, the least shuffle first; heavy and medium ones are delayed.
    assert_eq!(
        ranking(&congested, "root.nas"),
        ["light2:10:any", "light1:10:any"]
    );
    assert_eq!(
        reasons(&congested, "root.nas"),
        ["nas:cr-rts:light-reduce", "nas:cr-rts:light-reduce"]
    );
    let delayed = |env: &TestEnv, app: &str| env.nas_memory().delayed_reduces(&AppId(app.into()));
    assert_eq!((delayed(&env, "heavy"), delayed(&env, "medium")), (2, 1));

    // The light reduces are placed; without one the user is skipped for up to 5 s.
    env.asks("light1", &[]);
    env.asks("light2", &[]);
    let start = env.now_ms;
    for offset in [0, 4_999] {
        env.now_ms = start + offset;
        assert!(ranking(&env.offer(1, 1), "root.nas").is_empty());
    }
    env.now_ms = start + 5_000;
    let relaxed = env.offer(1, 1);
    assert_eq!(
        ranking(&relaxed, "root.nas"),
        ["medium:10:any", "heavy:10:any"]
    );
    assert_eq!(
        reasons(&relaxed, "root.nas"),
        [
            "nas:cr-rts:relaxed:medium-reduce",
            "nas:cr-rts:relaxed:heavy-reduce"
        ]
    );

    // One heavy reduce placed: its tag shrinks, and while rack 1 stays congested the user
    // stays relaxed: one congestion episode costs one wait, not one per heavy reduce.
    env.run("heavy", REDUCE, 1, 1, Locality::OffSwitch);
    env.asks("heavy", &[(REDUCE, 1, &[])]);
    assert_eq!(
        ranking(&env.offer(1, 1), "root.nas"),
        ["medium:10:any", "heavy:10:any"]
    );
    assert_eq!(delayed(&env, "heavy"), 1);

    // Rack 2 is not congested: CA-RTS ranks every reduce there, and the wait ends.
    let elsewhere = env.offer(2, 1);
    assert!(reasons(&elsewhere, "root.nas")
        .iter()
        .all(|r| r.starts_with("nas:ca-rts:")));
    assert_eq!(reasons(&elsewhere, "root.nas").len(), 2);

    // Back on congested rack 1, a fresh wait starts.
    assert!(ranking(&env.offer(1, 1), "root.nas").is_empty());
    env.now_ms += 5_000;
    assert_eq!(ranking(&env.offer(1, 1), "root.nas").len(), 2);
}

/// With every rack congested there is no rack to send a heavy reduce to: by default
/// (`congestionResponse=while-a-rack-is-free`) CA-RTS ranks it at once; `always` (the paper
/// as written) keeps CR-RTS's hold. Once a rack clears, the hold is back on the congested one.
#[test]
fn nas_congestion_response_holds_only_while_some_rack_is_below_the_threshold() {
    let heavy_reduce_ranked =
        |env: &mut TestEnv| ranking(&env.offer(1, 1), "root.nas") == ["heavy:10:any"];
    for (setting, holds_when_all_congested) in [(None, false), (Some("always"), true)] {
        let params: Vec<(&str, &str)> = setting
            .map(|value| ("congestionResponse", value))
            .into_iter()
            .collect();
        let mut env = TestEnv::nas(2, 2, &FEED, &params);
        env.submit("heavy", "root.nas", 1, &[]);
        env.asks("heavy", &[(REDUCE, 1, &[])]);
        predicted(&mut env, "heavy", 4, 50.0, 50.0); // 200 MiB: shuffle-heavy
        rack_load(&mut env, 1, 0.95);
        rack_load(&mut env, 2, 0.95);
        let all_congested = env.offer(1, 1);
        assert!(all_congested.diagnostics.rack_saturated);
        assert_eq!(
            ranking(&all_congested, "root.nas").is_empty(),
            holds_when_all_congested,
            "{setting:?}: every rack congested"
        );

        // Rack 2 clears (a new NetSat sample, one period later): rack 1's hold applies under
        // both settings.
        rack_load(&mut env, 2, 0.1);
        env.now_ms += 2_000;
        assert!(
            !heavy_reduce_ranked(&mut env),
            "{setting:?}: rack 2 is free"
        );
    }
}

#[test]
fn nas_congested_rack_holds_heavy_and_medium_maps_until_it_clears() {
    let mut settings = FEED.to_vec();
    settings.push((TRAFFIC_THRESHOLD_MB, "1000"));
    let mut env = TestEnv::nas(2, 2, &settings, &[]);
    env.submit("heavy", "root.nas", 1, &[]);
    env.submit("medium", "root.nas", 2, &[]);
    env.submit("light", "root.nas", 3, &[]);
    for app in ["heavy", "medium", "light"] {
        env.asks(app, &[(MAP, 4, &[(1, 1)])]);
    }
    predicted(&mut env, "heavy", 4, 50.0, 50.0); // 200 MiB
    predicted(&mut env, "medium", 4, 5.0, 5.0); // 20 MiB
    predicted(&mut env, "light", 4, 0.1, 0.1); // 0.4 MiB
    rack_load(&mut env, 1, 0.95);
    assert_eq!(ranking(&env.offer(1, 1), "root.nas"), ["light:20:node"]);

    rack_load(&mut env, 1, 0.2);
    assert_eq!(
        ranking(&env.offer(1, 1), "root.nas"),
        ["heavy:20:node", "medium:20:node", "light:20:node"]
    );
}

#[test]
fn nas_congested_rack_does_not_hold_heavy_maps_when_the_user_has_nothing_else_to_run() {
    // An idle container moves no shuffle: with only heavy maps to run, the hold would cost the
    // container and save nothing.
    let mut settings = FEED.to_vec();
    settings.push((TRAFFIC_THRESHOLD_MB, "1000"));
    let mut env = TestEnv::nas(2, 2, &settings, &[]);
    env.submit("heavy", "root.nas", 1, &[]);
    env.asks("heavy", &[(MAP, 4, &[(1, 1)])]);
    predicted(&mut env, "heavy", 4, 50.0, 50.0); // 200 MiB
    rack_load(&mut env, 1, 0.95);
    let congested = env.offer(1, 1);
    assert!(congested.diagnostics.rack_saturated);
    assert_eq!(ranking(&congested, "root.nas"), ["heavy:20:node"]);
}

#[test]
fn nas_congested_rack_hold_on_heavy_maps_ends_with_the_users_map_wait() {
    // The light job's only map is not local to the offered node: it waits for its own data,
    // and the heavy job's local map is held, until the map wait (5 s) ends; then the hold ends
    // too and the heavy job's data-local map is ranked, as on an uncongested rack, beside the
    // light job's map, whose wait has ended (FairScheduler picks between the jobs).
    let mut settings = FEED.to_vec();
    settings.push((TRAFFIC_THRESHOLD_MB, "1000"));
    let mut env = TestEnv::nas(2, 2, &settings, &[]);
    env.submit("heavy", "root.nas", 1, &[]);
    env.submit("light", "root.nas", 2, &[]);
    env.asks("heavy", &[(MAP, 4, &[(1, 1)])]);
    env.asks("light", &[(MAP, 1, &[(1, 2)])]);
    predicted(&mut env, "heavy", 4, 50.0, 50.0); // 200 MiB
    predicted(&mut env, "light", 4, 0.1, 0.1); // 0.4 MiB
    rack_load(&mut env, 1, 0.95);
    let start = env.now_ms;
    for offset in [0, 4_999] {
        env.now_ms = start + offset;
        rack_load(&mut env, 1, 0.95);
        assert!(ranking(&env.offer(1, 1), "root.nas").is_empty());
    }
    env.now_ms = start + 5_000;
    rack_load(&mut env, 1, 0.95);
    let relaxed = env.offer(1, 1);
    assert!(relaxed.diagnostics.rack_saturated);
    assert_eq!(
        ranking(&relaxed, "root.nas"),
        ["heavy:20:node", "light:20:rack"]
    );
    assert_eq!(
        reasons(&relaxed, "root.nas"),
        ["nas:mts:local-qualified", "nas:mts:relaxed:small-predicted"]
    );
}

#[test]
fn nas_storage_without_locality_maps_are_placed_at_once_not_after_max_wait() {
    // `file:///` input: the splits name `localhost` on `/default-rack`, neither of which is a
    // cluster node or a rack with nodes. No offer could ever be data-local, so MTS places the
    // job's maps on the first offer instead of skipping the user for 5 s.
    let mut env = TestEnv::nas(2, 2, &[(TRAFFIC_THRESHOLD_MB, "1000")], &[]);
    env.submit("nolocal", "root.nas", 1, &[]);
    env.map_asks_naming("nolocal", 3, &["localhost"], &["/default-rack"]);
    let first = env.offer(1, 1);
    assert_eq!(ranking(&first, "root.nas"), ["nolocal:20:any"]);
    assert_eq!(
        reasons(&first, "root.nas"),
        ["nas:mts:no-locality-qualified"]
    );
    assert_eq!(env.nas_memory().job_map_skips(&AppId("nolocal".into())), 0);

    // A job on HDFS whose split is on another node is still waited for, as the paper says.
    env.submit("hdfs", "root.nas", 2, &[]);
    env.asks("hdfs", &[(MAP, 1, &[(2, 1)])]);
    env.asks("nolocal", &[]);
    assert!(ranking(&env.offer(1, 1), "root.nas").is_empty());
    assert_eq!(env.nas_memory().job_map_skips(&AppId("hdfs".into())), 1);
}

#[test]
fn nas_keeps_mapreduce_order_between_kinds_rerun_maps_then_reduces_then_maps() {
    let mut env = TestEnv::nas(
        2,
        1,
        &[(TRAFFIC_THRESHOLD_MB, "1000")],
        &[("maxWaitMs", "0")],
    );
    env.submit("j", "root.nas", 1, &[]);
    env.asks(
        "j",
        &[(MAP, 2, &[(2, 1)]), (REDUCE, 1, &[]), (RERUN_MAP, 1, &[])],
    );
    assert_eq!(
        ranking(&env.offer(1, 1), "root.nas"),
        ["j:5:any", "j:10:any", "j:20:any"]
    );
}

/// The queue settings that give NAS's queue `kind_order` (`None`: the default), after `base`.
fn with_kind_order<'a>(
    base: &[(&'a str, &'a str)],
    kind_order: Option<&'a str>,
) -> Vec<(&'a str, &'a str)> {
    base.iter()
        .copied()
        .chain(kind_order.map(|order| (PAPER_ORDER.0, order)))
        .collect()
}

/// A user with a job running three reduces and asking for one more, and a second job running
/// nothing that asks for a map local to node 1; the queue's `kindOrder` as given (`None`: the
/// default).
fn busy_reducer_beside_a_fresh_mapper(kind_order: Option<&str>) -> TestEnv {
    let queue_settings = with_kind_order(&[("maxWaitMs", "0")], kind_order);
    let mut env = TestEnv::nas(2, 1, &[(TRAFFIC_THRESHOLD_MB, "1000")], &queue_settings);
    env.submit("busy", "root.nas", 1, &[]);
    for _ in 0..3 {
        env.run("busy", REDUCE, 2, 1, Locality::OffSwitch);
    }
    env.asks("busy", &[(REDUCE, 2, &[])]);
    env.submit("fresh", "root.nas", 2, &[]);
    env.asks("fresh", &[(MAP, 5, &[(1, 1)])]);
    env
}

/// Under the default `kindOrder` (`apps`) and under `priority`, the first offer of `make`'s
/// environment ranks `ranked`; the first-ranked job places as `first_places`, and the other
/// job places as `second_places` where FairScheduler orders the jobs and is vetoed where NAS
/// does.
fn assert_second_job_places_only_under_apps(
    make: impl Fn(Option<&str>) -> TestEnv,
    ranked: [&str; 2],
    first_places: Placement,
    second_places: Placement,
) {
    let app = |entry: &str| entry.split(':').next().unwrap_or_default().to_string();
    for (kind_order, second) in [
        (None, second_places),
        (Some(PAPER_ORDER.1), Placement::Vetoed),
    ] {
        let response = make(kind_order).offer(1, 1);
        assert_eq!(ranking(&response, "root.nas"), ranked, "{kind_order:?}");
        let placed = |entry| placement_of(&response, "root.nas", &app(entry));
        assert_eq!(placed(ranked[0]), first_places, "{kind_order:?}");
        assert_eq!(placed(ranked[1]), second, "{kind_order:?}");
    }
}

/// By default (`kindOrder=apps`) FairScheduler's order between a user's jobs decides which job
/// places, as stock FairScheduler chooses the app (under fair share the job running fewer
/// containers): NAS's ranking puts the busy job's reduce first, yet the fresh job, offered the
/// node, places its map. With `kindOrder=priority` the reduce's job alone may place.
#[test]
fn nas_kind_order_apps_lets_fairscheduler_choose_between_a_users_reduces_and_maps() {
    assert_second_job_places_only_under_apps(
        busy_reducer_beside_a_fresh_mapper,
        ["busy:10:any", "fresh:20:node"],
        Placement::Place {
            priority: Priority(REDUCE),
            cap: Locality::OffSwitch,
        },
        Placement::Place {
            priority: Priority(MAP),
            cap: Locality::NodeLocal,
        },
    );
}

/// Two jobs of a user, in arrival order, each asking for four maps local to node 1 whose
/// predicted output fits the node's 100 MiB shuffle space: (name, maps running elsewhere,
/// predicted MiB per map). The queue's `kindOrder` as given (`None`: the default).
fn two_mappers(kind_order: Option<&str>, jobs: [(&str, u32, f64); 2]) -> TestEnv {
    let queue_settings = with_kind_order(&[], kind_order);
    let mut env = TestEnv::nas(
        2,
        2,
        &[(TRAFFIC_THRESHOLD_MB, "100"), (DEFAULT_MAP_INPUT_MB, "50")],
        &queue_settings,
    );
    for (arrival, (app, running, output_mib)) in jobs.into_iter().enumerate() {
        env.submit(app, "root.nas", arrival as u64 + 1, &[]);
        for _ in 0..running {
            env.run(app, MAP, 2, 2, Locality::NodeLocal);
        }
        env.asks(app, &[(MAP, 4, &[(1, 1)])]);
        predicted(&mut env, app, running + 4, 50.0, output_mib);
    }
    env
}

/// By default FairScheduler's order decides between a user's maps of different jobs too: MTS's
/// closest fit (output nearest the space) ranks the busier job's map first, and either job
/// offered the node places its own; with `kindOrder=priority` only the closest fit may place.
#[test]
fn nas_kind_order_apps_lets_fairscheduler_choose_past_mts_closest_fit() {
    let map_here = Placement::Place {
        priority: Priority(MAP),
        cap: Locality::NodeLocal,
    };
    assert_second_job_places_only_under_apps(
        |kind_order| two_mappers(kind_order, [("close", 2, 10.0), ("far", 0, 1.0)]),
        ["close:20:node", "far:20:node"],
        map_here,
        map_here,
    );
}

/// On an offer where the starvation guard lifts an app, FairScheduler's order still decides
/// between the user's jobs (`kindOrder=apps`): the guard loosens the lifted job's locality, and
/// the job that got a container lately still places its data-local map if it is offered the
/// node first. With `kindOrder=priority` the lifted job goes first and the other is vetoed.
#[test]
fn nas_keeps_fairschedulers_order_between_a_users_jobs_on_the_guards_offers() {
    for (kind_order, fresh_placed) in [
        (
            None,
            Placement::Place {
                priority: Priority(MAP),
                cap: Locality::NodeLocal,
            },
        ),
        (Some(PAPER_ORDER.1), Placement::Vetoed),
    ] {
        let queue_settings = with_kind_order(&[], kind_order);
        let mut env = TestEnv::nas(2, 2, &[(TRAFFIC_THRESHOLD_MB, "1000")], &queue_settings);
        env.submit("lifted", "root.nas", 1, &[]);
        env.asks("lifted", &[(MAP, 1, &[(2, 1)])]);
        env.submit("fresh", "root.nas", 2, &[]);
        env.asks("fresh", &[(MAP, 2, &[(1, 1)])]);
        assert!(env.offer(1, 1).diagnostics.starved.is_empty());
        // Past the 30 s guard the lifted job has had no container; the fresh one just got one.
        env.now_ms += 30_001;
        env.run("fresh", MAP, 1, 1, Locality::NodeLocal);
        let response = env.offer(1, 1);
        assert_eq!(response.diagnostics.starved, [AppId("lifted".into())]);
        let plan = queue_plan(&response, "root.nas").expect("planned");
        assert_eq!(
            plan.scheduler_orders_apps,
            kind_order.is_none(),
            "{kind_order:?}"
        );
        assert_eq!(ranking(&response, "root.nas")[0], "lifted:20:any");
        assert_eq!(
            placement_of(&response, "root.nas", "lifted"),
            Placement::Place {
                priority: Priority(MAP),
                cap: Locality::OffSwitch,
            },
            "{kind_order:?}"
        );
        assert_eq!(
            placement_of(&response, "root.nas", "fresh"),
            fresh_placed,
            "{kind_order:?}"
        );
    }
}

/// Where FairScheduler orders a user's jobs (the default), each job waits for its own data: a
/// job whose split is elsewhere starts its wait on the first offer that skips it, though
/// another job of the user has a data-local map there, and is ranked once the wait (5 s) is
/// over; a node-local map of the other job does not restart it, and nothing pending ends it.
/// In the paper's order the user's data-local map is all MTS ranks on the node.
#[test]
fn nas_waits_for_each_jobs_own_data_where_fairscheduler_orders_a_users_jobs() {
    for kind_order in [None, Some(PAPER_ORDER.1)] {
        let queue_settings = with_kind_order(&[], kind_order);
        let mut env = TestEnv::nas(2, 2, &[(TRAFFIC_THRESHOLD_MB, "1000")], &queue_settings);
        env.submit("local", "root.nas", 1, &[]);
        env.asks("local", &[(MAP, 4, &[(1, 1)])]);
        env.submit("elsewhere", "root.nas", 2, &[]);
        env.asks("elsewhere", &[(MAP, 1, &[(1, 2)])]);
        let elsewhere = AppId("elsewhere".into());
        let per_job = kind_order.is_none();
        let start = env.now_ms;
        for (offset, skips) in [(0, 1), (4_999, 2)] {
            env.now_ms = start + offset;
            assert_eq!(ranking(&env.offer(1, 1), "root.nas"), ["local:20:node"]);
            let counted = env.nas_memory().job_map_skips(&elsewhere);
            assert_eq!(counted, if per_job { skips } else { 0 }, "{kind_order:?}");
        }
        env.now_ms = start + 5_000;
        let past_wait: &[&str] = if per_job {
            &["local:20:node", "elsewhere:20:rack"]
        } else {
            &["local:20:node"]
        };
        assert_eq!(ranking(&env.offer(1, 1), "root.nas"), past_wait);
        if !per_job {
            continue;
        }
        env.run("local", MAP, 1, 1, Locality::NodeLocal);
        assert_eq!(ranking(&env.offer(1, 1), "root.nas"), past_wait);
        assert_eq!(env.nas_memory().job_map_skips(&elsewhere), 2);
        env.asks("elsewhere", &[]);
        env.offer(1, 1);
        assert_eq!(env.nas_memory().job_map_skips(&elsewhere), 0);
    }
}

/// With `kindOrder=priority` every reduce of the user goes before its maps, whichever job runs
/// more.
#[test]
fn nas_kind_order_priority_puts_every_reduce_of_a_user_before_its_maps() {
    let mut env = busy_reducer_beside_a_fresh_mapper(Some(PAPER_ORDER.1));
    assert_eq!(
        ranking(&env.offer(1, 1), "root.nas"),
        ["busy:10:any", "fresh:20:node"]
    );
}

#[test]
fn reconfigure_switches_a_queue_between_nas_and_shufflewatcher() {
    let mut env = TestEnv::nas(1, 1, &[], &[]);
    env.submit("j", "root.nas", 1, &[]);
    env.asks("j", &[(MAP, 2, &[(1, 1)]), (REDUCE, 1, &[])]);
    let policy_of = |env: &mut TestEnv| {
        let response = env.offer(1, 1);
        let reasons = reasons(&response, "root.nas");
        assert!(!reasons.is_empty());
        reasons[0].split(':').next().unwrap().to_string()
    };
    assert_eq!(policy_of(&mut env), "nas");
    let switch = |policy: &str| EngineConfig {
        queues: vec![queue("root.nas", &[("policy", policy)])],
        source: "test".into(),
        ..EngineConfig::default()
    };
    env.engine.reconfigure(&switch("shufflewatcher")).unwrap();
    assert_eq!(policy_of(&mut env), "nass");
    env.engine.reconfigure(&switch("nas")).unwrap();
    assert_eq!(policy_of(&mut env), "nas");
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator for the Monte-Carlo test.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

#[test]
fn nas_mts_skip_logic_gives_the_papers_launch_probability_monte_carlo() {
    // Paper §III-C: a user with 3 jobs, each with its input on a fraction p = 0.1 of the nodes
    // and its maps shuffle-qualified with probability q = 0.5, launches a data-local,
    // shuffle-qualified map within D skips with probability 1 − (1 − pq)^(3D): 78.5 % for
    // D = 10, 99.8 % for D = 40. Each offer draws locality and qualification afresh; MTS
    // decides, with D^m = 40.
    const TRIALS: u32 = 5_000;
    const JOBS: [&str; 3] = ["j1", "j2", "j3"];
    let mut rng = SplitMix64(0x4e41_5321);
    let (mut within_10, mut within_40) = (0u32, 0u32);
    for _ in 0..TRIALS {
        // The offered node is (1, 1); a split that is not local to it is on (1, 2).
        let mut env = TestEnv::nas(
            1,
            2,
            &[(TRAFFIC_THRESHOLD_MB, "100")],
            &[("maxSkips", "40"), PAPER_ORDER],
        );
        for (i, job) in JOBS.iter().enumerate() {
            env.submit(job, "root.nas", i as u64, &[]);
        }
        for offer in 1..=41 {
            for job in JOBS {
                let local: &[(u32, u32)] = if rng.chance(0.1) {
                    &[(1, 1)]
                } else {
                    &[(1, 2)]
                };
                env.asks(job, &[(MAP, 1, local)]);
                // 64 MiB maps writing 32 MiB fit the 100 MiB threshold; 256 MiB do not.
                let output = if rng.chance(0.5) { 32 * MIB } else { 256 * MIB };
                env.stats(job, 10, 1, 1, 64 * MIB, output);
            }
            let response = env.offer(1, 1);
            let reasons = reasons(&response, "root.nas");
            if reasons.first().map(String::as_str) == Some("nas:mts:local-qualified") {
                within_10 += u32::from(offer <= 10);
                within_40 += 1;
                break;
            }
            if offer <= 40 {
                assert!(reasons.is_empty(), "skipped: {reasons:?}");
                assert_eq!(env.nas_memory().map_skips("root.nas"), offer);
            } else {
                assert!(reasons[0].starts_with("nas:mts:relaxed:"), "{reasons:?}");
            }
        }
    }
    let expected = |d: i32| 1.0 - (1.0f64 - 0.1 * 0.5).powi(3 * d);
    let rate = |n: u32| f64::from(n) / f64::from(TRIALS);
    assert!((expected(10) - 0.785).abs() < 0.001);
    assert!((expected(40) - 0.998).abs() < 0.001);
    assert!(
        (rate(within_10) - expected(10)).abs() < 0.02,
        "within 10 skips: {} vs {}",
        rate(within_10),
        expected(10)
    );
    assert!(
        (rate(within_40) - expected(40)).abs() < 0.005,
        "within 40 skips: {} vs {}",
        rate(within_40),
        expected(40)
    );
}
