//! FRESH as named scenarios through the engine: admission with `k` (a second job waits for the
//! first to leave its map phase; jobs enter in Johnson's order; R' is first come first served),
//! the map-or-reduce choice of Algorithms 2–3 over the queue's containers (with Theorem 1's
//! lookahead from observed reduce completions), Algorithm 4's least overall use first (read at
//! every offer), a turn kept between offers that follows a container stopped without an
//! observation, profiles from observed tasks before history before defaults, and the
//! `jobsPerPhase` element's errors.

mod common;

use common::*;
use rackwise_core::mapreduce::Placement;
use rackwise_core::protocol::*;
use rackwise_core::CoreError;

const Q: &str = "root.fresh";

fn id(app: &str) -> AppId {
    AppId(app.into())
}

/// The jobs of each admission set of the queue: (M, R, R').
fn phases(env: &TestEnv) -> (Vec<String>, Vec<String>, Vec<String>) {
    let phases = env.fresh_memory().phases(Q).expect("the queue was planned");
    let names = |ids: &mut dyn Iterator<Item = &AppId>| ids.map(|a| a.0.to_string()).collect();
    (
        names(&mut phases.mapping.iter()),
        names(&mut phases.reducing.iter()),
        names(&mut phases.waiting.iter()),
    )
}

/// A job past its ApplicationMaster with `maps` maps and `reduces` reduces, all pending.
fn job(env: &mut TestEnv, app: &str, submit_ms: u64, maps: u32, reduces: u32) {
    env.submit(app, Q, submit_ms, &[]);
    let mut asks: Vec<TestAsk> = vec![(MAP, maps, &[(1, 1)])];
    if reduces > 0 {
        asks.push((REDUCE, reduces, &[]));
    }
    env.asks(app, &asks);
    env.stats(app, maps, 0, reduces, 0, 0);
}

/// Runs `count` tasks of `app` at `priority` for `took_ms` each, ending now; the shim's asks
/// then hold `maps_left` maps and `reduces_left` reduces.
fn ran(env: &mut TestEnv, app: &str, priority: i32, count: u32, took_ms: u64, left: (u32, u32)) {
    let end = env.now_ms;
    env.now_ms = end - took_ms;
    let containers: Vec<ContainerId> = (0..count)
        .map(|_| env.run(app, priority, 1, 1, Locality::OffSwitch))
        .collect();
    env.now_ms = end;
    for container in containers {
        env.finish(app, container);
    }
    let mut asks: Vec<TestAsk> = Vec::new();
    if left.0 > 0 {
        asks.push((MAP, left.0, &[(1, 1)]));
    }
    if left.1 > 0 {
        asks.push((REDUCE, left.1, &[]));
    }
    env.asks(app, &asks);
}

#[test]
fn with_k_1_the_second_job_places_nothing_until_the_first_leaves_its_map_phase() {
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "1")]);
    job(&mut env, "a", 1, 2, 1);
    job(&mut env, "b", 2, 2, 1);
    let first = env.offer(1, 1);
    assert_eq!(ranking(&first, Q), [format!("a:{MAP}:any")]);
    assert_eq!(phases(&env), (vec!["a".into()], vec![], vec![]));
    // a's maps are done: it moves to R, b enters M; a's reduce and b's maps both rank.
    ran(&mut env, "a", MAP, 2, 5_000, (0, 1));
    let second = env.offer(1, 1);
    assert_eq!(phases(&env), (vec!["b".into()], vec!["a".into()], vec![]));
    let mut apps: Vec<String> = ranking(&second, Q);
    apps.sort();
    assert_eq!(apps, [format!("a:{REDUCE}:any"), format!("b:{MAP}:any")]);
}

#[test]
fn a_job_done_with_its_maps_waits_first_come_first_served_for_room_in_r() {
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "1")]);
    job(&mut env, "a", 1, 1, 1);
    job(&mut env, "b", 2, 1, 1);
    env.offer(1, 1);
    ran(&mut env, "a", MAP, 1, 1_000, (0, 1));
    env.offer(1, 1);
    ran(&mut env, "b", MAP, 1, 1_000, (0, 1));
    let response = env.offer(1, 1);
    // b waits in R' while a reduces: only a's reduce ranks.
    assert_eq!(phases(&env), (vec![], vec!["a".into()], vec!["b".into()]));
    assert_eq!(ranking(&response, Q), [format!("a:{REDUCE}:any")]);
    ran(&mut env, "a", REDUCE, 1, 1_000, (0, 0));
    env.offer(1, 1);
    assert_eq!(phases(&env), (vec![], vec!["b".into()], vec![]));
}

