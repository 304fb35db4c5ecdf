//! `rackwise-sim compare`: runs policies over one workload on one cluster and prints metrics.

use rackwise_sim::metrics::PolicyMetrics;
use rackwise_sim::sim::{core_engine, Policy, SimOptions};
use rackwise_sim::{plot, run_policy, workload, Cluster, WorkloadOptions};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: rackwise-sim compare --trace PATH --cluster PRESET_OR_FILE \
--policies fair,delay,shufflewatcher,nas [--scale-from N] [--seed N] [--users N] [--hours H] \
--format json|table [--plot DIR] [--random-users] [--bytes-per-reduce-mib N] \
[--core-setting KEY=VALUE]... [--queue-setting KEY=VALUE]... [--quiet]

presets: sw100, nas600, nas40; baselines: fair, delay, fifo; any other name is a policy of the
Rackwise core (its configuration error is reported if it does not know the name).
A trace ending in .json is a synthetic mix; anything else is a SWIM .tsv trace.";

struct Args {
    trace: String,
    cluster: String,
    policies: Vec<String>,
    scale_from: Option<u64>,
    seed: u64,
    users: Option<usize>,
    hours: Option<f64>,
    json: bool,
    plot: Option<String>,
    random_users: bool,
    bytes_per_reduce_mib: u64,
    core_settings: BTreeMap<String, String>,
    queue_settings: BTreeMap<String, String>,
    quiet: bool,
}

fn parse_args(raw: &[String]) -> Result<Args, String> {
    let mut it = raw.iter();
    match it.next().map(String::as_str) {
        Some("compare") => {}
        Some(other) => return Err(format!("unknown command '{other}'")),
        None => return Err("missing command".into()),
    }
    let mut args = Args {
        trace: String::new(),
        cluster: String::new(),
        policies: vec![],
        scale_from: None,
        seed: 1,
        users: None,
        hours: None,
        json: false,
        plot: None,
        random_users: false,
        bytes_per_reduce_mib: 64,
        core_settings: BTreeMap::new(),
        queue_settings: BTreeMap::new(),
        quiet: false,
    };
    let mut format = None;
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        fn number<T: std::str::FromStr>(flag: &str, v: String) -> Result<T, String> {
            v.parse()
                .map_err(|_| format!("{flag}: '{v}' is not a valid number"))
        }
        match flag.as_str() {
            "--trace" => args.trace = value()?,
            "--cluster" => args.cluster = value()?,
            "--policies" => {
                args.policies = value()?
                    .split(',')
                    .map(|p| p.trim().to_string())
                    .filter(|p| !p.is_empty())
                    .collect()
            }
            "--scale-from" => args.scale_from = Some(number(flag, value()?)?),
            "--seed" => args.seed = number(flag, value()?)?,
            "--users" => args.users = Some(number(flag, value()?)?),
            "--hours" => args.hours = Some(number(flag, value()?)?),
            "--format" => format = Some(value()?),
            "--plot" => args.plot = Some(value()?),
            "--random-users" => args.random_users = true,
            "--bytes-per-reduce-mib" => args.bytes_per_reduce_mib = number(flag, value()?)?,
            "--core-setting" | "--queue-setting" => {
                let kv = value()?;
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| format!("{flag} expects KEY=VALUE, got '{kv}'"))?;
                let into = if flag == "--core-setting" {
                    &mut args.core_settings
                } else {
                    &mut args.queue_settings
                };
                into.insert(k.to_string(), v.to_string());
            }
            "--quiet" => args.quiet = true,
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    if args.trace.is_empty() || args.cluster.is_empty() || args.policies.is_empty() {
        return Err("--trace, --cluster and --policies are required".into());
    }
    args.json = match format.as_deref() {
        Some("json") => true,
        Some("table") => false,
        Some(other) => return Err(format!("--format must be json or table, got '{other}'")),
        None => return Err("--format json|table is required".into()),
    };
    if args.users == Some(0) || args.bytes_per_reduce_mib == 0 {
        return Err("--users and --bytes-per-reduce-mib must be positive".into());
    }
    Ok(args)
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&raw) {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("rackwise-sim: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rackwise-sim: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let cluster = Cluster::load(&args.cluster)?;
    let is_mix = args.trace.ends_with(".json");
    let options = WorkloadOptions {
        scale_from: args.scale_from,
        // ShuffleWatcher ran 30 users; NAS's trace simulation 200.
        users: args.users.unwrap_or(if is_mix { 30 } else { 200 }),
        random_users: args.random_users,
        seed: args.seed,
        hours: args.hours,
        bytes_per_reduce: args.bytes_per_reduce_mib * 1024 * 1024,
    };
    // Every policy name is checked before anything runs: an unknown one fails the command with
    // the core's own configuration error, naming the policy and the names it accepts.
    for name in &args.policies {
        if let Policy::Core(name) = Policy::parse(name) {
            core_engine(&name, &cluster, &args.core_settings, &args.queue_settings)
                .map_err(|e| format!("policy '{name}' is not a baseline (fair, delay, fifo) and the core refused it: {e}"))?;
        }
    }
    let jobs = workload::load(&args.trace, &cluster, &options)?;
    let sim_options = SimOptions {
        seed: args.seed,
        core_settings: args.core_settings.clone(),
        queue_settings: args.queue_settings.clone(),
        ..SimOptions::default()
    };

    let started = Instant::now();
    let progress: Vec<(AtomicU64, AtomicU64)> = args
        .policies
        .iter()
        .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
        .collect();
    let finished = AtomicBool::new(false);
    let total_jobs = jobs.len() as u64;
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = args
            .policies
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let (cluster, jobs, sim_options, progress) =
                    (&cluster, &jobs, &sim_options, &progress);
                scope.spawn(move || {
                    let t0 = Instant::now();
                    let result = run_policy(cluster, jobs, name, sim_options, &mut |_, done| {
                        progress[i].0.store(done as u64, Ordering::Relaxed);
                    });
                    progress[i].0.store(total_jobs, Ordering::Relaxed);
                    progress[i].1.store(1, Ordering::Relaxed);
                    (result, t0.elapsed())
                })
            })
            .collect();
        let bar = scope.spawn(|| {
            let mut shown = false;
            while !finished.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                // Only runs longer than a second get a bar, and only on a terminal.
                if args.quiet
                    || !std::io::stderr().is_terminal()
                    || started.elapsed() < Duration::from_secs(1)
                {
                    continue;
                }
                shown = true;
                let parts: Vec<String> = args
                    .policies
                    .iter()
                    .zip(&progress)
                    .map(|(name, (done, _))| {
                        let done = done.load(Ordering::Relaxed);
                        let width = 20;
                        let filled = (done * width / total_jobs.max(1)) as usize;
                        format!(
                            "{name} [{}{}] {done}/{total_jobs}",
                            "#".repeat(filled),
                            ".".repeat(width as usize - filled)
                        )
                    })
                    .collect();
                eprint!(
                    "\r{}  {:.0}s ",
                    parts.join("  "),
                    started.elapsed().as_secs_f64()
                );
                let _ = std::io::stderr().flush();
            }
            if shown {
                eprintln!();
            }
        });
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("simulation thread"))
            .collect();
        finished.store(true, Ordering::Relaxed);
        let _ = bar.join();
        results
    });

    let mut metrics: BTreeMap<String, PolicyMetrics> = BTreeMap::new();
    let mut collectors = Vec::new();
    for (name, (result, elapsed)) in args.policies.iter().zip(results) {
        let (m, counters, collector) = result?;
        if !args.quiet {
            eprintln!(
                "{name}: {} jobs, {} containers, {} offers, {} events in {:.1}s wall (core: {:.1}s)",
                m.jobs,
                counters.containers,
                counters.offers,
                counters.events,
                elapsed.as_secs_f64(),
                counters.core_time.as_secs_f64()
            );
        }
        collectors.push((name.clone(), collector));
        metrics.insert(name.clone(), m);
    }
    if let Some(dir) = &args.plot {
        plot::write_all(dir, &metrics, &collectors, &jobs)?;
    }
    if args.json {
        let document = json!({
            "policies": metrics,
            "setup": {
                "trace": args.trace,
                "cluster": cluster.name,
                "jobs": jobs.len(),
                "seed": args.seed,
                "users": options.users,
                "scale_from": args.scale_from,
                "hours": args.hours,
            }
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&document).map_err(|e| e.to_string())?
        );
    } else {
        print_table(&metrics);
    }
    Ok(())
}

