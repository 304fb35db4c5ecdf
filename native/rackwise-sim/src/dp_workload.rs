//! A Dynamic Priority workload (`.dp.json`): per user a budget, a spending schedule (rates that
//! change over time) and a stream of identical profiled jobs. User `k` (from 0, in file order)
//! submits to queue `root.u<k>`, a budget queue of the `dp` market on `root`.
//!
//! ```json
//! {"task_spread": 0.2,
//!  "users": [{"budget": 1e9,
//!             "spending": [{"at_s": 0, "rate": 1}, {"at_s": 1800, "rate": 8}],
//!             "jobs": {"count": 20, "maps": 2000, "map_s": 60, "interval_s": 120}}]}
//! ```

use crate::workload::{JobSpec, ShuffleClass, TaskProfile};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpWorkload {
    /// Each task takes its mean time × a seeded uniform factor in `[1 − spread, 1 + spread]`.
    #[serde(default)]
    pub task_spread: f64,
    pub users: Vec<DpUser>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpUser {
    /// Credits at the start.
    pub budget: f64,
    /// Spending rates by time; the first is at 0 s, times increase.
    pub spending: Vec<SpendingChange>,
    pub jobs: JobStream,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpendingChange {
    pub at_s: f64,
    /// Credits per resource unit per allocation interval from `at_s` on.
    pub rate: f64,
}

/// `count` jobs of one shape, the first at `start_s`, then one every `interval_s`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobStream {
    pub count: u32,
    pub maps: u32,
    pub map_s: f64,
    #[serde(default)]
    pub reduces: u32,
    #[serde(default)]
    pub reduce_s: f64,
    #[serde(default)]
    pub start_s: f64,
    pub interval_s: f64,
}

/// A user's account as the simulator hands it to the core: the starting budget and the
/// spending rate from each time on (ms, ascending, the first at 0).
#[derive(Debug, Clone, PartialEq)]
pub struct UserAccount {
    pub budget: f64,
    pub spending: Vec<(u64, f64)>,
}

/// Whether a workload path is a Dynamic Priority workload.
pub fn is_dp_workload(path: &str) -> bool {
    path.ends_with(".dp.json")
}

fn check(path: &str, field: &str, value: f64, ok: bool, expected: &str) -> Result<(), String> {
    if ok && value.is_finite() {
        Ok(())
    } else {
        Err(format!("{path}: {field}: value {value} {expected}"))
    }
}

impl DpWorkload {
    /// Reads and checks a workload: the error names the user, the field, the value and why.
    pub fn parse(text: &str, path: &str) -> Result<DpWorkload, String> {
        let workload: DpWorkload = serde_json::from_str(text)
            .map_err(|e| format!("{path}: not a Dynamic Priority workload: {e}"))?;
        let spread = workload.task_spread;
        check(
            path,
            "task_spread",
            spread,
            (0.0..1.0).contains(&spread),
            "must be at least 0 and below 1",
        )?;
        if workload.users.is_empty() {
            return Err(format!("{path}: \"users\" is empty: nothing to run"));
        }
        for (u, user) in workload.users.iter().enumerate() {
            let at = |field: &str| format!("users[{u}].{field}");
            check(
                path,
                &at("budget"),
                user.budget,
                user.budget >= 0.0,
                "must be a number of credits of at least 0",
            )?;
            let Some(first) = user.spending.first() else {
                return Err(format!(
                    "{path}: {}: is empty: give the rate at 0 s",
                    at("spending")
                ));
            };
            check(
                path,
                &at("spending[0].at_s"),
                first.at_s,
                first.at_s == 0.0,
                "must be 0: the schedule starts with the rate at 0 s",
            )?;
            let mut previous = -1.0;
            for (i, change) in user.spending.iter().enumerate() {
                check(
                    path,
                    &at(&format!("spending[{i}].at_s")),
                    change.at_s,
                    change.at_s > previous,
                    "must be later than the previous change",
                )?;
                check(
                    path,
                    &at(&format!("spending[{i}].rate")),
                    change.rate,
                    change.rate >= 0.0,
                    "must be a rate of at least 0",
                )?;
                previous = change.at_s;
            }
            let jobs = &user.jobs;
            for (field, value, ok, expected) in [
                (
                    "jobs.count",
                    f64::from(jobs.count),
                    jobs.count > 0,
                    "must be at least 1",
                ),
                (
                    "jobs.maps",
                    f64::from(jobs.maps),
                    jobs.maps > 0,
                    "must be at least 1",
                ),
                (
                    "jobs.map_s",
                    jobs.map_s,
                    jobs.map_s > 0.0,
                    "must be above 0",
                ),
                (
                    "jobs.reduce_s",
                    jobs.reduce_s,
                    jobs.reduce_s >= 0.0,
                    "must be at least 0",
                ),
                (
                    "jobs.start_s",
                    jobs.start_s,
                    jobs.start_s >= 0.0,
                    "must be at least 0",
                ),
                (
                    "jobs.interval_s",
                    jobs.interval_s,
                    jobs.interval_s >= 0.0,
                    "must be at least 0",
                ),
            ] {
                check(path, &at(field), value, ok, expected)?;
            }
            if jobs.reduces > 0 && jobs.reduce_s <= 0.0 {
                return Err(format!(
                    "{path}: {}: value {} must be above 0 when the jobs have reduces",
                    at("jobs.reduce_s"),
                    jobs.reduce_s
                ));
            }
        }
        Ok(workload)
    }

    /// Every user's jobs, in submission order (ties by user).
    pub fn jobs(&self) -> Vec<JobSpec> {
        let mut jobs: Vec<JobSpec> = self
            .users
            .iter()
            .enumerate()
            .flat_map(|(user, spec)| {
                let stream = spec.jobs;
                (0..stream.count).map(move |k| JobSpec {
                    name: format!("u{user}-job{k}"),
                    submit_ms: ((stream.start_s + f64::from(k) * stream.interval_s) * 1000.0)
                        as u64,
                    user,
                    input_bytes: 0,
                    shuffle_bytes: 0,
                    output_bytes: 0,
                    maps: stream.maps,
                    reduces: stream.reduces,
                    class: ShuffleClass::Light,
                    task_s: Some(TaskProfile {
                        map_s: stream.map_s,
                        reduce_s: stream.reduce_s,
                        spread: self.task_spread,
                    }),
                })
            })
            .collect();
        jobs.sort_by_key(|job| (job.submit_ms, job.user));
        jobs
    }

    /// Every user's account, by user.
    pub fn accounts(&self) -> Vec<UserAccount> {
        self.users
            .iter()
            .map(|user| UserAccount {
                budget: user.budget,
                spending: user
                    .spending
                    .iter()
                    .map(|change| ((change.at_s * 1000.0) as u64, change.rate))
                    .collect(),
            })
            .collect()
    }
}

/// The accounts a workload file sets: those of a `.dp.json` workload, none for any other.
pub fn accounts_of(path: &str) -> Result<Vec<UserAccount>, String> {
    if !is_dp_workload(path) {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("trace {path}: {e}"))?;
    Ok(DpWorkload::parse(&text, path)?.accounts())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_USERS: &str = r#"{"users": [
        {"budget": 100, "spending": [{"at_s": 0, "rate": 1}, {"at_s": 60, "rate": 3}],
         "jobs": {"count": 2, "maps": 10, "map_s": 5, "interval_s": 30}},
        {"budget": 50, "spending": [{"at_s": 0, "rate": 2}],
         "jobs": {"count": 1, "maps": 4, "map_s": 5, "start_s": 10, "interval_s": 0}}]}"#;

    #[test]
    fn users_jobs_and_schedules_come_from_the_file() {
        let workload = DpWorkload::parse(TWO_USERS, "two.dp.json").unwrap();
        let jobs = workload.jobs();
        let submitted: Vec<(u64, usize)> = jobs.iter().map(|j| (j.submit_ms, j.user)).collect();
        assert_eq!(submitted, vec![(0, 0), (10_000, 1), (30_000, 0)]);
        assert_eq!(
            workload.accounts()[0],
            UserAccount {
                budget: 100.0,
                spending: vec![(0, 1.0), (60_000, 3.0)]
            }
        );
    }

    #[test]
    fn a_bad_schedule_is_refused_naming_user_field_and_value() {
        let late_start =
            TWO_USERS.replace(r#"[{"at_s": 0, "rate": 2}]"#, r#"[{"at_s": 5, "rate": 2}]"#);
        let error = DpWorkload::parse(&late_start, "w.dp.json").unwrap_err();
        assert!(
            error.contains("users[1].spending[0].at_s: value 5 must be 0"),
            "{error}"
        );
        let negative = TWO_USERS.replace(r#""rate": 3"#, r#""rate": -3"#);
        let error = DpWorkload::parse(&negative, "w.dp.json").unwrap_err();
        assert!(
            error.contains("users[0].spending[1].rate: value -3"),
            "{error}"
        );
        let backwards = TWO_USERS.replace(r#""at_s": 60"#, r#""at_s": 0"#);
        let error = DpWorkload::parse(&backwards, "w.dp.json").unwrap_err();
        assert!(
            error.contains("users[0].spending[1].at_s: value 0 must be later"),
            "{error}"
        );
    }
}