#[test]
fn waiting_jobs_enter_the_map_phase_in_johnsons_order() {
    // Defaults 30 s per map, 60 s per reduce. x: 10 maps, 1 reduce (300 s > 60 s: last
    // group); y: 1 map, 10 reduces (30 s ≤ 600 s: first group). y goes first though x came
    // first; with k = 1, x waits.
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "1")]);
    job(&mut env, "x", 1, 10, 1);
    job(&mut env, "y", 2, 1, 10);
    let response = env.offer(1, 1);
    assert_eq!(ranking(&response, Q), [format!("y:{MAP}:any")]);
}

#[test]
fn reduces_wait_while_the_expected_map_share_says_maps() {
    // m: in its map phase with 20 maps of 30 s left (600 s) and its reduces asked at
    // slow-start; r: reducing, 2 reduces of 60 s left. θ_cur = 600 / 720 of 1 container (none
    // run yet) = 0.83 > 0 maps running: maps first, r's reduce only behind them.
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "all")]);
    job(&mut env, "r", 1, 1, 2);
    env.offer(1, 1);
    ran(&mut env, "r", MAP, 1, 1_000, (0, 2));
    job(&mut env, "m", 2, 20, 5);
    let response = env.offer(1, 1);
    assert_eq!(phases(&env), (vec!["m".into()], vec!["r".into()], vec![]));
    assert_eq!(
        ranking(&response, Q),
        [format!("m:{MAP}:any"), format!("r:{REDUCE}:any")]
    );
    assert!(
        !ranking(&response, Q).contains(&format!("m:{REDUCE}:any")),
        "a job in its map phase holds its reduces"
    );
    let reasons: Vec<&str> = response.plan.queues[0]
        .entries
        .iter()
        .map(|e| &*e.reason)
        .collect();
    assert_eq!(reasons, ["fresh:map-share", "fresh:no-map-pending"]);
}

/// Starts `count` tasks of `app` at `priority` now, left running.
fn start(env: &mut TestEnv, app: &str, priority: i32, count: u32) {
    for _ in 0..count {
        env.run(app, priority, 1, 1, Locality::OffSwitch);
    }
}

/// r: 40 reduces of 60 s left (5 running, 35 pending); m: 2 maps of 30 s left (1 running, 1
/// pending) and a reduce. Returns the container of m's running map.
fn reduce_heavy_and_map_light_jobs(env: &mut TestEnv) -> ContainerId {
    job(env, "r", 1, 1, 40);
    env.offer(1, 1);
    ran(env, "r", MAP, 1, 1_000, (0, 40));
    start(env, "r", REDUCE, 5);
    env.asks("r", &[(REDUCE, 35, &[])]);
    job(env, "m", 2, 2, 1);
    let running = env.run("m", MAP, 1, 1, Locality::OffSwitch);
    env.asks("m", &[(MAP, 1, &[(1, 1)]), (REDUCE, 1, &[])]);
    running
}

#[test]
fn reduce_heavy_work_left_turns_the_container_to_a_reduce() {
    // r: 40 reduces of 60 s left (5 running, 35 pending: 2400 s); m: 2 maps of 30 s left
    // (1 running, 1 pending: 60 s). The queue holds 6 containers, with the offered one S = 7:
    // θ_cur = 60 / 2460, expected maps 0.17, not above the 1 running: reduce first.
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "all")]);
    reduce_heavy_and_map_light_jobs(&mut env);
    let response = env.offer(1, 1);
    assert_eq!(
        ranking(&response, Q),
        [format!("r:{REDUCE}:any"), format!("m:{MAP}:any")]
    );
    // With no map running the same work makes the container a map (0.17 > 0).
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "all")]);
    job(&mut env, "r", 1, 1, 40);
    env.offer(1, 1);
    ran(&mut env, "r", MAP, 1, 1_000, (0, 40));
    start(&mut env, "r", REDUCE, 5);
    env.asks("r", &[(REDUCE, 35, &[])]);
    job(&mut env, "m", 2, 2, 1);
    let response = env.offer(1, 1);
    assert_eq!(ranking(&response, Q)[0], format!("m:{MAP}:any"));
}