fn print_table(metrics: &BTreeMap<String, PolicyMetrics>) {
    println!(
        "{:<16} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>8} {:>6} {:>10} {:>6}",
        "policy",
        "jobs",
        "jobs/h",
        "all jobs/h",
        "mean s",
        "median s",
        "p95 s",
        "xrack GiB",
        "xr-shfl GiB",
        "congest",
        "jain",
        "makespan s",
        "util"
    );
    let gib = (1u64 << 30) as f64;
    for (name, m) in metrics {
        println!(
            "{:<16} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>12.1} {:>12.1} {:>8} {:>6.3} {:>10.0} {:>6.3}",
            name,
            m.jobs,
            m.throughput_jobs_per_hour,
            m.throughput_all_jobs_per_hour,
            m.mean_turnaround_s,
            m.median_turnaround_s,
            m.p95_turnaround_s,
            m.cross_rack_bytes as f64 / gib,
            m.cross_rack_shuffle_bytes as f64 / gib,
            m.congestion_events,
            m.jain_fairness,
            m.makespan_s,
            m.container_utilization
        );
    }
    for (name, m) in metrics {
        let classes: Vec<String> = m
            .turnaround_by_class
            .iter()
            .map(|(c, t)| {
                format!(
                    "{c}: n={} mean={:.1}s p95={:.1}s",
                    t.jobs, t.mean_s, t.p95_s
                )
            })
            .collect();
        println!("{name:<16} {}", classes.join("  "));
    }
}
