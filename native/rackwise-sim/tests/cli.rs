//! The command line: parse errors, the offered load, the sweep's table and its charts. Each
//! test runs the real binary on a workload of a few jobs on a 4-node cluster (well under a
//! second per run).

use rackwise_sim::workload;
use rackwise_sim::{Cluster, WorkloadOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MIB: u64 = 1024 * 1024;

/// A fresh directory for one test under cargo's scratch space for integration tests.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 12 SWIM rows, one every 5 s, each with a shuffle; and a 2 × 2 node cluster.
fn tiny_inputs(dir: &Path) -> (String, String) {
    let mut trace = String::new();
    for i in 0..12u64 {
        let input = (64 + 64 * (i % 3)) * MIB;
        trace.push_str(&format!(
            "job{i}\t{}\t5\t{input}\t{}\t{}\n",
            i * 5,
            input / 2,
            MIB
        ));
    }
    let trace_path = dir.join("tiny.tsv");
    std::fs::write(&trace_path, trace).unwrap();
    let cluster_path = dir.join("tiny-cluster.json");
    std::fs::write(
        &cluster_path,
        r#"{"name": "tiny", "racks": 2, "nodes_per_rack": 2, "containers_per_node": 4}"#,
    )
    .unwrap();
    (
        trace_path.display().to_string(),
        cluster_path.display().to_string(),
    )
}

fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rackwise-sim"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn parse_errors_name_the_flag_and_the_value() {
    let dir = scratch("parse_errors");
    let (trace, cluster) = tiny_inputs(&dir);
    let base = [
        "--trace",
        &trace,
        "--cluster",
        &cluster,
        "--policies",
        "fair",
    ];
    let cases: [(&str, Vec<&str>, &str, &str); 5] = [
        (
            "compare",
            vec!["--load", "0", "--format", "table"],
            "--load",
            "'0'",
        ),
        (
            "compare",
            vec!["--load", "fast", "--format", "table"],
            "--load",
            "'fast'",
        ),
        ("compare", vec!["--format", "xml"], "--format", "'xml'"),
        (
            "sweep",
            vec!["--loads", "1,-2", "--seeds", "1"],
            "--loads",
            "'-2'",
        ),
        (
            "sweep",
            vec!["--loads", "1", "--seeds", "1,x"],
            "--seeds",
            "'x'",
        ),
    ];
    for (command, extra, flag, value) in cases {
        let mut args = vec![command];
        args.extend(base);
        args.extend(&extra);
        let out = sim(&args);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(flag), "{args:?} names {flag}: {message}");
        assert!(message.contains(value), "{args:?} names {value}: {message}");
    }
}

#[test]
fn load_divides_every_arrival_keeping_milliseconds() {
    let dir = scratch("load_divides");
    let (trace, _) = tiny_inputs(&dir);
    let cluster = Cluster::preset("nas40").unwrap();
    let at = |load: f64| -> Vec<u64> {
        let options = WorkloadOptions {
            load,
            ..WorkloadOptions::default()
        };
        workload::load(&trace, &cluster, &options)
            .unwrap()
            .iter()
            .map(|j| j.submit_ms)
            .collect()
    };
    let (one, eight) = (at(1.0), at(8.0));
    assert_eq!(one[1], 5_000);
    // 5 s ÷ 8 = 625 ms: not rounded to whole seconds.
    assert_eq!(eight[1], 625);
    for (a, b) in one.iter().zip(&eight) {
        assert_eq!(*b, (*a as f64 / 8.0).round() as u64);
    }
    let options = WorkloadOptions {
        load: -1.0,
        ..WorkloadOptions::default()
    };
    let error = workload::load(&trace, &cluster, &options).unwrap_err();
    assert!(error.contains("'-1'"), "{error}");
}