#[test]
fn the_admitted_job_with_the_least_overall_use_goes_first() {
    // Both admitted at t0; a has run 4 maps of 10 s since, b none: r_a = 40 s / 10 s = 4,
    // r_b = 0. b first although a arrived first.
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "all")]);
    job(&mut env, "a", 1, 10, 1);
    job(&mut env, "b", 2, 10, 1);
    let first = env.offer(1, 1);
    assert_eq!(
        ranking(&first, Q),
        [format!("a:{MAP}:any"), format!("b:{MAP}:any")]
    );
    env.now_ms += 10_000;
    ran(&mut env, "a", MAP, 4, 10_000, (6, 1));
    let response = env.offer(1, 1);
    assert_eq!(
        ranking(&response, Q),
        [format!("b:{MAP}:any"), format!("a:{MAP}:any")]
    );
    let memory = env.fresh_memory();
    assert_eq!(memory.resource_use(&id("a"), env.now_ms), Some(4.0));
    assert_eq!(memory.resource_use(&id("b"), env.now_ms), Some(0.0));
}

#[test]
fn overall_use_is_read_at_each_offer_even_when_nothing_else_changed() {
    // Both admitted at t0. At t0 + 10 s a has finished a map of 10 s, b has just started
    // one: r_a = 10 / 10 = 1, r_b = 0, b first. Twenty seconds later with no event at all,
    // r_a = 10 / 30 = 0.33 and r_b = 20 / 30 = 0.67: a first.
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "all")]);
    job(&mut env, "a", 1, 10, 1);
    job(&mut env, "b", 2, 10, 1);
    env.offer(1, 1);
    env.now_ms += 10_000;
    ran(&mut env, "a", MAP, 1, 10_000, (9, 1));
    start(&mut env, "b", MAP, 1);
    env.asks("b", &[(MAP, 9, &[(1, 1)]), (REDUCE, 1, &[])]);
    let response = env.offer(1, 1);
    assert_eq!(
        ranking(&response, Q),
        [format!("b:{MAP}:any"), format!("a:{MAP}:any")]
    );
    env.now_ms += 20_000;
    let response = env.offer(1, 1);
    assert_eq!(
        ranking(&response, Q),
        [format!("a:{MAP}:any"), format!("b:{MAP}:any")]
    );
}

#[test]
fn a_container_stopped_before_its_task_completed_counts_at_the_next_offer() {
    // r: 40 reduces of 60 s left (5 running); m: 2 maps of 30 s left, 1 of them running, so
    // the container goes to a reduce (as above). m's running map is then stopped before its
    // task completes (preempted): no observation says so, only the running counts change.
    // With no map running, S = 6 and θ_cur · S = 30 / 2430 · 6 = 0.07 > 0 maps: a map first.
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "all")]);
    let running = reduce_heavy_and_map_light_jobs(&mut env);
    let response = env.offer(1, 1);
    assert_eq!(ranking(&response, Q)[0], format!("r:{REDUCE}:any"));
    env.pending.push(Event::ContainerFinished {
        app: id("m"),
        container: running,
        time_ms: env.now_ms,
        task_completed: false,
    });
    let response = env.offer(1, 1);
    assert_eq!(ranking(&response, Q)[0], format!("m:{MAP}:any"));
}

