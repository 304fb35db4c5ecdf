//! FairScheduler as Hadoop 3.4 runs it: containers per heartbeat, `maxAMShare`, FIFO leaf
//! queues, the progress watchdog and the bounded queue of events for the core. Timings are
//! computed by hand from the heartbeat phases (node `i` of `n` beats at `i × 1000 / n` ms
//! past every second), a 3 s AM start and a 1 s task launch, with the AM's asks and grants
//! taking effect at once (`instant_am`), so that only the scheduler's rules are in the sums.

mod common;

use common::instant_am;
use rackwise_sim::sim::{HeartbeatAssignment, NETSAT_SOURCE_KEY};
use rackwise_sim::workload::ShuffleClass;
use rackwise_sim::{run_policy, Cluster, JobSpec, SimOptions};
use std::collections::BTreeMap;

const MIB: u64 = 1024 * 1024;

/// One rack of `nodes` nodes with `containers` containers each, one replica per block.
fn rack(nodes: usize, containers: u32) -> Cluster {
    Cluster {
        name: "rack".into(),
        racks: 1,
        nodes_per_rack: nodes,
        containers_per_node: containers,
        replication: 1,
        ..Cluster::preset("sw100").unwrap()
    }
}

/// A map-only job without input: each map takes 1 s of launch plus its output written at
/// 80 MiB/s.
fn map_only(submit_ms: u64, user: usize, maps: u32, output_per_map: u64) -> JobSpec {
    JobSpec {
        name: format!("u{user}@{submit_ms}"),
        submit_ms,
        user,
        input_bytes: 0,
        shuffle_bytes: 0,
        output_bytes: output_per_map * maps as u64,
        maps,
        reduces: 0,
        class: ShuffleClass::of_shuffle_bytes(0),
        task_s: None,
    }
}

fn turnaround_s(cluster: &Cluster, jobs: &[JobSpec], policy: &str, options: &SimOptions) -> f64 {
    let (metrics, _, _) = run_policy(cluster, jobs, policy, options, &mut |_, _| {}).unwrap();
    metrics.mean_turnaround_s
}

/// One node, four containers, one job of three 1 s maps. AM at 1000, registered at 4000.
/// * one container per heartbeat (Hadoop 3.4's default): maps at 5000, 6000, 7000, the last
///   done at 8000;
/// * `max.assign=2`, or `dynamic.max.assign` with 3 free (3 / 2 + 1 = 2): two at 5000, one at
///   6000, done at 7000;
/// * every free container (the old behaviour, `fill_node`): all three at 5000, done at 6000.
#[test]
fn a_heartbeat_places_one_container_unless_assignmultiple_says_more() {
    let cluster = rack(1, 4);
    let jobs = vec![map_only(0, 0, 3, 0)];
    let with = |assignment: HeartbeatAssignment| SimOptions {
        heartbeat_assignment: assignment,
        ..instant_am()
    };
    let multiple = HeartbeatAssignment {
        assign_multiple: true,
        ..HeartbeatAssignment::default()
    };
    let cases = [
        (instant_am(), 8.0, "default"),
        (
            with(HeartbeatAssignment {
                dynamic_max_assign: false,
                max_assign: 2,
                ..multiple
            }),
            7.0,
            "max.assign=2",
        ),
        (with(multiple), 7.0, "dynamic.max.assign"),
        (
            with(HeartbeatAssignment {
                fill_node: true,
                ..HeartbeatAssignment::default()
            }),
            6.0,
            "fill_node",
        ),
    ];
    for policy in ["fair", "delay", "fair-fifo", "shufflewatcher"] {
        for (options, expected, case) in &cases {
            assert_eq!(
                turnaround_s(&cluster, &jobs, policy, options),
                *expected,
                "{policy}, {case}"
            );
        }
    }
}

/// Two containers (nodes beating at 0 and 500 ms), one user, two one-map jobs at t = 0. The
/// queue's fair share is the whole cluster, its `maxAMShare` 0.5 of it: one AM.
/// * job 1: AM at 500 (n1), registered at 3500, its map at 4000 (n0), done at 5000;
/// * job 2's AM waits for job 1's to end at 5000: n1's next heartbeat, 5500, registered at
///   8500, its map at 9000 (n0), done at 10000. Mean turnaround (5 + 10) / 2 = 7.5 s.
///
/// Without the limit both AMs take both containers and neither map can ever run: the
/// watchdog stops the run and says so.
#[test]
fn max_am_share_keeps_a_second_am_from_taking_the_maps_container() {
    let cluster = rack(2, 1);
    let jobs = vec![map_only(0, 0, 1, 0), map_only(0, 0, 1, 0)];
    for policy in ["fair", "delay", "fair-fifo", "shufflewatcher", "nas"] {
        let (metrics, _, collector) =
            run_policy(&cluster, &jobs, policy, &instant_am(), &mut |_, _| {}).unwrap();
        // `delay`, `nas` and `shufflewatcher` (its locality wait) may hold a map for a better
        // node: for them only the order is computed, and that both finish (two AMs would
        // stall, as below).
        let [first, second] = [0, 1].map(|j| collector.finish_ms[j].unwrap());
        assert!(second >= first + 4500, "{policy}: {first}, {second}");
        if !["delay", "nas", "shufflewatcher"].contains(&policy) {
            assert_eq!(metrics.mean_turnaround_s, 7.5, "{policy}");
        }
        let unlimited = SimOptions {
            max_am_share: -1.0,
            ..instant_am()
        };
        let error = run_policy(&cluster, &jobs, policy, &unlimited, &mut |_, _| {})
            .err()
            .unwrap_or_else(|| panic!("{policy}: two AMs on two containers must stall"));
        for state in [
            "no container was allocated and no task completed for 1800 s",
            // The AMs were placed by 1 s; work was pending again when the first registered.
            "no progress since 3.5 s",
            "Containers held: AM 2, map 0, reduce 0 (0 of 2 free)",
            "Pending asks: AM 0, map 2, reduce 0",
            "Jobs: not arrived 0, waiting for an AM container 0, AM starting 0, running 2, done 0",
        ] {
            assert!(error.contains(state), "{policy}: '{state}' in: {error}");
        }
    }
}

