//! Named scenarios for DRMJS: scores hand-computed from the formulas in docs/drmjs.md, and the
//! decisions they lead to on an offer.
//!
//! The cluster is one rack of four nodes `r1n1`..`r1n4` (8 vcores, 8 GiB; every test container
//! is 1 vcore, 1 GiB, so 8 fit a node). With the default weights (1/3 each),
//! `MPS = (CPU + Disk + map_inf) / 3` and `RPS = (CPU + Net + reduce_inf) / 3`.

mod common;

use common::*;
use rackwise_core::policy::drmjs::scores::{Board, Class, TermSource};
use rackwise_core::policy::drmjs::Drmjs;
use rackwise_core::policy::Registry;
use rackwise_core::protocol::*;
use rackwise_core::CoreError;

const QUEUE: &str = "root.dr";
/// Scores are compared with this margin: every expected value below is exact to far better.
const MARGIN: f64 = 1e-9;

fn drmjs_env(settings: &[(&str, &str)], elements: &[(&str, &str)]) -> TestEnv {
    let mut queue_elements = vec![("policy", "drmjs")];
    queue_elements.extend_from_slice(elements);
    TestEnv::with_registry(
        1,
        4,
        settings,
        vec![queue(QUEUE, &queue_elements)],
        Registry::builtin(),
    )
    .expect("valid config")
}

fn figures(env: &mut TestEnv, n: u32, cpu_speed: Option<f64>, disk: Option<f64>) {
    env.pending.push(Event::HostFigures {
        host: host(1, n),
        time_ms: env.now_ms,
        cross_rack_mbps: None,
        disk_utilization: disk,
        network_utilization: None,
        cpu_speed,
    });
}

fn board(env: &TestEnv) -> &Board {
    env.engine
        .policy::<Drmjs>()
        .expect("drmjs is built in")
        .board(QUEUE)
        .expect("the queue was planned")
}

fn assert_close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() < MARGIN,
        "{what}: {actual} is not {expected}"
    );
}

/// Per node `r1n1`..`r1n4`: (MPS, map class) and (RPS, reduce class).
fn assert_scores(env: &TestEnv, map: [(f64, Class); 4], reduce: [(f64, Class); 4]) {
    let board = board(env);
    for n in 1..=4 {
        let scores = board.node(&node(1, n)).expect("node scored");
        let i = n as usize - 1;
        assert_close(scores.map.score, map[i].0, &format!("MPS of r1n{n}"));
        assert_eq!(scores.map.class, map[i].1, "map class of r1n{n}");
        assert_close(scores.reduce.score, reduce[i].0, &format!("RPS of r1n{n}"));
        assert_eq!(scores.reduce.class, reduce[i].1, "reduce class of r1n{n}");
    }
}

fn map_rank(env: &TestEnv) -> Vec<String> {
    board(env)
        .ranked(rackwise_core::mapreduce::TaskKind::Map)
        .map(|s| s.node.0.split(':').next().unwrap_or_default().to_string())
        .collect()
}

/// A job `b` in the queue with 8 maps whose splits are on `r1n1` (rack-local on the other
/// nodes), and 2 reduces.
fn pending_job(env: &mut TestEnv) {
    env.submit("b", QUEUE, 100, &[]);
    env.asks("b", &[(MAP, 8, &[(1, 1)]), (REDUCE, 2, &[])]);
}

/// Job `a` ran one map on each node: 10 s on r1n1..r1n3 and 50 s on r1n4. Its mean is 20 s, so
/// the normalised latencies are 0.5 and 2.5, and `map_inf` is 1 on r1n1..r1n3 and
/// 0.5 / 2.5 = 0.2 on r1n4.
fn slow_maps_on_node_four(env: &mut TestEnv) {
    env.submit("a", QUEUE, 50, &[]);
    let started = env.now_ms;
    let containers: Vec<_> = (1..=4)
        .map(|n| env.run("a", MAP, 1, n, Locality::NodeLocal))
        .collect();
    for (n, container) in (1..=4).zip(containers) {
        env.now_ms = started + if n == 4 { 50_000 } else { 10_000 };
        env.finish("a", container);
    }
}