#[test]
fn profiles_come_from_the_job_then_its_name_history_then_the_defaults_across_a_restart() {
    // With defaults (30 s map, 60 s reduce) x (4 maps, 4 reduces: 120 ≤ 240) goes before y
    // (6 maps, 1 reduce: 180 > 60). A finished earlier run of y's name had 1 s maps: y's
    // profile becomes 6 s ≤ 60 s and, smaller first stage, y goes first.
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "1")]);
    job(&mut env, "x", 1, 4, 4);
    job(&mut env, "y", 2, 6, 1);
    assert_eq!(ranking(&env.offer(1, 1), Q), [format!("x:{MAP}:any")]);

    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "1")]);
    // An earlier run named like y ("job-y"), as app "y0": one map of 1 s, then gone.
    env.pending.push(Event::AppAdded {
        app: id("y0"),
        name: "job-y".into(),
        user: "alice".into(),
        queue: Q.into(),
        app_type: "MAPREDUCE".into(),
        tags: vec![],
        submit_ms: 0,
    });
    env.asks("y0", &[(MAP, 1, &[(1, 1)])]);
    env.offer(1, 1);
    ran(&mut env, "y0", MAP, 1, 1_000, (0, 0));
    env.pending.push(Event::AppRemoved { app: id("y0") });
    job(&mut env, "x", 1, 4, 4);
    job(&mut env, "y", 2, 6, 1);
    let response = env.offer(1, 1);
    assert_eq!(ranking(&response, Q), [format!("y:{MAP}:any")]);

    // The shim persists what was learned; a restarted engine reads it back and ranks alike.
    assert_eq!(
        response.learned,
        [LearnedRatio {
            job_name: "job-y".into(),
            map_ms: Some(1_000.0),
            profile_runs: 1,
            ..LearnedRatio::default()
        }]
    );
    let mut restarted = TestEnv::fresh_restarted(1, 2, &[("jobsPerPhase", "1")], response.learned);
    job(&mut restarted, "x", 1, 4, 4);
    job(&mut restarted, "y", 2, 6, 1);
    assert_eq!(ranking(&restarted.offer(1, 1), Q), [format!("y:{MAP}:any")]);
}

#[test]
fn k_accepts_a_count_half_or_all_and_refuses_anything_else_by_name() {
    for good in ["1", "7", "half", "all"] {
        let env = TestEnv::with_registry(
            1,
            1,
            &[],
            vec![queue(Q, &[("policy", "fresh"), ("jobsPerPhase", good)])],
            rackwise_core::policy::Registry::builtin(),
        );
        assert!(env.is_ok(), "{good}");
    }
    for (bad, reason) in [
        ("0", "must be a whole number in [1, 100000] or half or all"),
        (
            "2.5",
            "must be a whole number in [1, 100000] or half or all",
        ),
        (
            "most",
            "must be a whole number in [1, 100000] or half or all",
        ),
    ] {
        let result = TestEnv::with_registry(
            1,
            1,
            &[],
            vec![queue(
                Q,
                &[
                    ("policy", "fresh"),
                    ("jobsPerPhase", bad),
                    ("switchGap", "0"),
                ],
            )],
            rackwise_core::policy::Registry::builtin(),
        );
        let Err(CoreError::Config(problems)) = result else {
            panic!("{bad} accepted");
        };
        let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(text.len(), 2, "{text:?}");
        assert!(
            text[0].contains(&format!("<rackwise><jobsPerPhase>: value '{bad}' {reason}")),
            "{text:?}"
        );
        assert!(
            text[1].contains("<rackwise><switchGap>: value '0' is out of range (0, 100]"),
            "{text:?}"
        );
    }
}

#[test]
fn half_is_half_the_batch_rounded_up() {
    // 3 jobs: k = 2. The third waits for the map phase.
    let mut env = TestEnv::fresh(1, 2, &[]);
    for (app, submit) in [("a", 1), ("b", 2), ("c", 3)] {
        job(&mut env, app, submit, 2, 2);
    }
    env.offer(1, 1);
    let (mapping, _, _) = phases(&env);
    assert_eq!(mapping.len(), 2, "{mapping:?}");
}

/// The first plan entry in the lookahead scenario of the test below, with τ1 as given.
fn lookahead_case(lookahead_progress: &str) -> String {
    let mut env = TestEnv::fresh(
        1,
        2,
        &[
            ("jobsPerPhase", "all"),
            ("lookaheadProgress", lookahead_progress),
        ],
    );
    // r: reducing, 3 of 5 reduces of 20 s done 10 s apart (r = 10 s), 2 pending: RW_r = 40 s.
    job(&mut env, "r", 1, 1, 5);
    env.offer(1, 1);
    ran(&mut env, "r", MAP, 1, 1_000, (0, 5));
    for left in [4, 3, 2] {
        env.now_ms += 10_000;
        ran(&mut env, "r", REDUCE, 1, 20_000, (0, left));
    }
    // a: 9 of 10 maps of 10 s done, the last running; 200 reduces asked at slow-start.
    job(&mut env, "a", 2, 10, 200);
    env.offer(1, 1);
    ran(&mut env, "a", MAP, 9, 10_000, (0, 200));
    start(&mut env, "a", MAP, 1);
    // c: 100 maps pending, no measured time: 30 s each by default.
    job(&mut env, "c", 3, 100, 1);
    ranking(&env.offer(1, 1), Q)[0].clone()
}

