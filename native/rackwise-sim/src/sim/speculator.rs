//! Speculative execution of maps: the MapReduce ApplicationMaster's `DefaultSpeculator` with
//! its default `LegacyTaskRuntimeEstimator` (Hadoop 3.4, `mapreduce.map.speculative` on by
//! default), stock Hadoop's own defence against slow and interfered nodes. Every policy runs
//! with it unless it is switched off, so a Rackwise policy is compared with what a stock
//! cluster really does.
//!
//! The rules, as `DefaultSpeculator` and `StartEndTimesBase` apply them each round:
//! - a round runs every `retry_after_no_speculate_ms`, or `retry_after_speculate_ms` after a
//!   round that added an attempt;
//! - a job whose maps still wait for containers gets no speculative map (its container needs
//!   are not met);
//! - no task is speculated before at least one map finished and at least 5 % of the job's maps
//!   did (`thresholdRuntime` is infinite until then);
//! - a task with one running attempt that started at `s` and is estimated to run `e` has the
//!   value `(s + e) − (now + mean)`, `mean` the mean run time of the job's finished maps; it is
//!   a candidate when that is positive (its replacement would finish first);
//! - a task with two running attempts is already speculating; a job has at most
//!   `max(minimum_allowed_tasks, cap_total_tasks × maps, cap_running_tasks × running maps)`
//!   of them, and each round adds one attempt for the candidate of the largest value;
//! - the first attempt of a task to finish wins, and the AM kills the other.
//!
//! The legacy estimator extrapolates an attempt's run time from its progress rate
//! (`elapsed / progress`). A simulated task progresses at a steady pace through the work its
//! launch planned (as the node's speed and the interference windows known then stretch it),
//! so the extrapolation is that plan, or the time already elapsed once the attempt overran
//! it (a split read slower than planned).

use super::event_loop::Ev;
use super::{JobPhase, MapTask, Sim, PRIORITY_MAP};

/// `mapreduce.job.speculative.retry-after-no-speculate` default, ms.
pub const RETRY_AFTER_NO_SPECULATE_MS: u64 = 1000;
/// `mapreduce.job.speculative.retry-after-speculate` default, ms.
pub const RETRY_AFTER_SPECULATE_MS: u64 = 15_000;
/// `mapreduce.job.speculative.speculative-cap-running-tasks` default.
pub const CAP_RUNNING_TASKS: f64 = 0.1;
/// `mapreduce.job.speculative.speculative-cap-total-tasks` default.
pub const CAP_TOTAL_TASKS: f64 = 0.01;
/// `mapreduce.job.speculative.minimum-allowed-tasks` default.
pub const MINIMUM_ALLOWED_TASKS: u32 = 10;
/// `StartEndTimesBase.MINIMUM_COMPLETE_PROPORTION_TO_SPECULATE` and
/// `MINIMUM_COMPLETE_NUMBER_TO_SPECULATE` (constants, not settings).
const MINIMUM_COMPLETE_PROPORTION: f64 = 0.05;
const MINIMUM_COMPLETE_NUMBER: u32 = 1;

/// The speculator's settings, Hadoop 3.4's defaults by default.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeculatorOptions {
    pub retry_after_no_speculate_ms: u64,
    pub retry_after_speculate_ms: u64,
    pub cap_running_tasks: f64,
    pub cap_total_tasks: f64,
    pub minimum_allowed_tasks: u32,
}

impl Default for SpeculatorOptions {
    fn default() -> Self {
        SpeculatorOptions {
            retry_after_no_speculate_ms: RETRY_AFTER_NO_SPECULATE_MS,
            retry_after_speculate_ms: RETRY_AFTER_SPECULATE_MS,
            cap_running_tasks: CAP_RUNNING_TASKS,
            cap_total_tasks: CAP_TOTAL_TASKS,
            minimum_allowed_tasks: MINIMUM_ALLOWED_TASKS,
        }
    }
}

impl SpeculatorOptions {
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in [
            (
                "retry_after_no_speculate_ms",
                self.retry_after_no_speculate_ms,
            ),
            ("retry_after_speculate_ms", self.retry_after_speculate_ms),
        ] {
            if value == 0 {
                return Err(format!(
                    "speculator option {name}: value 0 is not an interval; expected at least 1 ms"
                ));
            }
        }
        for (name, value) in [
            ("cap_running_tasks", self.cap_running_tasks),
            ("cap_total_tasks", self.cap_total_tasks),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(format!(
                    "speculator option {name}: value {value} is not a fraction; expected 0 to 1"
                ));
            }
        }
        Ok(())
    }
}

