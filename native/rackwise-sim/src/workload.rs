//! Jobs to run: SWIM trace rows or a synthetic benchmark mix, turned into MapReduce job
//! shapes (maps, reduces, bytes) for a given cluster.

use crate::cluster::Cluster;
use crate::rng::Rng;
use serde::Deserialize;

const MIB: u64 = 1024 * 1024;

/// Shuffle class as the papers report it (binary units, see the traces README §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ShuffleClass {
    Light,
    Medium,
    Heavy,
}

impl ShuffleClass {
    pub const ALL: [ShuffleClass; 3] = [
        ShuffleClass::Light,
        ShuffleClass::Medium,
        ShuffleClass::Heavy,
    ];

    /// light < 1 MiB, medium 1..=100 MiB, heavy > 100 MiB of shuffle.
    pub fn of_shuffle_bytes(bytes: u64) -> ShuffleClass {
        if bytes < MIB {
            ShuffleClass::Light
        } else if bytes <= 100 * MIB {
            ShuffleClass::Medium
        } else {
            ShuffleClass::Heavy
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ShuffleClass::Light => "light",
            ShuffleClass::Medium => "medium",
            ShuffleClass::Heavy => "heavy",
        }
    }

    fn parse(text: &str) -> Option<ShuffleClass> {
        ShuffleClass::ALL.into_iter().find(|c| c.name() == text)
    }
}

/// A profiled job's mean map and reduce task times (s) and their spread: each task takes its
/// mean × a seeded uniform factor in `[1 − spread, 1 + spread]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskProfile {
    pub map_s: f64,
    pub reduce_s: f64,
    pub spread: f64,
}

/// One job as submitted.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub submit_ms: u64,
    pub user: usize,
    pub input_bytes: u64,
    pub shuffle_bytes: u64,
    pub output_bytes: u64,
    pub maps: u32,
    pub reduces: u32,
    pub class: ShuffleClass,
    /// A profiled batch job's task times (`.batch.json`): its tasks take these, launch
    /// overhead included, instead of times derived from bytes (it moves no bytes). `None` for
    /// trace and mix jobs.
    pub task_s: Option<TaskProfile>,
}

/// How trace rows become jobs.
#[derive(Debug, Clone)]
pub struct WorkloadOptions {
    /// Origin cluster size for SWIM's byte scaling; `None` keeps bytes as recorded.
    pub scale_from: Option<u64>,
    pub users: usize,
    /// Round-robin users when false, seeded random when true.
    pub random_users: bool,
    pub seed: u64,
    /// Keep only jobs submitted in the first `hours`.
    pub hours: Option<f64>,
    /// SWIM's "bytes per reduce" B.
    pub bytes_per_reduce: u64,
    /// Offered load X: every arrival time is divided by X (after `hours` picked the jobs by
    /// their recorded time), so X = 4 offers the same jobs four times as fast.
    pub load: f64,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            scale_from: None,
            users: 200,
            random_users: false,
            seed: 1,
            hours: None,
            bytes_per_reduce: 64 * MIB,
            load: 1.0,
        }
    }
}

/// Maps and reduces as SWIM's `GenerateReplayScript` derives them, with two departures. No
/// 57 MB input floor is applied. A job with no shuffle keeps 0 reduces (SWIM's 1 KiB shuffle
/// floor is a replay artefact) and its maps write the output, so its maps are as many as SWIM
/// would give it output writers when that is more than its input needs: SWIM's replay writes
/// such a job's output with `output / B` reduces, and left to its input's one map a 1 TB output
/// would be written by one task for half a day.
///
/// * maps = max(1, ceil(input / block)), or for a map-only job the larger of that and its
///   writers;
/// * reduces (writers) = max(1, round((shuffle + output) / B)), and if that exceeds the node
///   count, nodes / 5 (SWIM's own rule).
pub fn job_shape(
    input: u64,
    shuffle: u64,
    output: u64,
    cluster: &Cluster,
    bytes_per_reduce: u64,
) -> (u32, u32) {
    let block = cluster.block_bytes();
    let input_maps = input.div_ceil(block).max(1).min(u32::MAX as u64) as u32;
    let writers = {
        let r = ((shuffle + output) as f64 / bytes_per_reduce as f64)
            .round()
            .max(1.0) as u64;
        let nodes = cluster.nodes() as u64;
        if r > nodes {
            (nodes / 5).max(1)
        } else {
            r
        }
    } as u32;
    if shuffle == 0 {
        (input_maps.max(writers), 0)
    } else {
        (input_maps, writers)
    }
}