/// r1n4's NodeManager reports 4 of its 8 vcores busy (a noisy neighbour): its CPU term is
/// 1 × (1 − 4/8) = 0.5.
fn half_busy() -> Option<Utilization> {
    Some(Utilization {
        pmem_mb: 0,
        cpu: 4.0,
    })
}

#[test]
fn a_fast_node_outranks_a_slow_one_by_relative_cpu_speed() {
    let mut env = drmjs_env(&[], &[]);
    // Relative speeds 2, 1, (none: 1), 0.5 → CPU = speed / 2 = 1, 0.5, 0.5, 0.25. Nothing else
    // is known, so every other term is 1.
    figures(&mut env, 1, Some(2.0), None);
    figures(&mut env, 2, Some(1.0), None);
    figures(&mut env, 4, Some(0.5), None);
    pending_job(&mut env);
    let response = env.offer(1, 1);
    let (fast, slow) = (3.0 / 3.0, 2.5 / 3.0);
    let slowest = 2.25 / 3.0;
    assert_scores(
        &env,
        [
            (fast, Class::High),
            (slow, Class::High),
            (slow, Class::High),
            (slowest, Class::High),
        ],
        [
            (fast, Class::High),
            (slow, Class::High),
            (slow, Class::High),
            (slowest, Class::High),
        ],
    );
    assert_eq!(map_rank(&env), ["r1n1", "r1n2", "r1n3", "r1n4"]);
    // Every node ranks as well for maps as for reduces: maps first, local first.
    assert_eq!(
        ranking(&response, QUEUE),
        ["b:20:node", "b:20:rack", "b:20:any", "b:10:any"]
    );
}

#[test]
fn a_busy_fast_node_falls_behind_by_its_reported_cpu() {
    let mut env = drmjs_env(&[], &[]);
    figures(&mut env, 1, Some(2.0), None);
    pending_job(&mut env);
    // r1n1 is twice as fast but its NodeManager reports 6 of 8 vcores busy: CPU = 1 × 0.25,
    // MPS = 2.25 / 3, while r1n2..r1n4 have CPU 0.5 and MPS 2.5 / 3.
    env.offer_reporting(
        1,
        1,
        Some(Utilization {
            pmem_mb: 0,
            cpu: 6.0,
        }),
    );
    let scores = board(&env).node(&node(1, 1)).expect("scored").clone();
    assert_close(scores.cpu, 0.25, "CPU of r1n1");
    assert_close(scores.map.score, 2.25 / 3.0, "MPS of r1n1");
    assert_close(scores.map.relative, 2.25 / 2.5, "relative MPS of r1n1");
    assert_eq!(map_rank(&env), ["r1n2", "r1n3", "r1n4", "r1n1"]);
}

#[test]
fn a_disk_contended_node_gets_reduces_before_maps() {
    let mut env = drmjs_env(&[], &[]);
    // The feed gives every host's disk: 20 % busy, r1n3 90 %. Disk = 0.8 and 0.1.
    for n in 1..=4 {
        figures(&mut env, n, None, Some(if n == 3 { 0.9 } else { 0.2 }));
    }
    pending_job(&mut env);
    let contended = env.offer(1, 3);
    let (quiet_mps, contended_mps) = ((1.0 + 0.8 + 1.0) / 3.0, (1.0 + 0.1 + 1.0) / 3.0);
    assert_scores(
        &env,
        [
            (quiet_mps, Class::High),
            (quiet_mps, Class::High),
            (contended_mps, Class::High), // 0.7 / 0.9333 = 0.75 of the best
            (quiet_mps, Class::High),
        ],
        [(1.0, Class::High); 4],
    );
    let scores = board(&env).node(&node(1, 3)).expect("scored").clone();
    assert_eq!(scores.disk_source, TermSource::Feed);
    assert_eq!(scores.net_source, TermSource::Observed);
    assert_close(scores.map.position, 0.75, "map rank position of r1n3");
    assert_close(scores.reduce.position, 0.0, "reduce rank position of r1n3");
    // Last on the map list, tied first on the reduce list: the reduce goes first.
    assert_eq!(
        ranking(&contended, QUEUE),
        ["b:10:any", "b:20:rack", "b:20:any"]
    );
    // A quiet node ranks first on both: maps first.
    let quiet = env.offer(1, 1);
    assert_eq!(
        ranking(&quiet, QUEUE),
        ["b:20:node", "b:20:rack", "b:20:any", "b:10:any"]
    );
}

