//! `rackwise-sim compare` runs policies over one workload on one cluster and prints metrics;
//! `rackwise-sim sweep` runs every (policy, offered load, seed) and summarises them;
//! `rackwise-sim fresh-static` prints FRESH's best static map/reduce split for a batch.

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use rackwise_core::policy::fresh::JobsPerPhase;
mod allocator;

use rackwise_sim::dp_workload;
use rackwise_sim::fresh_static::{self, BatchFile};
use rackwise_sim::metrics::{Collector, PolicyMetrics};
use rackwise_sim::sim::{self, check_core_settings, core_engine, Policy, BASELINES};
use rackwise_sim::sweep::{self, Run};
use rackwise_sim::workload::check_load;
use rackwise_sim::{plot, run_policy, workload, Cluster, JobSpec, SimOptions, WorkloadOptions};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// A simulated day allocates and frees tens of millions of small values; see the workspace
/// manifest for why this allocator.
#[global_allocator]
static ALLOCATOR: allocator::Mimalloc = allocator::Mimalloc;

fn after_help() -> String {
    format!(
        "presets: {}; baselines: {};\n\
         the FRESH paper's baselines: {};\n\
         any other name is a policy of the Rackwise core (its configuration error is\n\
         reported if it does not know the name).\n\
         A trace ending in .batch.json is a profiled batch, in .json a synthetic mix;\n\
         anything else is a SWIM .tsv trace.",
        Cluster::PRESETS.join(", "),
        BASELINES.join(", "),
        sim::PAPER_BASELINES
    )
}

#[derive(Parser)]
#[command(
    name = "rackwise-sim",
    about = "Trace-driven YARN cluster simulator that drives the real Rackwise decision core",
    after_help = after_help()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs policies over one workload on one cluster and prints their metrics.
    #[command(after_help = after_help())]
    Compare(CompareArgs),
    /// Runs every (policy, load, seed), prints mean and min–max spread over seeds per policy
    /// and load, each policy's maximum sustainable load and the best stock baseline.
    #[command(after_help = after_help())]
    Sweep(SweepArgs),
    /// FRESH-static (paper Algorithm 1): the best fixed map/reduce split of the containers and
    /// the job order (Johnson's rule) for a batch profile file; see docs/fresh.md.
    FreshStatic(FreshStaticArgs),
}

#[derive(Args)]
struct FreshStaticArgs {
    /// Batch profile: JSON {"jobs": [{"name", "maps", "reduces", "map_s", "reduce_s"}, ...]}.
    #[arg(long, value_name = "PATH")]
    jobs: String,
    /// Containers to split between maps and reduces (the paper's S slots).
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u32).range(1..))]
    slots: u32,
    /// k, most jobs in each phase at once: a whole number, half or all.
    #[arg(long, value_name = "K", default_value = "all", value_parser = JobsPerPhase::parse)]
    k: JobsPerPhase,
    /// Also print the makespan of every split.
    #[arg(long)]
    splits: bool,
}

/// What `compare` and `sweep` share: the workload, the cluster, the policies and their settings.
#[derive(Args)]
struct Setup {
    /// SWIM .tsv trace or .json synthetic mix.
    #[arg(long, value_name = "PATH")]
    trace: String,
    /// Cluster preset (listed below) or JSON cluster file.
    #[arg(long, value_name = "PRESET_OR_FILE")]
    cluster: String,
    /// Comma-separated policies, e.g. fair,delay,shufflewatcher,nas.
    #[arg(long, value_name = "P1,P2,...", value_delimiter = ',', required = true, value_parser = policy_name)]
    policies: Vec<String>,
    /// Origin cluster size (nodes) for SWIM's byte scaling; bytes are kept as recorded without it.
    #[arg(long, value_name = "N")]
    scale_from: Option<u64>,
    /// Users the jobs are spread over [default: 30 for a mix, 200 for a SWIM trace].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    users: Option<u64>,
    /// Keep only the jobs submitted in the trace's first H hours (before --load compresses them).
    #[arg(long, value_name = "H")]
    hours: Option<f64>,
    /// Assign users at random (seeded) instead of round-robin.
    #[arg(long)]
    random_users: bool,
    /// SWIM's bytes per reduce, MiB.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..))]
    bytes_per_reduce_mib: u64,
    /// A `yarn.scheduler.rackwise.*` setting for the core (repeatable); a key the core does not read is refused.
    #[arg(long = "core-setting", value_name = "KEY=VALUE", value_parser = key_value)]
    core_settings: Vec<(String, String)>,
    /// A `<rackwise>` setting of queue root, inherited by every user queue (repeatable).
    #[arg(long = "queue-setting", value_name = "KEY=VALUE", value_parser = key_value)]
    queue_settings: Vec<(String, String)>,
    #[command(flatten)]
    model: ModelArgs,
    /// Write charts (SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<String>,
    /// No progress bars and no per-run summary on stderr.
    #[arg(long)]
    quiet: bool,
}