fn scale(bytes: u64, target: u64, origin: Option<u64>) -> u64 {
    match origin {
        Some(origin) if origin > 0 => (bytes as u128 * target as u128 / origin as u128) as u64,
        _ => bytes,
    }
}

fn assign_user(index: usize, options: &WorkloadOptions, rng: &mut Rng) -> usize {
    let users = options.users.max(1);
    if options.random_users {
        rng.below(users)
    } else {
        index % users
    }
}

/// Reads a SWIM trace (tab-separated: id, submit s, gap s, input, shuffle, output, ...).
pub fn load_swim(
    text: &str,
    cluster: &Cluster,
    options: &WorkloadOptions,
) -> Result<Vec<JobSpec>, String> {
    let mut rng = Rng::new(options.seed ^ 0x5157_494d);
    let mut jobs = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 6 {
            return Err(format!(
                "line {}: expected at least 6 tab-separated columns",
                line_no + 1
            ));
        }
        let number = |i: usize| -> Result<u64, String> {
            cols[i]
                .trim()
                .parse::<u64>()
                .map_err(|e| format!("line {}: column {} '{}': {e}", line_no + 1, i + 1, cols[i]))
        };
        let submit_s = number(1)?;
        if let Some(hours) = options.hours {
            if submit_s as f64 >= hours * 3600.0 {
                continue;
            }
        }
        let target = cluster.nodes() as u64;
        let (raw_input, raw_shuffle, raw_output) = (number(3)?, number(4)?, number(5)?);
        let input = scale(raw_input, target, options.scale_from);
        let shuffle = scale(raw_shuffle, target, options.scale_from);
        let output = scale(raw_output, target, options.scale_from);
        let (maps, reduces) = job_shape(input, shuffle, output, cluster, options.bytes_per_reduce);
        let user = assign_user(jobs.len(), options, &mut rng);
        jobs.push(JobSpec {
            name: cols[0].trim().to_string(),
            submit_ms: submit_s * 1000,
            user,
            input_bytes: input,
            shuffle_bytes: shuffle,
            output_bytes: output,
            maps,
            reduces,
            // Classes use the recorded bytes, so the mix matches the papers whatever the scale.
            class: ShuffleClass::of_shuffle_bytes(raw_shuffle),
            task_s: None,
        });
    }
    if jobs.is_empty() {
        return Err("the trace holds no jobs (in the selected hours)".into());
    }
    Ok(jobs)
}

