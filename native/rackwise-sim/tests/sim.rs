//! Correctness of the simulator: hand-computed micro scenarios, conservation over a small
//! workload under every policy, and determinism.

use rackwise_sim::sim::core_engine;
use rackwise_sim::workload::{load_swim, ShuffleClass};
use rackwise_sim::{run_policy, Cluster, JobSpec, SimOptions, WorkloadOptions};
use std::collections::BTreeMap;

const MIB: u64 = 1024 * 1024;

/// 2 racks x 2 nodes, one container per node, 250 Mbps NICs, 100 Mbps rack links, one
/// replica: small enough to follow every event by hand.
fn tiny_cluster() -> Cluster {
    Cluster {
        name: "tiny".into(),
        racks: 2,
        nodes_per_rack: 2,
        containers_per_node: 1,
        nic_mbps: 250.0,
        rack_uplink_mbps: 100.0,
        rack_downlink_mbps: 100.0,
        replication: 1,
        ..Cluster::preset("sw100").unwrap()
    }
}

fn job(submit_ms: u64, input: u64, shuffle: u64, output: u64, maps: u32, reduces: u32) -> JobSpec {
    JobSpec {
        name: "j".into(),
        submit_ms,
        user: 0,
        input_bytes: input,
        shuffle_bytes: shuffle,
        output_bytes: output,
        maps,
        reduces,
        class: ShuffleClass::of_shuffle_bytes(shuffle),
    }
}