/// How the simulated Hadoop behaves. The defaults are Hadoop 3.4's; each flag names a
/// documented departure (docs/simulator.md, "Fidelity to Hadoop 3.4"), including the
/// simulator's older model, so that no comparison changes the model silently.
#[derive(Args)]
struct ModelArgs {
    /// FairScheduler `assignmultiple`: a node heartbeat may place more than one container.
    #[arg(long)]
    assign_multiple: bool,
    /// FairScheduler `maxassign` (with --assign-multiple); -1: no fixed cap.
    #[arg(long, value_name = "N", default_value_t = -1, allow_negative_numbers = true)]
    max_assign: i32,
    /// With --assign-multiple, no `dynamic.max.assign` (at most half the node's free
    /// resources per heartbeat).
    #[arg(long)]
    no_dynamic_max_assign: bool,
    /// Every heartbeat fills every free container (the simulator's model before Hadoop 3.4
    /// fidelity).
    #[arg(long)]
    fill_node: bool,
    /// `maxAMShare` of every user queue, 0..=1; -1 switches the check off.
    #[arg(long, value_name = "SHARE", default_value_t = sim::MAX_AM_SHARE, allow_negative_numbers = true)]
    max_am_share: f64,
    /// The delay baseline's `locality.threshold.node` (missed opportunities ÷ nodes).
    #[arg(long, value_name = "F", default_value_t = sim::DELAY_LOCALITY_THRESHOLD_NODE)]
    delay_threshold_node: f64,
    /// The delay baseline's `locality.threshold.rack`.
    #[arg(long, value_name = "F", default_value_t = sim::DELAY_LOCALITY_THRESHOLD_RACK)]
    delay_threshold_rack: f64,
    /// Stop a run with no progress for this many simulated seconds while work is pending;
    /// 0: never.
    #[arg(long, value_name = "S", default_value_t = sim::WATCHDOG_MS / 1000)]
    watchdog_s: u64,
    /// The MR AM's asks and grants take effect at once, without its allocate round-trip (the
    /// simulator's model before Hadoop 3.4 fidelity).
    #[arg(long)]
    instant_am: bool,
    /// `mapreduce.job.reducer.preempt.delay.sec` [default: Hadoop's 0].
    #[arg(long, value_name = "S", conflicts_with = "no_reducer_preemption")]
    reducer_preempt_delay_s: Option<u64>,
    /// No reducer preemption at all, not even the unconditional one after 300 s.
    #[arg(long)]
    no_reducer_preemption: bool,
    /// No speculative execution (`mapreduce.map.speculative=false`): the simulator's model
    /// before it modelled the AM's speculator.
    #[arg(long)]
    no_speculation: bool,
    /// A bound, not a model (docs/simulator.md, "The placement oracle"): every map reads its
    /// split as from its own node's disk, whatever node it runs on.
    #[arg(long)]
    oracle_local_reads: bool,
    /// A bound, not a model: this share (0 to 1) of every partition a reduce fetches from
    /// another rack takes the rack-local path instead (1: no cross-rack shuffle at all).
    #[arg(long, value_name = "SHARE", value_parser = share_of_one)]
    oracle_local_shuffle: Option<f64>,
    /// A bound, not a model: every job that reads input is submitted with its true
    /// shuffle/input ratio in the `rackwise.shuffle-ratio` tag (a perfect predictor for the
    /// core's policies; the baselines ignore it).
    #[arg(long)]
    oracle_ratio_hints: bool,
    /// Each job's input was written from random nodes of W racks drawn for the job (a dataset
    /// loaded or produced on W racks); 0: every block from a random node of the cluster.
    #[arg(long, value_name = "W", default_value_t = 0)]
    input_racks: usize,
}