#[test]
fn slow_tasks_put_a_node_in_the_low_map_class_and_it_gets_no_maps_while_others_have_room() {
    let mut env = drmjs_env(&[], &[]);
    slow_maps_on_node_four(&mut env);
    pending_job(&mut env);
    let response = env.offer_reporting(1, 4, half_busy());
    // r1n4: no disk figure, so Disk = map_inf = 0.2 (observed); MPS = (0.5 + 0.2 + 0.2) / 3 =
    // 0.3, 0.3 of the best (1) → Low. No reduce ran anywhere: RPS = (0.5 + 1 + 1) / 3 → High.
    assert_scores(
        &env,
        [
            (1.0, Class::High),
            (1.0, Class::High),
            (1.0, Class::High),
            (0.3, Class::Low),
        ],
        [
            (1.0, Class::High),
            (1.0, Class::High),
            (1.0, Class::High),
            (2.5 / 3.0, Class::High),
        ],
    );
    let scores = board(&env).node(&node(1, 4)).expect("scored").clone();
    assert_eq!(scores.disk_source, TermSource::Observed);
    assert_close(scores.map_influence, 0.2, "map_inf of r1n4");
    // Its maps are held (r1n1..r1n3 have room); its reduces are not.
    assert_eq!(ranking(&response, QUEUE), ["b:10:any"]);
    // The same node's maps go once every better node is full.
    for n in 1..=3 {
        for _ in 0..8 {
            env.run("a", MAP, 1, n, Locality::OffSwitch);
        }
    }
    let full = env.offer_reporting(1, 4, half_busy());
    assert_eq!(ranking(&full, QUEUE), ["b:20:rack", "b:20:any", "b:10:any"]);
}

#[test]
fn the_starvation_guard_lifts_the_hold_on_a_low_class_node() {
    let guard = [("yarn.scheduler.rackwise.starvation-guard-ms", "20000")];
    let mut env = drmjs_env(&guard, &[]);
    slow_maps_on_node_four(&mut env);
    env.submit("b", QUEUE, 100, &[]);
    env.asks("b", &[(MAP, 8, &[(1, 1)])]);
    let held = env.offer_reporting(1, 4, half_busy());
    assert!(ranking(&held, QUEUE).is_empty(), "{:?}", held.plan);
    // 20 s later `b` has had no container: past the guard, all its asks go first.
    env.now_ms += 20_001;
    let lifted = env.offer_reporting(1, 4, half_busy());
    let entries = &queue_plan(&lifted, QUEUE).expect("queue planned").entries;
    assert_eq!(ranking(&lifted, QUEUE), ["b:20:any"]);
    assert_eq!(entries[0].reason, "starvation-guard");
}

#[test]
fn the_score_cap_variant_bounds_a_node_by_its_relative_score() {
    let mut env = drmjs_env(&[], &[("placement", "score-cap")]);
    slow_maps_on_node_four(&mut env);
    pending_job(&mut env);
    // r1n4's relative MPS is 0.3: at most ceil(8 × 0.3) = 3 maps. With 2 running it takes
    // maps (no hold for better nodes under the cap variant).
    for _ in 0..2 {
        env.run("b", MAP, 1, 4, Locality::OffSwitch);
    }
    let under = env.offer_reporting(1, 4, half_busy());
    assert_eq!(
        ranking(&under, QUEUE),
        ["b:20:rack", "b:20:any", "b:10:any"]
    );
    env.run("b", MAP, 1, 4, Locality::OffSwitch);
    let at_cap = env.offer_reporting(1, 4, half_busy());
    assert_eq!(ranking(&at_cap, QUEUE), ["b:10:any"]);
}