/// A synthetic mix in the style of ShuffleWatcher's Tables 1–2.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mix {
    pub jobs: usize,
    pub mean_interarrival_s: f64,
    pub benchmarks: Vec<Benchmark>,
    pub input_sizes: Vec<SizeBin>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Benchmark {
    pub name: String,
    pub share: f64,
    pub shuffle_input_ratio: f64,
    pub output_shuffle_ratio: f64,
    pub class: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeBin {
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub share: f64,
}

fn pick<T>(items: &[T], share: impl Fn(&T) -> f64, rng: &mut Rng) -> usize {
    let total: f64 = items.iter().map(&share).sum();
    let mut x = rng.unit() * total;
    for (i, item) in items.iter().enumerate() {
        x -= share(item);
        if x < 0.0 {
            return i;
        }
    }
    items.len() - 1
}

/// Draws the mix's jobs: benchmark by share, input size log-uniform within a bin drawn by
/// share, exponential inter-arrivals; the job's class is its benchmark's class.
pub fn load_mix(
    text: &str,
    cluster: &Cluster,
    options: &WorkloadOptions,
) -> Result<Vec<JobSpec>, String> {
    let mix: Mix = serde_json::from_str(text).map_err(|e| format!("mix file: {e}"))?;
    if mix.benchmarks.is_empty() || mix.input_sizes.is_empty() || mix.jobs == 0 {
        return Err("mix file: needs jobs > 0, benchmarks and input_sizes".into());
    }
    let mut classes = Vec::new();
    for b in &mix.benchmarks {
        classes.push(ShuffleClass::parse(&b.class).ok_or_else(|| {
            format!(
                "mix file: benchmark {} has class '{}', expected light, medium or heavy",
                b.name, b.class
            )
        })?);
    }
    let mut rng = Rng::new(options.seed ^ 0x004d_4958);
    let mut user_rng = Rng::new(options.seed ^ 0x5553_4552);
    let mut jobs = Vec::new();
    let mut t = 0.0;
    for index in 0..mix.jobs {
        t += rng.exponential(mix.mean_interarrival_s);
        if let Some(hours) = options.hours {
            if t >= hours * 3600.0 {
                break;
            }
        }
        let b = pick(&mix.benchmarks, |b| b.share, &mut rng);
        let bin = &mix.input_sizes[pick(&mix.input_sizes, |s| s.share, &mut rng)];
        let (lo, hi) = (
            bin.min_bytes.max(1) as f64,
            bin.max_bytes.max(bin.min_bytes.max(1)) as f64,
        );
        let input = (lo.ln() + rng.unit() * (hi.ln() - lo.ln())).exp() as u64;
        let bench = &mix.benchmarks[b];
        let shuffle = (input as f64 * bench.shuffle_input_ratio) as u64;
        let output = (shuffle as f64 * bench.output_shuffle_ratio) as u64;
        let (maps, reduces) = job_shape(input, shuffle, output, cluster, options.bytes_per_reduce);
        jobs.push(JobSpec {
            // Every job of a benchmark carries its name, as a recurring production job does, so
            // the core's learned history (keyed by job name) applies to later runs of it.
            name: bench.name.clone(),
            submit_ms: (t * 1000.0) as u64,
            user: assign_user(index, options, &mut user_rng),
            input_bytes: input,
            shuffle_bytes: shuffle,
            output_bytes: output,
            maps,
            reduces,
            class: classes[b],
            task_s: None,
        });
    }
    Ok(jobs)
}

/// Checks an offered load factor: a finite number above zero.
pub fn check_load(load: f64) -> Result<f64, String> {
    if load.is_finite() && load > 0.0 {
        Ok(load)
    } else {
        Err(format!(
            "load '{load}' must be a finite number above 0 (arrival times are divided by it)"
        ))
    }
}

/// Divides every arrival time by `load`, to the millisecond (a SWIM trace records whole
/// seconds, so ×8 turns a 1 s gap into 125 ms rather than rounding it away).
pub fn compress_arrivals(jobs: &mut [JobSpec], load: f64) -> Result<(), String> {
    let load = check_load(load)?;
    for job in jobs {
        job.submit_ms = (job.submit_ms as f64 / load).round() as u64;
    }
    Ok(())
}

/// A profiled batch (`.batch.json`, the `fresh-static` format): each job with its task counts
/// and mean task times, submitted at its `submit_s` or `interval_s` (2 s) after the previous
/// one, in file order.
pub fn load_batch(
    text: &str,
    path: &str,
    options: &WorkloadOptions,
) -> Result<Vec<JobSpec>, String> {
    let batch = crate::fresh_static::BatchFile::parse(text, path)?;
    let mut user_rng = Rng::new(options.seed ^ 0x5553_4552);
    let mut jobs = Vec::with_capacity(batch.jobs.len());
    for (index, job) in batch.jobs.iter().enumerate() {
        let submit_s = job
            .submit_s
            .unwrap_or(index as f64 * batch.interval_s.unwrap_or(2.0));
        if let Some(hours) = options.hours {
            if submit_s >= hours * 3600.0 {
                break;
            }
        }
        jobs.push(JobSpec {
            name: job.benchmark.clone().unwrap_or_else(|| job.name.clone()),
            submit_ms: (submit_s * 1000.0) as u64,
            user: assign_user(index, options, &mut user_rng),
            input_bytes: 0,
            shuffle_bytes: 0,
            output_bytes: 0,
            maps: job.maps,
            reduces: job.reduces,
            class: ShuffleClass::Light,
            task_s: Some(TaskProfile {
                map_s: job.map_s,
                reduce_s: job.reduce_s,
                spread: batch.task_spread,
            }),
        });
    }
    Ok(jobs)
}

/// A SWIM `.tsv` trace, a `.json` mix, a `.batch.json` batch or a `.dp.json` Dynamic Priority
/// workload (`crate::dp_workload`), by file name, with its arrivals compressed by the
/// options' load.
pub fn load(
    path: &str,
    cluster: &Cluster,
    options: &WorkloadOptions,
) -> Result<Vec<JobSpec>, String> {
    check_load(options.load)?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("trace {path}: {e}"))?;
    let mut jobs = if crate::dp_workload::is_dp_workload(path) {
        crate::dp_workload::DpWorkload::parse(&text, path)?.jobs()
    } else if path.ends_with(".batch.json") {
        load_batch(&text, path, options)?
    } else if path.ends_with(".json") {
        load_mix(&text, cluster, options)?
    } else {
        load_swim(&text, cluster, options)?
    };
    compress_arrivals(&mut jobs, options.load)?;
    Ok(jobs)
}