#[test]
fn lookahead_turns_the_container_to_a_reduce_before_a_reduce_heavy_job_leaves_its_maps() {
    // RW_m = 10 s (a) + 3000 s (c), RW_r = 40 s: θ_cur = 0.987; S = 1 running map + the
    // offered container = 2, so θ_cur·S = 1.97 > s_m = 1: a map, unless J_a = a (progress
    // 0.9) looks ahead. Then RW'_m = 3010 − 10·2 = 2990 s, RW'_r = 40 + 200·60 = 12040 s,
    // θ_exp = 0.199; Theorem 1 (ms): c = 0.987 / (2·10000·2), η = 0.83, s'_m = 1.82 of 2 =
    // 0.91, |0.91 − 0.199| / 0.199 = 3.6 > τ2 = 0.6: θ_exp·S = 0.40 < 1, a reduce.
    assert_eq!(lookahead_case("0.8"), format!("r:{REDUCE}:any"));
    // With τ1 above a's progress there is no lookahead: the map share says map.
    assert!(
        lookahead_case("0.95").ends_with(&format!(":{MAP}:any")),
        "maps first without the lookahead"
    );
}

#[test]
fn a_job_not_admitted_waits_for_its_application_master_until_admission_nears_or_the_guard() {
    // k = 1, one started job may wait ahead of admission (startsAhead = 1), guard 60 s.
    let mut env = TestEnv::fresh(
        1,
        2,
        &[
            ("jobsPerPhase", "1"),
            ("startsAhead", "1"),
            ("starvationGuardMs", "60000"),
        ],
    );
    // a maps (M), b's AM runs and b waits for M; c and d still ask for their AMs.
    job(&mut env, "a", 1, 4, 1);
    job(&mut env, "b", 2, 4, 1);
    let submitted = env.now_ms;
    for (app, at) in [("c", submitted), ("d", submitted + 1)] {
        env.submit(app, Q, at, &[]);
        env.asks(app, &[(AM, 1, &[])]);
    }
    let first = env.offer(1, 1);
    assert_eq!(ranking(&first, Q), [format!("a:{MAP}:any")]);
    assert_eq!(placement_of(&first, Q, "c"), Placement::Vetoed);
    assert_eq!(placement_of(&first, Q, "d"), Placement::Vetoed);

    // a is done with its maps: b enters M, so one AM may start ahead again: c's (arrival
    // order), while d's still waits.
    env.now_ms += 10_000;
    ran(&mut env, "a", MAP, 4, 5_000, (0, 1));
    let second = env.offer(1, 1);
    assert_eq!(phases(&env), (vec!["b".into()], vec!["a".into()], vec![]));
    assert_eq!(placement_of(&second, Q, "c"), Placement::Stock);
    assert_eq!(placement_of(&second, Q, "d"), Placement::Vetoed);

    // 60 s after d's submission the guard lifts its hold, though b still maps.
    env.now_ms = submitted + 1 + 60_001;
    let lifted = env.offer(1, 1);
    assert_eq!(phases(&env).0, ["b"]);
    assert_eq!(placement_of(&lifted, Q, "d"), Placement::Stock);
    assert!(lifted.diagnostics.starved.contains(&id("d")));
}

#[test]
fn an_application_master_is_not_held_when_no_admitted_job_can_use_the_container() {
    // a's only map runs: the queue has nothing pending, so c's AM is FairScheduler's even
    // with k = 1 and no start ahead.
    let mut env = TestEnv::fresh(1, 2, &[("jobsPerPhase", "1"), ("startsAhead", "0")]);
    job(&mut env, "a", 1, 1, 0);
    env.offer(1, 1);
    start(&mut env, "a", MAP, 1);
    env.asks("a", &[]);
    env.submit("c", Q, env.now_ms, &[]);
    env.asks("c", &[(AM, 1, &[])]);
    let response = env.offer(1, 1);
    assert!(
        response.plan.queues.iter().all(|q| &*q.queue != Q),
        "{:?}",
        response.plan
    );
}