/// One map (no input), one reduce fetching 110 MiB across racks at the 100 Mbps rack link.
///
/// Heartbeat phases are 0, 250, 500, 750 ms (nodes n0, n1 on rack 0; n2, n3 on rack 1).
/// * 0: submitted; first heartbeat after 0 is n1's at 250: the AM goes there.
/// * 3250: AM registered (3 s start); next free heartbeat is n2's at 3500: the map goes there.
/// * map: 1 s overhead + 110 MiB spilled at 80 MiB/s (1375 ms) = 2375 ms, done at 5875.
/// * slow-start met; free heartbeats: n0 6000, n2 6500, n3 6750: the reduce goes to n0.
/// * shuffle: 115,343,360 B over n0's NIC (31,250 B/ms), rack 0 down and rack 1 up links
///   (12,500 B/ms each): 9227.47 ms, rounded up to 9228: fetched at 15228.
/// * merge: 1 s + 110 MiB at 40 MiB/s (2750 ms) = 3750 ms: the job ends at 18978.
#[test]
fn one_map_one_reduce_across_racks_finishes_when_computed_by_hand() {
    let cluster = tiny_cluster();
    let jobs = vec![job(0, 0, 110 * MIB, 0, 1, 1)];
    for policy in ["fair", "fifo", "shufflewatcher"] {
        let (metrics, counters, _) = run_policy(
            &cluster,
            &jobs,
            policy,
            &SimOptions::default(),
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(metrics.jobs, 1, "{policy}");
        assert_eq!(metrics.mean_turnaround_s, 18.978, "{policy}");
        assert_eq!(metrics.cross_rack_shuffle_bytes, 110 * MIB, "{policy}");
        assert_eq!(metrics.cross_rack_remote_map_bytes, 0, "{policy}");
        assert_eq!(counters.containers, 3, "{policy}: AM, map, reduce");
    }
}

/// Everything on one node with three containers: the shuffle is node-local traffic over the
/// NIC (250 Mbps = 31,250 B/ms).
/// * AM at 1000 (phase 0, first heartbeat after 0), registered at 4000, map at 5000.
/// * map: 1 s + 64 MiB read at 40 MiB/s (1600) + 64 MiB spilled at 80 MiB/s (800) = 3400 ms,
///   done at 8400; the reduce is placed at the 9000 heartbeat.
/// * shuffle 67,108,864 B at 31,250 B/ms = 2147.48 ms, rounded up: 11148.
/// * merge 1 s + 64 MiB at 40 MiB/s = 2600 ms: 13748.
#[test]
fn a_single_node_job_finishes_when_computed_by_hand() {
    let cluster = Cluster {
        racks: 1,
        nodes_per_rack: 1,
        containers_per_node: 3,
        ..tiny_cluster()
    };
    let jobs = vec![job(0, 64 * MIB, 64 * MIB, 0, 1, 1)];
    let (metrics, _, _) = run_policy(
        &cluster,
        &jobs,
        "fair",
        &SimOptions::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(metrics.mean_turnaround_s, 13.748);
    assert_eq!(metrics.cross_rack_bytes, 0);
    assert_eq!(metrics.map_locality["node_local"], 1.0);
}

/// A small SWIM-format workload with map-only, light and heavy jobs, built in the test so it
/// does not depend on the shared trace folder.
fn small_trace() -> String {
    let mut text = String::new();
    let mut t = 0;
    for i in 0..40u64 {
        t += 3 + (i * 7) % 11;
        let input = [0, 5 * MIB, 300 * MIB, 2048 * MIB, 700][(i % 5) as usize];
        let shuffle = [0, 100, 40 * MIB, 900 * MIB, 3 * MIB][(i % 5) as usize];
        let output = [10 * MIB, 1000, MIB, 500 * MIB, 0][(i % 5) as usize];
        text.push_str(&format!("job{i}\t{t}\t0\t{input}\t{shuffle}\t{output}\n"));
    }
    text
}

fn small_setup() -> (Cluster, Vec<JobSpec>) {
    let cluster = Cluster {
        racks: 4,
        nodes_per_rack: 4,
        ..Cluster::preset("sw100").unwrap()
    };
    let options = WorkloadOptions {
        users: 5,
        ..WorkloadOptions::default()
    };
    let jobs = load_swim(&small_trace(), &cluster, &options).unwrap();
    (cluster, jobs)
}

#[test]
fn every_job_finishes_every_shuffle_byte_is_fetched_once_and_no_node_is_overallocated() {
    let (cluster, jobs) = small_setup();
    let tasks: u64 = jobs
        .iter()
        .map(|j| 1 + j.maps as u64 + j.reduces as u64)
        .sum();
    let shuffle: f64 = jobs
        .iter()
        .filter(|j| j.reduces > 0)
        .map(|j| j.shuffle_bytes as f64)
        .sum();
    for policy in ["fair", "delay", "fifo", "shufflewatcher"] {
        let (metrics, counters, _) = run_policy(
            &cluster,
            &jobs,
            policy,
            &SimOptions::default(),
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(metrics.jobs, jobs.len(), "{policy}: every job finishes");
        assert_eq!(
            counters.containers, tasks,
            "{policy}: one container per AM and task"
        );
        assert_eq!(counters.max_node_overallocation, 0, "{policy}");
        let tolerance = 1e-9 * shuffle;
        assert!(
            (counters.shuffle_produced - shuffle).abs() <= tolerance,
            "{policy}: produced {}",
            counters.shuffle_produced
        );
        assert!(
            (counters.shuffle_fetched - shuffle).abs() <= tolerance,
            "{policy}: fetched {} of {shuffle}",
            counters.shuffle_fetched
        );
        assert!(
            metrics.cross_rack_shuffle_bytes as f64 <= shuffle + 1.0,
            "{policy}"
        );
        assert!(metrics.container_utilization > 0.0 && metrics.container_utilization <= 1.0);
        assert!(metrics.jain_fairness > 0.0 && metrics.jain_fairness <= 1.0);
        // NAS's throughput: all jobs over the whole run.
        let all_jobs = metrics.jobs as f64 * 3600.0 / metrics.makespan_s;
        assert!(
            (metrics.throughput_all_jobs_per_hour - all_jobs).abs() < 1e-3,
            "{policy}: {} vs {all_jobs}",
            metrics.throughput_all_jobs_per_hour
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_metrics_and_another_seed_other_placements() {
    let (cluster, jobs) = small_setup();
    let run = |policy: &str, seed: u64| {
        let options = SimOptions {
            seed,
            ..SimOptions::default()
        };
        let (metrics, _, _) =
            run_policy(&cluster, &jobs, policy, &options, &mut |_, _| {}).unwrap();
        serde_json::to_string(&metrics).unwrap()
    };
    for policy in ["delay", "shufflewatcher"] {
        assert_eq!(run(policy, 7), run(policy, 7), "{policy}");
    }
    assert_ne!(run("fair", 7), run("fair", 8));
}

/// `--queue-setting`: a `<rackwise>` child of queue `root` reaches every user queue's policy,
/// and one the core does not accept fails the run with the core's error.
#[test]
fn queue_settings_reach_every_user_queue_and_bad_ones_are_refused() {
    let cluster = tiny_cluster();
    let window = BTreeMap::from([("starvationWindowMs".to_string(), "0".to_string())]);
    let engine =
        core_engine("shufflewatcher", &cluster, &BTreeMap::new(), &window).expect("accepted");
    assert_eq!(
        engine
            .settings()
            .queue_policy("root.u7")
            .values
            .number("starvationWindowMs"),
        0.0
    );
    let bad = BTreeMap::from([("starvationWindowMs".to_string(), "soon".to_string())]);
    let err = core_engine("shufflewatcher", &cluster, &BTreeMap::new(), &bad)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("starvationWindowMs"), "{err}");
}

#[test]
fn an_unknown_policy_fails_with_the_core_configuration_error_naming_it() {
    let (cluster, jobs) = small_setup();
    let err = run_policy(
        &cluster,
        &jobs,
        "no-such-policy",
        &SimOptions::default(),
        &mut |_, _| {},
    )
    .expect_err("refused");
    assert!(err.contains("no-such-policy"), "{err}");
    assert!(err.contains("is not a policy"), "{err}");
}

#[test]
fn swim_shapes_follow_the_documented_rule() {
    let cluster = Cluster::preset("nas600").unwrap();
    let options = WorkloadOptions {
        scale_from: Some(3000),
        ..WorkloadOptions::default()
    };
    // 10 GiB input scaled by 600/3000 = 2 GiB = 16 blocks of 128 MiB; 1 GiB + 0 output
    // scaled = 204.8 MiB -> round(3.2) = 3 reduces; a map-only job keeps 0 reduces. A map-only
    // job with little input and 5 GiB of output (1 GiB scaled) gets SWIM's 16 writers of
    // 64 MiB as maps; with 5 TiB (1 TiB scaled: 16,384 writers, more than the 600 nodes) it
    // gets SWIM's cap of nodes / 5 = 120.
    let text = format!(
        "job0\t5\t5\t{}\t{}\t0\njob1\t6\t1\t100\t0\t100\n\
         job2\t7\t1\t100\t0\t{}\njob3\t8\t1\t100\t0\t{}\n",
        10u64 << 30,
        1u64 << 30,
        5u64 << 30,
        5u64 << 40
    );
    let jobs = load_swim(&text, &cluster, &options).unwrap();
    assert_eq!((jobs[0].maps, jobs[0].reduces), (16, 3));
    assert_eq!(jobs[0].input_bytes, 2 << 30);
    assert_eq!((jobs[1].maps, jobs[1].reduces), (1, 0));
    assert_eq!((jobs[2].maps, jobs[2].reduces), (16, 0));
    assert_eq!((jobs[3].maps, jobs[3].reduces), (120, 0));
    assert_eq!(
        jobs[0].class,
        ShuffleClass::Heavy,
        "class from the recorded bytes"
    );
    assert_eq!(jobs[1].user, 1, "round-robin users");
}

/// The MR AM's reduce ramp-up: a job with more reduces than the cluster has containers, whose
/// reduces would otherwise be asked at slow-start and fill every container while its maps
/// wait (a deadlock), finishes under every policy.
#[test]
fn reduces_never_starve_their_own_maps() {
    let cluster = tiny_cluster();
    let jobs = vec![job(0, 20 * 64 * MIB, 40 * MIB, MIB, 20, 8)];
    for policy in ["fair", "delay", "fifo", "shufflewatcher", "nas"] {
        let (metrics, _, _) = run_policy(
            &cluster,
            &jobs,
            policy,
            &SimOptions::default(),
            &mut |_, _| {},
        )
        .expect("policy runs");
        assert_eq!(metrics.jobs, 1, "{policy}");
        assert!(
            metrics.makespan_s < 3600.0,
            "{policy}: {}",
            metrics.makespan_s
        );
    }
}