#[test]
fn scores_are_refreshed_after_the_interval_and_on_task_completion() {
    let mut env = drmjs_env(&[], &[("refreshMs", "60000")]);
    pending_job(&mut env);
    env.offer(1, 1);
    assert_close(board(&env).node(&node(1, 2)).unwrap().cpu, 1.0, "CPU");
    // A new feed figure alone waits for the interval...
    figures(&mut env, 1, Some(2.0), None);
    env.now_ms += 59_000;
    env.offer(1, 1);
    assert_close(board(&env).node(&node(1, 2)).unwrap().cpu, 1.0, "CPU");
    // ...or a task completion.
    let map = env.run("b", MAP, 1, 1, Locality::NodeLocal);
    env.now_ms += 500;
    env.finish("b", map);
    env.offer(1, 1);
    assert_close(board(&env).node(&node(1, 2)).unwrap().cpu, 0.5, "CPU");
}

#[test]
fn bad_elements_are_named_with_their_value_and_reason() {
    let result = TestEnv::with_registry(
        1,
        1,
        &[],
        vec![queue(
            QUEUE,
            &[
                ("policy", "drmjs"),
                ("influenceTasks", "0"),
                ("highClassFrom", "0.5"),
                ("lowClassBelow", "0.6"),
                ("placement", "proportional"),
                ("cpuWeight", "0"),
                ("resourceWeight", "0"),
                ("influenceWeight", "0"),
            ],
        )],
        Registry::builtin(),
    );
    let Err(CoreError::Config(problems)) = result else {
        panic!("the configuration must be refused");
    };
    let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    let has = |needle: &str| text.iter().any(|t| t.contains(needle));
    assert!(
        has("<influenceTasks>: value '0' is out of range [1, 100]"),
        "{text:?}"
    );
    assert!(
        has("<placement>: value 'proportional' must be strict-rank or score-cap"),
        "{text:?}"
    );
    assert!(
        has("<lowClassBelow>: value '0.6' must not exceed <highClassFrom> (0.5)"),
        "{text:?}"
    );
    assert!(has("<cpuWeight>: value '0'"), "{text:?}");
    assert!(has("at least one weight must be above 0"), "{text:?}");
}

#[test]
fn a_finished_jobs_latencies_count_until_its_samples_are_gone() {
    let mut env = drmjs_env(&[], &[]);
    slow_maps_on_node_four(&mut env);
    pending_job(&mut env);
    env.pending.push(Event::AppRemoved {
        app: AppId("a".into()),
    });
    env.offer_reporting(1, 4, half_busy());
    let memory = env.engine.policy::<Drmjs>().expect("built in");
    // `a` is gone but its four samples still normalise by its mean: r1n4 keeps map_inf 0.2.
    assert_eq!(memory.latencies().jobs_kept(), 1);
    assert_close(
        board(&env).node(&node(1, 4)).expect("scored").map_influence,
        0.2,
        "map_inf of r1n4",
    );
    // With the nodes that held its samples gone, nothing of it is kept.
    for n in 1..=4 {
        env.pending.push(Event::NodeRemoved { node: node(1, n) });
    }
    env.offer(1, 1);
    let memory = env.engine.policy::<Drmjs>().expect("built in");
    assert_eq!(memory.latencies().jobs_kept(), 0);
}

/// DRMJS keeps latencies only while some queue runs it: a queue switched to it later starts
/// from no history rather than from one with a gap.
#[test]
fn latencies_are_kept_only_while_a_queue_runs_drmjs() {
    let mut env = drmjs_env(&[], &[]);
    let run_under = |env: &mut TestEnv, policy: &str| {
        env.engine
            .reconfigure(&EngineConfig {
                queues: vec![queue(QUEUE, &[("policy", policy)])],
                source: "test".into(),
                ..EngineConfig::default()
            })
            .expect("valid config");
    };
    let jobs_kept = |env: &TestEnv| {
        let memory = env.engine.policy::<Drmjs>().expect("built in");
        memory.latencies().jobs_kept()
    };
    slow_maps_on_node_four(&mut env);
    env.offer(1, 1);
    assert_eq!(jobs_kept(&env), 1);
    run_under(&mut env, "fresh");
    env.submit("c", QUEUE, 200, &[]);
    let map = env.run("c", MAP, 1, 4, Locality::NodeLocal);
    env.now_ms += 1_000;
    env.finish("c", map);
    env.offer(1, 1);
    assert_eq!(jobs_kept(&env), 0, "a's and c's latencies are not kept");
    run_under(&mut env, "drmjs");
    pending_job(&mut env);
    env.offer_reporting(1, 4, half_busy());
    assert_close(
        board(&env).node(&node(1, 4)).expect("scored").map_influence,
        1.0,
        "map_inf of r1n4, whose slow map of a was forgotten",
    );
}