/// The watchdog's count of held containers leaves out the jobs already done: a job's task lists
/// are freed when it ends. Job 1 (one map, one reduce) runs alone and ends; at 100 s two
/// map-only jobs take both containers with their AMs (no `maxAMShare`) and stall as above.
#[test]
fn the_watchdog_counts_no_container_for_a_finished_job() {
    let cluster = rack(2, 1);
    let with_reduce = JobSpec {
        reduces: 1,
        ..map_only(0, 0, 1, 0)
    };
    let jobs = vec![
        with_reduce,
        map_only(100_000, 0, 1, 0),
        map_only(100_000, 0, 1, 0),
    ];
    let unlimited = SimOptions {
        max_am_share: -1.0,
        ..instant_am()
    };
    let Err(error) = run_policy(&cluster, &jobs, "fair", &unlimited, &mut |_, _| {}) else {
        panic!("two AMs on two containers must stall");
    };
    for state in [
        "Containers held: AM 2, map 0, reduce 0 (0 of 2 free)",
        "Jobs: not arrived 0, waiting for an AM container 0, AM starting 0, running 2, done 1",
    ] {
        assert!(error.contains(state), "'{state}' in: {error}");
    }
}

/// Eight containers, one user, three jobs of eight 10 s maps submitted a second apart (three
/// AMs fit in the queue's `maxAMShare`). With FIFO leaf queues a later job's maps wait for the
/// earlier job's, so the jobs end in submission order and the first ends as if alone; a fair
/// leaf queue shares the five map containers between all three.
#[test]
fn fair_fifo_runs_a_users_jobs_in_submission_order() {
    let cluster = rack(4, 2);
    let jobs: Vec<JobSpec> = (0..3)
        .map(|i| map_only(i * 1000, 0, 8, 800 * MIB))
        .collect();
    let finish = |policy: &str| {
        let (_, _, collector) =
            run_policy(&cluster, &jobs, policy, &instant_am(), &mut |_, _| {}).unwrap();
        collector
            .finish_ms
            .iter()
            .map(|f| f.expect("every job finishes"))
            .collect::<Vec<u64>>()
    };
    let fifo = finish("fair-fifo");
    let fair = finish("fair");
    assert!(
        fifo[0] < fifo[1] && fifo[1] < fifo[2],
        "fair-fifo finishes {fifo:?}"
    );
    // Alone, job 1's eight maps take two waves of 11 s on five containers.
    assert!(
        fifo[0] <= 30_000,
        "fair-fifo's first job ends at {}",
        fifo[0]
    );
    assert!(
        fair[0] as f64 >= 1.5 * fifo[0] as f64,
        "fair shares the containers: its first job ends at {} (fair-fifo {})",
        fair[0],
        fifo[0]
    );
}

/// Two racks of one node with two containers; job A's AM and three 20-minute maps hold all
/// four containers while job B's AM waits, so the core is not called for 20 minutes while
/// rack loads are measured every 2 s (1,200 of them for two racks). The core keeps only the
/// latest load per rack, and so does the queue.
#[test]
fn rack_loads_for_a_core_not_being_called_are_coalesced() {
    let cluster = Cluster {
        racks: 2,
        nodes_per_rack: 1,
        ..rack(1, 2)
    };
    let twenty_minutes_of_output = 20 * 60 * 80 * MIB;
    let jobs = vec![
        map_only(0, 0, 3, twenty_minutes_of_output),
        map_only(10_000, 1, 1, 0),
    ];
    let options = SimOptions {
        core_settings: BTreeMap::from([(NETSAT_SOURCE_KEY.to_string(), "feed".to_string())]),
        ..instant_am()
    };
    let (metrics, counters, _) =
        run_policy(&cluster, &jobs, "nas", &options, &mut |_, _| {}).unwrap();
    assert!(metrics.makespan_s > 1200.0, "{}", metrics.makespan_s);
    assert!(counters.offers < 50, "offers {}", counters.offers);
    assert!(
        counters.peak_core_events <= 20,
        "events queued for the core: {}",
        counters.peak_core_events
    );
    assert_eq!(counters.netsat, "feed (with a host agent)");
}

#[test]
fn options_hadoop_would_refuse_are_refused_by_name() {
    let cluster = rack(2, 1);
    let jobs = vec![map_only(0, 0, 1, 0)];
    let cases = [
        (
            SimOptions {
                max_am_share: 1.5,
                ..instant_am()
            },
            "max_am_share 1.5: must be within 0..=1, or -1 to switch the check off",
        ),
        (
            SimOptions {
                delay_locality_threshold_rack: f64::NAN,
                ..instant_am()
            },
            "delay_locality_threshold_rack NaN: must be a finite number",
        ),
    ];
    for (options, message) in cases {
        let error =
            run_policy(&cluster, &jobs, "delay", &options, &mut |_, _| {}).expect_err("refused");
        assert_eq!(error, message);
    }
}