impl Sim<'_> {
    /// The AM registered: its speculator's first round comes one interval later.
    pub(super) fn start_speculator(&mut self, j: u32) {
        if let Some(options) = &self.am_options.speculator {
            let at = self.now + options.retry_after_no_speculate_ms;
            self.push(at, Ev::Speculate(j));
        }
    }

    /// One round of the job's speculator; schedules the next while the job runs.
    pub(super) fn speculate(&mut self, j: u32) {
        let Some(options) = self.am_options.speculator.clone() else {
            return;
        };
        if self.jobs[j as usize].phase == JobPhase::Done {
            return;
        }
        let added = self.maybe_speculate_a_map(j, &options);
        let wait = if added {
            options.retry_after_speculate_ms
        } else {
            options.retry_after_no_speculate_ms
        };
        self.push(self.now + wait, Ev::Speculate(j));
    }

    /// `DefaultSpeculator.maybeScheduleASpeculation` for the job's maps.
    fn maybe_speculate_a_map(&mut self, j: u32, options: &SpeculatorOptions) -> bool {
        let job = &self.jobs[j as usize];
        if job.phase != JobPhase::Running || self.maps_scheduled(j) > 0 {
            return false;
        }
        let total = job.maps_total;
        let done = job.maps_done;
        if done < MINIMUM_COMPLETE_NUMBER
            || (done as f64) < MINIMUM_COMPLETE_PROPORTION * total as f64
        {
            return false;
        }
        let mean_ms = job.map_runtime_sum_ms as f64 / done as f64;
        let now = self.now as f64;
        let (mut speculating, mut running) = (0u32, 0u32);
        let mut best: Option<(f64, u32)> = None;
        for (m, task) in job.maps.iter().enumerate() {
            // A task is looked at through its original attempt, which runs until the task is
            // done. No twin waits for a container here (the job's map needs are met), so a
            // task with a twin has two attempts running.
            if task.twin.is_some_and(|twin| (twin as usize) < m) || !task.running() {
                continue;
            }
            running += 1;
            if task.twin.is_some() {
                speculating += 1;
                continue;
            }
            let started = task.launched_ms.expect("a running attempt was launched") as f64;
            let estimated_end = started + (task.planned_ms as f64).max(now - started);
            let value = estimated_end - (now + mean_ms);
            if value > 0.0 && best.is_none_or(|(b, _)| value > b) {
                best = Some((value, m as u32));
            }
        }
        let allowed = (options.minimum_allowed_tasks as f64)
            .max(options.cap_total_tasks * total as f64)
            .max(options.cap_running_tasks * running as f64) as u32;
        match best {
            Some((_, m)) if allowed > speculating => {
                self.add_speculative_map(j, m);
                true
            }
            _ => false,
        }
    }

    /// Asks for a second attempt of map `m`, with the same block locations as the first.
    fn add_speculative_map(&mut self, j: u32, m: u32) {
        self.counters.speculative_maps += 1;
        self.fs_remove(j);
        let job = &mut self.jobs[j as usize];
        let twin = job.maps.len() as u32;
        let replicas = job.maps[m as usize].replicas;
        job.maps[m as usize].twin = Some(twin);
        let mut attempt = MapTask::new(replicas);
        attempt.twin = Some(m);
        job.maps.push(attempt);
        self.ask_for_map(j, twin);
        self.fs_insert(j);
        self.mark_asks(j);
        self.am_wake(j);
    }

    /// Whether map attempt `m`'s task is done (by it or by its twin).
    pub(super) fn map_task_done(&self, j: u32, m: u32) -> bool {
        let maps = &self.jobs[j as usize].maps;
        maps[m as usize].won || maps[m as usize].twin.is_some_and(|t| maps[t as usize].won)
    }

    /// Map attempt `m` finished its task: the job's mean run time takes it in, and its twin,
    /// if any, is killed (running) or withdrawn (still asked for).
    pub(super) fn map_attempt_won(&mut self, j: u32, m: u32) {
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        let task = &job.maps[m as usize];
        job.map_runtime_sum_ms += now - task.launched_ms.unwrap_or(now);
        let Some(twin) = task.twin else {
            return;
        };
        if m > twin {
            self.counters.speculative_maps_won += 1;
        }
        let other = &self.jobs[j as usize].maps[twin as usize];
        if other.running() {
            self.kill_map_attempt(j, twin);
        } else if !other.assigned {
            self.fs_remove(j);
            self.claim_map(j, twin);
            self.jobs[j as usize].maps[twin as usize].finished = true;
            self.fs_insert(j);
            self.mark_asks(j);
        }
        // Granted and not yet launched: `launch_map` gives the container back.
    }

    /// The AM kills a map attempt whose twin finished: its transfer stops and its container
    /// goes back to the RM.
    fn kill_map_attempt(&mut self, j: u32, m: u32) {
        let task = &mut self.jobs[j as usize].maps[m as usize];
        task.finished = true;
        let (node, container, flow) = (task.node, task.container, task.flow.take());
        if let Some(f) = flow {
            self.cancel_flow(f);
        }
        self.jobs[j as usize].maps_running -= 1;
        // The RM cannot tell this kill from the AM stopping a finished task's container (both
        // end as KILLED_BY_APPMASTER or SIGTERM), so the shim reports it as completed too.
        self.release(j, node, container, PRIORITY_MAP, true);
    }
}