#[test]
fn a_jobs_large_reduces_go_to_nodes_of_their_class_while_one_has_room() {
    let mut env = drmjs_env(&[], &[]);
    // r1n4 is half busy and its network 90 % used: RPS = (0.5 + 0.1 + 1) / 3 ≈ 0.53 of the
    // best 1 → Medium for reduces; r1n1..r1n3 are High.
    env.pending.push(Event::HostFigures {
        host: host(1, 4),
        time_ms: env.now_ms,
        cross_rack_mbps: None,
        disk_utilization: None,
        network_utilization: Some(0.9),
        cpu_speed: None,
    });
    // Both jobs finished their 10 maps. `big` wrote 8 GiB of map output for 2 reduces (4 GiB
    // each); `small` 1 GiB for 4 (0.25 GiB each, 1/16 of the largest → Low size class).
    const GIB: u64 = 1 << 30;
    env.submit("big", QUEUE, 50, &[]);
    env.submit("small", QUEUE, 100, &[]);
    env.stats("big", 10, 10, 2, 10 * GIB, 8 * GIB);
    env.stats("small", 10, 10, 4, 10 * GIB, GIB);
    env.asks("big", &[(REDUCE, 2, &[])]);
    env.asks("small", &[(REDUCE, 4, &[])]);
    let medium = env.offer_reporting(1, 4, half_busy());
    let scores = board(&env).node(&node(1, 4)).expect("scored").clone();
    assert_close(scores.reduce.score, 1.6 / 3.0, "RPS of r1n4");
    assert_eq!(scores.reduce.class, Class::Medium);
    // The High-size reduces of `big` wait for a High node; the small ones run here.
    assert_eq!(ranking(&medium, QUEUE), ["small:10:any"]);
    let high = env.offer(1, 1);
    assert_eq!(ranking(&high, QUEUE), ["big:10:any", "small:10:any"]);
    // With every High node full, `big`'s reduces take the Medium node.
    for n in 1..=3 {
        for _ in 0..8 {
            env.run("small", REDUCE, 1, n, Locality::OffSwitch);
        }
    }
    let full = env.offer_reporting(1, 4, half_busy());
    assert_eq!(ranking(&full, QUEUE), ["big:10:any", "small:10:any"]);
}

#[test]
fn the_scores_and_their_inputs_go_with_the_response_at_most_once_per_interval() {
    let mut env = drmjs_env(&[], &[]);
    slow_maps_on_node_four(&mut env);
    pending_job(&mut env);
    let first = env.offer_reporting(1, 4, half_busy());
    assert_eq!(first.node_scores.len(), 4, "{:?}", first.node_scores);
    let slow = first
        .node_scores
        .iter()
        .find(|score| score.node == node(1, 4))
        .expect("r1n4 reported");
    assert_eq!(slow.queue, QUEUE);
    assert_close(slow.cpu_speed, 1.0, "relative speed of r1n4");
    assert_close(slow.cpu_free, 0.5, "free CPU of r1n4");
    assert_close(slow.disk, 0.2, "disk term of r1n4");
    assert!(!slow.disk_from_feed, "no feed: the observed slowdown");
    assert_close(slow.map_influence, 0.2, "map_inf of r1n4");
    assert_close(slow.map_score, 0.3, "MPS of r1n4");
    assert_eq!(slow.map_class, Class::Low);
    assert_eq!(slow.reduce_class, Class::High);
    // Within the interval nothing is sent again; after it, every node is.
    assert!(env.offer(1, 1).node_scores.is_empty());
    env.now_ms += 10_000;
    assert_eq!(env.offer(1, 1).node_scores.len(), 4);
}
