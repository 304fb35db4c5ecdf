//! `rackwise-sim fresh-static`: FRESH's static configuration (paper Algorithm 1) for a batch
//! profile file. The file is JSON:
//!
//! ```json
//! {"jobs": [{"name": "J1", "maps": 2, "reduces": 9, "map_s": 1.0, "reduce_s": 1.0}, ...]}
//! ```
//!
//! `map_s` and `reduce_s` are the mean time of one task; the makespan is in the same unit. The
//! simulator reads the same file as a workload (`*.batch.json`), with the optional `benchmark`
//! (the job name runs share), `submit_s` and top-level `interval_s`.

use rackwise_core::policy::fresh::batch::{at_split, best_split, JobProfile, StaticChoice};
use rackwise_core::policy::fresh::JobsPerPhase;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchFile {
    pub jobs: Vec<BatchJob>,
    /// For the simulator: seconds between submissions of jobs without `submit_s` (2).
    #[serde(default)]
    pub interval_s: Option<f64>,
    /// For the simulator: each task takes its profiled time × a seeded uniform factor in
    /// `[1 − spread, 1 + spread]` (0: exactly; the FRESH paper's ±30 % is 0.3).
    #[serde(default)]
    pub task_spread: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchJob {
    pub name: String,
    pub maps: u32,
    pub reduces: u32,
    pub map_s: f64,
    pub reduce_s: f64,
    /// For the simulator: the job name its runs share (the learned history's key); `name`
    /// when absent.
    #[serde(default)]
    pub benchmark: Option<String>,
    /// For the simulator: when the job is submitted.
    #[serde(default)]
    pub submit_s: Option<f64>,
}

impl BatchFile {
    /// Reads and checks a batch file: every job needs a name and finite, non-negative task
    /// times; the error names the job, the field, the value and why.
    pub fn parse(text: &str, path: &str) -> Result<BatchFile, String> {
        let batch: BatchFile =
            serde_json::from_str(text).map_err(|e| format!("{path}: not a batch file: {e}"))?;
        if !(0.0..1.0).contains(&batch.task_spread) {
            return Err(format!(
                "{path}: task_spread: value {} must be at least 0 and below 1",
                batch.task_spread
            ));
        }
        if batch.jobs.is_empty() {
            return Err(format!("{path}: \"jobs\" is empty: nothing to configure"));
        }
        for (at, job) in batch.jobs.iter().enumerate() {
            for (field, value) in [("map_s", job.map_s), ("reduce_s", job.reduce_s)] {
                if !value.is_finite() || value < 0.0 {
                    return Err(format!(
                        "{path}: jobs[{at}] ('{}') {field}: value {value} must be a time of \
                         at least 0",
                        job.name
                    ));
                }
            }
        }
        Ok(batch)
    }

    pub fn profiles(&self) -> Vec<JobProfile> {
        self.jobs
            .iter()
            .map(|job| JobProfile {
                maps: job.maps,
                reduces: job.reduces,
                map_time: job.map_s,
                reduce_time: job.reduce_s,
            })
            .collect()
    }
}

/// The best split of `slots` containers for the batch at `k`, as printed by the command:
/// the choice, then the makespan of every split (`splits`: true) for a reader checking it.
pub fn report(
    batch: &BatchFile,
    slots: u32,
    k: JobsPerPhase,
    splits: bool,
) -> Result<String, String> {
    let jobs = batch.profiles();
    let k = k.of(jobs.len()).min(jobs.len());
    let StaticChoice {
        map_slots,
        reduce_slots,
        order,
        makespan: span,
    } = best_split(&jobs, slots, k)
        .ok_or_else(|| format!("no split of {slots} containers can run this batch"))?;
    let names: Vec<&str> = order.iter().map(|&i| batch.jobs[i].name.as_str()).collect();
    let mut out = format!(
        "jobs per phase (k): {k}\nbest split: {map_slots} map + {reduce_slots} reduce \
         containers of {slots}\nmakespan: {span:.3} s\norder: {}\n",
        names.join(", ")
    );
    if splits {
        out.push_str("map\treduce\tmakespan_s (each with the Johnson order of its split)\n");
        for map in 0..=slots {
            let span = at_split(&jobs, map, slots - map, k).makespan;
            out.push_str(&format!("{map}\t{}\t{span:.3}\n", slots - map));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAPER: &str = r#"{"jobs": [
        {"name": "J1", "maps": 2, "reduces": 9, "map_s": 1, "reduce_s": 1},
        {"name": "J2", "maps": 3, "reduces": 4, "map_s": 1, "reduce_s": 1},
        {"name": "J3", "maps": 7, "reduces": 3, "map_s": 1, "reduce_s": 1}]}"#;

    #[test]
    fn the_paper_example_at_one_job_per_phase_is_4_4_in_order_j1_j2_j3() {
        let batch = BatchFile::parse(PAPER, "paper.json").unwrap();
        let text = report(&batch, 8, JobsPerPhase::Count(1), false).unwrap();
        assert_eq!(
            text,
            "jobs per phase (k): 1\nbest split: 4 map + 4 reduce containers of 8\n\
             makespan: 4.500 s\norder: J1, J2, J3\n"
        );
    }

    #[test]
    fn bad_files_are_refused_by_job_field_and_value() {
        let negative = PAPER.replace(
            "\"map_s\": 1, \"reduce_s\": 1},\n        {\"name\": \"J2\"",
            "\"map_s\": -2, \"reduce_s\": 1},\n        {\"name\": \"J2\"",
        );
        assert_eq!(
            BatchFile::parse(&negative, "b.json").unwrap_err(),
            "b.json: jobs[0] ('J1') map_s: value -2 must be a time of at least 0"
        );
        assert!(BatchFile::parse(r#"{"jobs": []}"#, "e.json")
            .unwrap_err()
            .contains("\"jobs\" is empty"));
        assert!(BatchFile::parse(r#"{"jobz": []}"#, "u.json")
            .unwrap_err()
            .starts_with("u.json: not a batch file: unknown field `jobz`"));
    }
}