#[test]
fn compare_reports_the_load_and_the_offer_counters_in_its_json() {
    let dir = scratch("compare_json");
    let (trace, cluster) = tiny_inputs(&dir);
    let out = sim(&[
        "compare",
        "--trace",
        &trace,
        "--cluster",
        &cluster,
        "--policies",
        "fair,shufflewatcher",
        "--load",
        "2.5",
        "--format",
        "json",
        "--quiet",
        "--plot",
        dir.join("plots").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        out.stderr.is_empty(),
        "--quiet prints nothing: {}",
        stderr(&out)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["setup"]["load"], 2.5);
    // The last arrival at 55 s ÷ 2.5 = 22 s.
    assert_eq!(doc["policies"]["fair"]["arrival_window_s"], 22.0);
    for policy in ["fair", "shufflewatcher"] {
        let m = &doc["policies"][policy];
        assert_eq!(m["jobs"], 12, "{policy}");
        let offers = m["offers"].as_u64().unwrap();
        assert!(offers > 0 && m["offers_placing_nothing"].as_u64().unwrap() <= offers);
        assert!(m["map_locality"]["node_local"].is_number());
    }
    assert!(doc["policies"]["fair"]["preferred_racks"].is_null());
    assert_eq!(doc["policies"]["fair"]["guard_lifts"], 0);
    // SAMP chose racks for every job but perhaps the last: it arrives as the others finish,
    // and SAMP's capacity rule gives a job that shares the cluster with few others a fair share
    // beyond one rack, so every rack may be its set (how few depends on the run's timing).
    let preferred = &doc["policies"]["shufflewatcher"]["preferred_racks"];
    let chose = preferred["jobs"].as_u64().unwrap();
    assert!(
        (11..=12).contains(&chose),
        "SAMP chose racks for {chose} of 12 jobs: {preferred}"
    );
    let share = preferred["byte_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&share), "{share}");
    for chart in ["throughput.svg", "cdf-heavy.svg", "cross-rack.svg"] {
        let svg = std::fs::read_to_string(dir.join("plots").join(chart)).unwrap();
        assert!(svg.starts_with("<svg"), "{chart}");
        assert!(svg.contains("shufflewatcher"), "{chart} names the policies");
    }
}

#[test]
fn sweep_prints_mean_and_spread_per_policy_and_load_and_writes_its_charts() {
    let dir = scratch("sweep");
    let (trace, cluster) = tiny_inputs(&dir);
    let plots = dir.join("plots");
    let out = sim(&[
        "sweep",
        "--trace",
        &trace,
        "--cluster",
        &cluster,
        "--policies",
        "fair,delay,shufflewatcher",
        "--loads",
        "1,4",
        "--seeds",
        "1,2",
        "--plot",
        plots.to_str().unwrap(),
        "--threads",
        "2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(table.contains("mean [min–max] over seeds"), "{table}");
    for policy in ["fair", "delay", "shufflewatcher"] {
        for load in ["1", "4"] {
            let row = table
                .lines()
                .find(|l| {
                    let mut words = l.split_whitespace();
                    words.next() == Some(policy) && words.next() == Some(load)
                })
                .unwrap_or_else(|| panic!("no row for {policy} at {load}: {table}"));
            assert_eq!(
                row.matches('[').count(),
                6,
                "six metrics with spread: {row}"
            );
        }
    }
    let sustainable = table
        .split("max sustainable load")
        .nth(1)
        .unwrap_or_else(|| panic!("no max sustainable load section: {table}"));
    for policy in ["fair", "delay", "shufflewatcher"] {
        assert!(
            sustainable
                .lines()
                .any(|l| l.trim_start().starts_with(policy)),
            "{policy}: {sustainable}"
        );
    }
    assert!(table.contains("best stock"), "{table}");
    assert!(table.contains("shufflewatcher ×"), "{table}");
    // Every run was announced on stderr (not a terminal, so as plain lines).
    assert_eq!(
        stderr(&out).matches(" wall").count(),
        12,
        "{}",
        stderr(&out)
    );
    for chart in ["sweep-throughput.svg", "sweep-p95.svg"] {
        let svg = std::fs::read_to_string(plots.join(chart)).unwrap();
        assert!(svg.starts_with("<svg"), "{chart}");
        assert!(svg.contains("offered load"), "{chart} has its x axis title");
        assert!(svg.contains("shufflewatcher"), "{chart} has its legend");
        assert!(
            svg.contains(
                "tiny.tsv: 12 jobs, 200 users · tiny · input from random nodes · seeds 1, 2"
            ),
            "{chart} states what was run under its title"
        );
    }
}

#[test]
fn every_listed_baseline_parses_as_a_baseline_and_a_core_name_does_not() {
    use rackwise_sim::sim::{Policy, BASELINES};
    for name in BASELINES {
        assert!(Policy::parse(name).is_baseline(), "{name}");
    }
    assert!(!Policy::parse("shufflewatcher").is_baseline());
}

/// The model flags: the defaults are Hadoop 3.4's and a run's JSON says which model it used;
/// a departure is named on the command line, and a value Hadoop would refuse is refused.
#[test]
fn model_flags_reach_the_run_and_bad_values_are_refused_by_name() {
    let dir = scratch("model_flags");
    let (trace, cluster) = tiny_inputs(&dir);
    let run = |extra: &[&str]| {
        let mut args = vec![
            "compare",
            "--trace",
            &trace,
            "--cluster",
            &cluster,
            "--policies",
            "fair",
            "--format",
            "json",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        sim(&args)
    };
    let model = |out: &Output| {
        assert!(out.status.success(), "{}", stderr(out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["setup"]["model"].clone()
    };
    let hadoop = model(&run(&[]));
    assert_eq!(hadoop["assign_multiple"], false);
    assert_eq!(hadoop["max_am_share"], 0.5);
    assert_eq!(hadoop["am_round_trip"], true);
    assert_eq!(hadoop["reducer_preemption"], true);

    let old = model(&run(&[
        "--fill-node",
        "--instant-am",
        "--max-am-share",
        "-1",
        "--no-reducer-preemption",
    ]));
    assert_eq!(old["fill_node"], true);
    assert_eq!(old["am_round_trip"], false);
    assert_eq!(old["max_am_share"], -1.0);
    assert_eq!(old["reducer_preemption"], false);

    assert_eq!(
        hadoop["placement_oracle"],
        serde_json::json!({"local_reads": false, "local_shuffle_share": 0.0}),
        "a run is a model run unless it says otherwise"
    );
    let bound = model(&run(&[
        "--oracle-local-reads",
        "--oracle-local-shuffle",
        "0.3",
    ]));
    assert_eq!(
        bound["placement_oracle"],
        serde_json::json!({"local_reads": true, "local_shuffle_share": 0.3})
    );
    assert_eq!(
        hadoop["oracle_ratio_hints"], false,
        "a run is a model run unless it says otherwise"
    );
    assert_eq!(
        model(&run(&["--oracle-ratio-hints"]))["oracle_ratio_hints"],
        true
    );
    let share = run(&["--oracle-local-shuffle", "1.2"]);
    assert_eq!(share.status.code(), Some(2));
    assert!(
        stderr(&share).contains("--oracle-local-shuffle") && stderr(&share).contains("'1.2'"),
        "{}",
        stderr(&share)
    );

    let refused = run(&["--max-am-share", "1.5"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("max_am_share 1.5"),
        "{}",
        stderr(&refused)
    );

    // A core key without its prefix or misspelt would otherwise run as if it were not given.
    for (given, meant) in [
        (
            "netsat.threshold=0.9",
            "yarn.scheduler.rackwise.netsat.threshold",
        ),
        (
            "yarn.scheduler.rackwise.netsat.treshold=0.9",
            "yarn.scheduler.rackwise.netsat.threshold",
        ),
    ] {
        let refused = run(&["--core-setting", given]);
        assert_eq!(refused.status.code(), Some(1), "{given}");
        assert!(
            stderr(&refused).contains(&format!(
                "--core-setting {given}: not a key the Rackwise core reads (did you mean {meant}?)"
            )),
            "{}",
            stderr(&refused)
        );
    }
    // `run` names only the baseline `fair`, which never calls the core.
    for setting in [
        [
            "--core-setting",
            "yarn.scheduler.rackwise.netsat.threshold=0.9",
        ],
        ["--queue-setting", "rackWaitMs=5000"],
    ] {
        let refused = run(&setting);
        assert_eq!(refused.status.code(), Some(1), "{setting:?}");
        assert!(
            stderr(&refused).contains("names only baselines (fair): they would change nothing"),
            "{}",
            stderr(&refused)
        );
    }
}

/// `--seeds 1,2` runs each seed and ends with every policy's means over them; a core policy's
/// row carries its ratios to the best stock baseline's means, which are the seeds' runs
/// averaged (checked against the per-seed documents).
#[test]
fn compare_over_seeds_reports_the_means_and_the_ratio_to_the_best_stock_baseline() {
    let dir = scratch("compare_seeds");
    let (trace, cluster) = tiny_inputs(&dir);
    let out = sim(&[
        "compare",
        "--trace",
        &trace,
        "--cluster",
        &cluster,
        "--policies",
        "fair,delay,drmjs",
        "--seeds",
        "1,2",
        "--format",
        "json",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["setup"]["seed"], 2);
    let mean = |policy: &str, field: &str| {
        runs.iter()
            .map(|r| r["policies"][policy][field].as_f64().unwrap())
            .sum::<f64>()
            / 2.0
    };
    let means = &doc["seed_means"];
    let best = mean("fair", "mean_turnaround_s").min(mean("delay", "mean_turnaround_s"));
    let ratio = means["drmjs"]["turnaround_vs_best_stock"].as_f64().unwrap();
    assert!(
        (ratio - mean("drmjs", "mean_turnaround_s") / best).abs() < 1e-9,
        "{ratio}"
    );
    assert!(means["fair"]["turnaround_vs_best_stock"].is_null());
    assert!(means["delay"]["makespan_s"].as_f64().unwrap() > 0.0);
}