impl ModelArgs {
    /// Applies the flags to the Hadoop 3.4 defaults.
    fn apply(&self, options: &mut SimOptions) {
        options.heartbeat_assignment = sim::HeartbeatAssignment {
            assign_multiple: self.assign_multiple,
            max_assign: self.max_assign,
            dynamic_max_assign: !self.no_dynamic_max_assign,
            fill_node: self.fill_node,
        };
        options.max_am_share = self.max_am_share;
        options.delay_locality_threshold_node = self.delay_threshold_node;
        options.delay_locality_threshold_rack = self.delay_threshold_rack;
        options.watchdog_ms = self.watchdog_s * 1000;
        options.am.round_trip = !self.instant_am;
        if self.no_reducer_preemption {
            options.am.reducer_preempt_delay_ms = None;
            options.am.reducer_unconditional_preempt_delay_ms = None;
        } else if let Some(delay) = self.reducer_preempt_delay_s {
            options.am.reducer_preempt_delay_ms = Some(delay * 1000);
        }
        if self.no_speculation {
            options.am.speculator = None;
        }
        options.placement_oracle = self.placement_oracle();
        options.oracle_ratio_hints = self.oracle_ratio_hints;
        options.input_racks = self.input_racks;
    }

    fn placement_oracle(&self) -> sim::PlacementOracle {
        sim::PlacementOracle {
            local_reads: self.oracle_local_reads,
            local_shuffle_share: self.oracle_local_shuffle.unwrap_or(0.0),
        }
    }

    /// The model a run used, for its JSON.
    fn describe(&self) -> serde_json::Value {
        let oracle = self.placement_oracle();
        json!({
            "assign_multiple": self.assign_multiple,
            "max_assign": self.max_assign,
            "dynamic_max_assign": !self.no_dynamic_max_assign,
            "fill_node": self.fill_node,
            "max_am_share": self.max_am_share,
            "delay_threshold_node": self.delay_threshold_node,
            "delay_threshold_rack": self.delay_threshold_rack,
            "am_round_trip": !self.instant_am,
            "reducer_preemption": !self.no_reducer_preemption,
            "reducer_preempt_delay_s": self.reducer_preempt_delay_s,
            "map_speculation": !self.no_speculation,
            "input_racks": self.input_racks,
            "placement_oracle": {
                "local_reads": oracle.local_reads,
                "local_shuffle_share": oracle.local_shuffle_share,
            },
            "oracle_ratio_hints": self.oracle_ratio_hints,
        })
    }
}

#[derive(Args)]
struct CompareArgs {
    #[command(flatten)]
    setup: Setup,
    /// Seed, or seeds (`--seeds 1,2,3`): each seed's table, then every policy's seed means
    /// and their ratio to the best stock baseline's.
    #[arg(
        long,
        visible_alias = "seeds",
        value_name = "N1,N2,...",
        value_delimiter = ',',
        default_value = "1"
    )]
    seed: Vec<u64>,
    /// Offered load X: arrival times are divided by X.
    #[arg(long, value_name = "X", default_value_t = 1.0, value_parser = load_factor)]
    load: f64,
    #[arg(long, value_enum)]
    format: Format,
}

#[derive(Args)]
struct SweepArgs {
    #[command(flatten)]
    setup: Setup,
    /// Offered loads X (arrival times ÷ X), e.g. 1,2,4,6,8,12,16.
    #[arg(long, value_name = "X1,X2,...", value_delimiter = ',', required = true, value_parser = load_factor)]
    loads: Vec<f64>,
    /// Seeds, e.g. 1,2,3.
    #[arg(long, value_name = "N1,N2,...", value_delimiter = ',', required = true)]
    seeds: Vec<u64>,
    /// Runs at once [default: the available cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    threads: Option<u64>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Json,
    Table,
}

fn policy_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() {
        Err("a policy name is empty".into())
    } else {
        Ok(name.to_string())
    }
}

fn share_of_one(text: &str) -> Result<f64, String> {
    let share: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    sim::PlacementOracle::check_share(share)
}

fn key_value(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .ok_or_else(|| format!("expected KEY=VALUE, got '{text}'"))
}

fn load_factor(text: &str) -> Result<f64, String> {
    let load: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    check_load(load)
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Compare(args) => compare(&args),
        Command::Sweep(args) => run_sweep(&args),
        Command::FreshStatic(args) => fresh_static(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rackwise-sim: {message}");
            ExitCode::from(1)
        }
    }
}

fn fresh_static(args: &FreshStaticArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.jobs)
        .map_err(|e| format!("--jobs {}: cannot read: {e}", args.jobs))?;
    let batch = BatchFile::parse(&text, &args.jobs)?;
    let started = Instant::now();
    let report = fresh_static::report(&batch, args.slots, args.k, args.splits)?;
    print!("{report}");
    eprintln!("computed in {:.3} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The setup resolved: the cluster loaded and every policy name checked against it.
struct Prepared {
    cluster: Cluster,
    /// Every run's options but the seed: the settings and the model, checked once.
    options: SimOptions,
}

impl Prepared {
    fn sim_options(&self, seed: u64) -> SimOptions {
        SimOptions {
            seed,
            ..self.options.clone()
        }
    }
}

impl Setup {
    fn prepare(&self) -> Result<Prepared, String> {
        let cluster = Cluster::load(&self.cluster)?;
        let core_settings: BTreeMap<String, String> = self.core_settings.iter().cloned().collect();
        check_core_settings(&core_settings)?;
        let queue_settings: BTreeMap<String, String> =
            self.queue_settings.iter().cloned().collect();
        // A baseline never calls the core, so its settings would only label the run.
        let runs_the_core = self
            .policies
            .iter()
            .any(|name| matches!(Policy::parse(name), Policy::Core(_)));
        let has_settings = !core_settings.is_empty() || !queue_settings.is_empty();
        if has_settings && !runs_the_core {
            return Err(format!(
                "--core-setting and --queue-setting configure the core's policies, and --policies \
                 names only baselines ({}): they would change nothing",
                self.policies.join(", ")
            ));
        }
        // Every policy name is checked before anything runs: an unknown one fails the command
        // with the core's own configuration error, naming the policy and the names it accepts.
        for name in &self.policies {
            if let Policy::Core(name) = Policy::parse(name) {
                core_engine(&name, &cluster, &core_settings, &queue_settings).map_err(|e| {
                    format!(
                        "policy '{name}' is not a baseline ({}) and the core refused it: {e}",
                        BASELINES.join(", ")
                    )
                })?;
            }
        }
        let mut options = SimOptions {
            core_settings,
            queue_settings,
            accounts: dp_workload::accounts_of(&self.trace)?,
            ..SimOptions::default()
        };
        self.model.apply(&mut options);
        options.validate()?;
        Ok(Prepared { cluster, options })
    }

    fn users(&self) -> usize {
        let is_mix = self.trace.ends_with(".json");
        // ShuffleWatcher ran 30 users; NAS's trace simulation 200.
        self.users
            .map_or(if is_mix { 30 } else { 200 }, |u| u as usize)
    }

    fn workload_options(&self, seed: u64, load: f64) -> WorkloadOptions {
        WorkloadOptions {
            scale_from: self.scale_from,
            users: self.users(),
            random_users: self.random_users,
            seed,
            hours: self.hours,
            bytes_per_reduce: self.bytes_per_reduce_mib * 1024 * 1024,
            load,
        }
    }

    /// One line under a sweep chart's title saying what was run, so a chart read alone (in a
    /// README, a note) states its conditions: workload, cluster, input layout, seeds, any
    /// setting away from the defaults, and either oracle when it is on.
    fn chart_conditions(&self, cluster: &Cluster, jobs: usize, seeds: &[u64]) -> String {
        let trace = Path::new(&self.trace)
            .file_name()
            .map_or(self.trace.clone(), |n| n.to_string_lossy().into_owned());
        let mut parts = vec![match self.hours {
            Some(h) => format!("{trace}, first {h} h: {jobs} jobs, {} users", self.users()),
            None => format!("{trace}: {jobs} jobs, {} users", self.users()),
        }];
        parts.push(cluster.name.clone());
        parts.push(match self.model.input_racks {
            0 => "input from random nodes".to_string(),
            1 => "input from 1 rack per job".to_string(),
            w => format!("input from {w} racks per job"),
        });
        let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
        parts.push(format!("seeds {}", seeds.join(", ")));
        for (key, value) in self.core_settings.iter().chain(&self.queue_settings) {
            parts.push(format!("{key}={value}"));
        }
        let oracle = self.model.placement_oracle();
        if oracle.local_reads || oracle.local_shuffle_share > 0.0 {
            parts.push("placement oracle on (a bound, not the model)".to_string());
        }
        if self.model.oracle_ratio_hints {
            parts.push("true shuffle ratios as hints (a bound, not the model)".to_string());
        }
        parts.join(" · ")
    }

    fn setup_json(&self, cluster: &Cluster, jobs: usize) -> serde_json::Value {
        json!({
            "trace": self.trace,
            "cluster": cluster.name,
            "jobs": jobs,
            "users": self.users(),
            "scale_from": self.scale_from,
            "hours": self.hours,
            "netsat": sim::netsat_label(&self.core_settings.iter().cloned().collect()),
            "model": self.model.describe(),
        })
    }

    fn progress(&self) -> MultiProgress {
        let bars = MultiProgress::new();
        if self.quiet {
            bars.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        bars
    }
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:<16} [{bar:30}] {pos}/{len} {msg} {elapsed}")
        .expect("the template is valid")
        .progress_chars("#>.")
}

fn compare(args: &CompareArgs) -> Result<(), String> {
    let mut runs = Vec::with_capacity(args.seed.len());
    let mut documents = Vec::with_capacity(args.seed.len());
    for &seed in &args.seed {
        if args.seed.len() > 1 && args.format == Format::Table {
            println!("seed {seed}");
        }
        let (metrics, document) = compare_seed(args, seed)?;
        runs.push(metrics);
        documents.push(document);
    }
    let means = seed_means(&runs);
    match args.format {
        Format::Json if runs.len() == 1 => print_json(&documents[0]),
        Format::Json => print_json(&json!({ "runs": documents, "seed_means": means })),
        Format::Table if runs.len() == 1 => Ok(()),
        Format::Table => {
            print_seed_means(&args.seed, &means);
            Ok(())
        }
    }
}

/// A policy's mean job turnaround and makespan over the seeds, and each as a ratio to the
/// best stock baseline's (`ratio_*` are absent for the baselines and without one run).
fn seed_means(runs: &[BTreeMap<String, PolicyMetrics>]) -> BTreeMap<String, serde_json::Value> {
    let mean = |policy: &str, field: fn(&PolicyMetrics) -> f64| {
        runs.iter().map(|r| field(&r[policy])).sum::<f64>() / runs.len() as f64
    };
    let policies: Vec<&String> = runs.first().map(|r| r.keys().collect()).unwrap_or_default();
    let best = |field: fn(&PolicyMetrics) -> f64| {
        policies
            .iter()
            .filter(|p| Policy::parse(p).is_baseline())
            .map(|p| mean(p, field))
            .min_by(f64::total_cmp)
    };
    let turnaround: fn(&PolicyMetrics) -> f64 = |m| m.mean_turnaround_s;
    let makespan: fn(&PolicyMetrics) -> f64 = |m| m.makespan_s;
    let (best_turnaround, best_makespan) = (best(turnaround), best(makespan));
    policies
        .iter()
        .map(|p| {
            let (t, m) = (mean(p, turnaround), mean(p, makespan));
            let mut row = json!({ "mean_turnaround_s": t, "makespan_s": m });
            if !Policy::parse(p).is_baseline() {
                if let (Some(bt), Some(bm)) = (best_turnaround, best_makespan) {
                    row["turnaround_vs_best_stock"] = json!(t / bt);
                    row["makespan_vs_best_stock"] = json!(m / bm);
                }
            }
            (p.to_string(), row)
        })
        .collect()
}

fn print_seed_means(seeds: &[u64], means: &BTreeMap<String, serde_json::Value>) {
    let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
    println!("means over seeds {}:", seeds.join(","));
    println!(
        "{:<16} {:>12} {:>12} {:>16} {:>16}",
        "policy", "mean s", "makespan s", "mean ÷ best", "makespan ÷ best"
    );
    for (policy, row) in means {
        let ratio = |key: &str| {
            row.get(key)
                .and_then(|v| v.as_f64())
                .map_or("-".to_string(), |r| format!("{r:.3}"))
        };
        println!(
            "{:<16} {:>12.1} {:>12.0} {:>16} {:>16}",
            policy,
            row["mean_turnaround_s"].as_f64().unwrap_or(f64::NAN),
            row["makespan_s"].as_f64().unwrap_or(f64::NAN),
            ratio("turnaround_vs_best_stock"),
            ratio("makespan_vs_best_stock"),
        );
    }
}

/// One seed's runs of every policy: printed as a table (table format) and returned with the
/// seed's JSON document.
fn compare_seed(
    args: &CompareArgs,
    seed: u64,
) -> Result<(BTreeMap<String, PolicyMetrics>, serde_json::Value), String> {
    let setup = &args.setup;
    let prepared = setup.prepare()?;
    let (cluster, sim_options) = (&prepared.cluster, prepared.sim_options(seed));
    let options = setup.workload_options(seed, args.load);
    let jobs = workload::load(&setup.trace, cluster, &options)?;

    let bars = setup.progress();
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = setup
            .policies
            .iter()
            .map(|name| {
                let bar = bars.add(ProgressBar::new(jobs.len() as u64));
                bar.set_style(bar_style());
                bar.set_prefix(name.clone());
                bar.set_message("jobs");
                let (jobs, sim_options) = (&jobs, &sim_options);
                scope.spawn(move || {
                    let t0 = Instant::now();
                    let result = run_policy(cluster, jobs, name, sim_options, &mut |_, done| {
                        bar.set_position(done as u64)
                    });
                    bar.finish();
                    (result, t0.elapsed())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("simulation thread"))
            .collect::<Vec<_>>()
    });

    let mut metrics: BTreeMap<String, PolicyMetrics> = BTreeMap::new();
    let mut collectors: Vec<(String, Collector)> = Vec::new();
    for (name, (result, elapsed)) in setup.policies.iter().zip(results) {
        let (m, counters, collector) = result?;
        if !setup.quiet {
            eprintln!(
                "{name}: {} jobs, {} containers, {} offers, {} events in {:.1}s wall (core: about {:.1}s)",
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
    if let Some(dir) = &setup.plot {
        plot::write_all(dir, &metrics, &collectors, &jobs)?;
    }
    let mut document = json!({
        "policies": metrics,
        "setup": setup.setup_json(cluster, jobs.len()),
    });
    document["setup"]["seed"] = json!(seed);
    document["setup"]["load"] = json!(args.load);
    if args.format == Format::Table {
        print_table(&metrics);
    }
    Ok((metrics, document))
}

fn print_json(document: &serde_json::Value) -> Result<(), String> {
    println!(
        "{}",
        serde_json::to_string_pretty(document).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// The workload of one (load, seed) cell of the sweep.
struct Cell {
    load: f64,
    seed: u64,
    jobs: Vec<JobSpec>,
}

fn run_sweep(args: &SweepArgs) -> Result<(), String> {
    let setup = &args.setup;
    let prepared = setup.prepare()?;
    let cluster = &prepared.cluster;
    // Workloads first, so a bad trace fails before any run.
    let mut cells = Vec::new();
    for &load in &args.loads {
        for &seed in &args.seeds {
            let jobs = workload::load(&setup.trace, cluster, &setup.workload_options(seed, load))?;
            cells.push(Cell { load, seed, jobs });
        }
    }
    let grid: Vec<(&String, &Cell)> = setup
        .policies
        .iter()
        .flat_map(|p| cells.iter().map(move |c| (p, c)))
        .collect();
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );

    let bars = setup.progress();
    let total = bars.add(ProgressBar::new(grid.len() as u64));
    total.set_style(bar_style());
    total.set_prefix("sweep");
    total.set_message("runs");
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Run, String>>>> =
        Mutex::new((0..grid.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(grid.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(policy, cell)) = grid.get(i) else {
                    break;
                };
                let label = format!("{policy} ×{} seed {}", cell.load, cell.seed);
                let bar = bars.insert_before(&total, ProgressBar::new(cell.jobs.len() as u64));
                bar.set_style(bar_style());
                bar.set_prefix(label.clone());
                bar.set_message("jobs");
                let options = prepared.sim_options(cell.seed);
                let t0 = Instant::now();
                let result = run_policy(cluster, &cell.jobs, policy, &options, &mut |_, done| {
                    bar.set_position(done as u64)
                })
                .map(|(metrics, _, _)| Run {
                    policy: policy.clone(),
                    load: cell.load,
                    seed: cell.seed,
                    metrics,
                })
                .map_err(|e| format!("{label}: {e}"));
                bar.finish_and_clear();
                bars.remove(&bar);
                if !setup.quiet {
                    let outcome = result.as_ref().map_or("failed".to_string(), |r| {
                        format!("{} of {} jobs", r.metrics.jobs, r.metrics.arrivals)
                    });
                    // Above the bars on a terminal, plainly on stderr otherwise.
                    bars.suspend(|| {
                        eprintln!(
                            "{label}: {outcome} in {:.1}s wall",
                            t0.elapsed().as_secs_f64()
                        )
                    });
                }
                results.lock().expect("no run panicked holding the lock")[i] = Some(result);
                total.inc(1);
            });
        }
    });
    total.finish_and_clear();
    let runs: Vec<Run> = results
        .into_inner()
        .expect("no run panicked holding the lock")
        .into_iter()
        .map(|r| r.expect("every run of the grid ran"))
        .collect::<Result<_, _>>()?;
    let summary = sweep::summarise(&runs, &setup.policies, &args.loads);
    let jobs = cells.first().map_or(0, |c| c.jobs.len());
    if let Some(dir) = &setup.plot {
        plot::write_sweep(
            dir,
            &summary,
            &setup.chart_conditions(cluster, jobs, &args.seeds),
        )?;
    }
    match args.format {
        Format::Json => {
            let mut document = json!({
                "setup": setup.setup_json(cluster, jobs),
                "spread": "min and max over seeds",
                "summary": summary,
                "runs": runs,
            });
            document["setup"]["loads"] = json!(args.loads);
            document["setup"]["seeds"] = json!(args.seeds);
            print_json(&document)
        }
        Format::Table => {
            sweep::print_table(&summary);
            Ok(())
        }
    }
}

fn print_table(metrics: &BTreeMap<String, PolicyMetrics>) {
    println!(
        "{:<16} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>8} {:>6} {:>7} {:>10} {:>6}",
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
        "overall",
        "makespan s",
        "util"
    );
    let gib = (1u64 << 30) as f64;
    for (name, m) in metrics {
        println!(
            "{:<16} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>12.1} {:>12.1} {:>8} {:>6.3} {:>7.3} {:>10.0} {:>6.3}",
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
            m.overall_fairness,
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
    print_shuffle_bounds(metrics);
}

/// The cross-rack shuffle decomposition (docs/simulator.md, "Cross-rack shuffle: oracle
/// bounds"): measured, then as placed and under each oracle, GiB; last, the least map reads
/// and shuffle together that any placement could move across racks.
fn print_shuffle_bounds(metrics: &BTreeMap<String, PolicyMetrics>) {
    println!(
        "{:<16} {:>10} {:>10} {:>10} {:>12} {:>12} {:>12} {:>12} {:>12} {:>14}",
        "xr-shfl GiB",
        "shuffle",
        "measured",
        "as placed",
        "proportional",
        "oracle free",
        "oracle rack",
        "lower bound",
        "data-local",
        "reads+shuffle"
    );
    let gib = (1u64 << 30) as f64;
    for (name, m) in metrics {
        let b = &m.cross_rack_shuffle_bounds;
        println!(
            "{:<16} {:>10.1} {:>10.1} {:>10.1} {:>12.1} {:>12.1} {:>12.1} {:>12.1} {:>12.1} {:>14.1}",
            name,
            b.shuffle / gib,
            m.cross_rack_shuffle_bytes as f64 / gib,
            b.as_placed / gib,
            b.proportional / gib,
            b.reduce_oracle_free / gib,
            b.reduce_oracle / gib,
            b.lower_bound / gib,
            b.data_local_bound / gib,
            b.reads_and_shuffle_floor / gib
        );
    }
}
