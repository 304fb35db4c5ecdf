//! FRESH-static (paper Algorithm 1) and Johnson's rule: for a batch of jobs with known profiles,
//! the map/reduce split of `S` containers and the job order with the shortest makespan, under
//! fair sharing inside each phase and at most `k` jobs per phase.
//!
//! Pure functions of their inputs, shared by the `fresh` policy (which orders the jobs waiting
//! for admission by Johnson's rule) and the simulator's `fresh-static` command.

use std::collections::VecDeque;

/// What FRESH knows of a job: its task counts and the mean time of one task of each kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobProfile {
    pub maps: u32,
    pub reduces: u32,
    /// Mean time of one map task (any unit; the makespan comes out in the same unit).
    pub map_time: f64,
    pub reduce_time: f64,
}

impl JobProfile {
    /// `w_m(i) = n_m(i) · t̄_m(i)`: container-time the job's map phase needs.
    pub fn map_work(&self) -> f64 {
        self.maps as f64 * self.map_time
    }

    /// `w_r(i) = n_r(i) · t̄_r(i)`.
    pub fn reduce_work(&self) -> f64 {
        self.reduces as f64 * self.reduce_time
    }
}

/// Johnson's rule for the two-stage flow shop: the indices of `stages` (first-stage time,
/// second-stage time) in the order that minimises the makespan when one job is in each stage
/// at a time. Jobs whose first stage is no longer than their second go first, by increasing
/// first stage; the others follow by decreasing second stage. Ties keep the input order.
pub fn johnson_order(stages: &[(f64, f64)]) -> Vec<usize> {
    let (mut front, mut back): (Vec<usize>, Vec<usize>) =
        (0..stages.len()).partition(|&i| stages[i].0 <= stages[i].1);
    front.sort_by(|&x, &y| stages[x].0.total_cmp(&stages[y].0));
    back.sort_by(|&x, &y| stages[y].1.total_cmp(&stages[x].1));
    front.extend(back);
    front
}

/// The makespan Algorithm 1 predicts for `jobs` run in the given order with `map_slots` and
/// `reduce_slots` containers, at most `k` jobs in each phase (`k ≥ 1`). Every job of a phase
/// gets an equal share of that phase's containers (Fair inside a phase, as the paper assumes);
/// a job done with its maps enters the reduce phase if fewer than `k` jobs are there, else
/// waits its turn (FIFO). Infinite when work is left that no container can serve.
///
/// The paper's listing deducts `w_m(u)` from every job in line 12; this deducts the work each
/// job actually did in the elapsed time (its share × time), the consistent reading.
pub fn makespan(
    jobs: &[JobProfile],
    order: &[usize],
    map_slots: u32,
    reduce_slots: u32,
    k: usize,
) -> f64 {
    let k = k.max(1);
    let mut remaining: Vec<f64> = jobs.iter().map(JobProfile::map_work).collect();
    let mut next = order.iter().copied();
    let mut mapping: Vec<usize> = next.by_ref().take(k).collect();
    let mut reducing: Vec<usize> = Vec::with_capacity(k);
    let mut waiting: VecDeque<usize> = VecDeque::new();
    let mut time = 0.0;
    while !mapping.is_empty() || !reducing.is_empty() {
        let map_share = map_slots as f64 / mapping.len().max(1) as f64;
        let reduce_share = reduce_slots as f64 / reducing.len().max(1) as f64;
        // The job of each phase that finishes it first, and how long that takes.
        let first = |set: &[usize], share: f64| {
            set.iter()
                .enumerate()
                .min_by(|a, b| remaining[*a.1].total_cmp(&remaining[*b.1]))
                .map(|(at, &job)| (at, time_on(remaining[job], share)))
        };
        let map_done = first(&mapping, map_share);
        let reduce_done = first(&reducing, reduce_share);
        let map_first = match (map_done, reduce_done) {
            (Some((_, m)), Some((_, r))) => m < r,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let Some((at, elapsed)) = (if map_first { map_done } else { reduce_done }) else {
            return f64::INFINITY;
        };
        if elapsed.is_infinite() {
            return f64::INFINITY;
        }
        time += elapsed;
        for &job in &mapping {
            remaining[job] -= elapsed * map_share;
        }
        for &job in &reducing {
            remaining[job] -= elapsed * reduce_share;
        }
        if map_first {
            let job = mapping.swap_remove(at);
            remaining[job] = jobs[job].reduce_work();
            mapping.extend(next.next());
            if reducing.len() < k {
                reducing.push(job);
            } else {
                waiting.push_back(job);
            }
        } else {
            reducing.swap_remove(at);
            reducing.extend(waiting.pop_front());
        }
    }
    time
}

/// The best static configuration of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticChoice {
    pub map_slots: u32,
    pub reduce_slots: u32,
    /// The batch order (indices into the jobs), Johnson's rule for this split.
    pub order: Vec<usize>,
    pub makespan: f64,
}

/// One split of Algorithm 1: the jobs in Johnson's order for the per-phase times of this
/// split (`w_m / s_m`, `w_r / s_r`: what a job alone in a phase takes), simulated by
/// [`makespan`].
pub fn at_split(jobs: &[JobProfile], map_slots: u32, reduce_slots: u32, k: usize) -> StaticChoice {
    let stages: Vec<(f64, f64)> = jobs
        .iter()
        .map(|job| {
            (
                time_on(job.map_work(), map_slots as f64),
                time_on(job.reduce_work(), reduce_slots as f64),
            )
        })
        .collect();
    let order = johnson_order(&stages);
    let span = makespan(jobs, &order, map_slots, reduce_slots, k);
    StaticChoice {
        map_slots,
        reduce_slots,
        order,
        makespan: span,
    }
}

/// Algorithm 1: [`at_split`] for every split of `slots` containers into map and reduce
/// containers; the shortest. Ties go to the split with fewer map containers. `None` for an
/// empty batch or when no split can run it.
///
/// Cost `O(S · N · (log N + k))` for `S` slots, `N` jobs: independent of the task counts.
pub fn best_split(jobs: &[JobProfile], slots: u32, k: usize) -> Option<StaticChoice> {
    if jobs.is_empty() {
        return None;
    }
    (0..=slots)
        .map(|map_slots| at_split(jobs, map_slots, slots - map_slots, k))
        .filter(|choice| choice.makespan.is_finite())
        .reduce(|best, choice| {
            if choice.makespan < best.makespan {
                choice
            } else {
                best
            }
        })
}

/// How long `work` takes on `containers` (infinite on none, unless no work is left).
fn time_on(work: f64, containers: f64) -> f64 {
    if work <= 0.0 {
        0.0
    } else {
        work / containers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's §III example: every task takes one time unit.
    fn paper_example() -> Vec<JobProfile> {
        [(2, 9), (3, 4), (7, 3)]
            .map(|(maps, reduces)| JobProfile {
                maps,
                reduces,
                map_time: 1.0,
                reduce_time: 1.0,
            })
            .to_vec()
    }

    #[test]
    fn johnson_puts_short_first_stages_first_and_short_second_stages_last() {
        // (a, b): J0 a≤b a=3; J1 a>b b=2; J2 a≤b a=1; J3 a>b b=5.
        let order = johnson_order(&[(3.0, 4.0), (6.0, 2.0), (1.0, 9.0), (7.0, 5.0)]);
        assert_eq!(order, [2, 0, 3, 1]);
    }

    #[test]
    fn paper_example_at_4_4_with_every_job_admitted_takes_5_5_units() {
        // Hand-run of Algorithm 1, k = 3, order J1 J2 J3, W = (2, 3, 7):
        // t=1.5 J1 maps done (3 jobs × 4/3 slots); t=2.0 J2 maps done (2 jobs × 2 slots, J1
        // reducing on 4); t=3.0 J3 maps done (alone on 4; J1 7→5, J2 4→2 on 2 each);
        // t=4.5 J2 done (3 reducers × 4/3); t=5.0 J3 done (2 × 2); t=5.5 J1 done.
        let span = makespan(&paper_example(), &[0, 1, 2], 4, 4, 3);
        assert!((span - 5.5).abs() < 1e-9, "{span}");
    }

    #[test]
    fn paper_example_with_one_job_per_phase_is_best_at_4_4() {
        // k = 1 is the two-machine flow shop with stage times w/s. By hand, Johnson order
        // J1 J2 J3 at each split: 3:5 gives 4.6, 4:4 gives 4.5, 5:3 gives 5.73, 2:6 gives 6.5.
        let choice = best_split(&paper_example(), 8, 1).expect("a split");
        assert_eq!((choice.map_slots, choice.reduce_slots), (4, 4));
        assert_eq!(choice.order, [0, 1, 2]);
        assert!((choice.makespan - 4.5).abs() < 1e-9, "{}", choice.makespan);
        let at_3_5 = makespan(&paper_example(), &[0, 1, 2], 3, 5, 1);
        assert!((at_3_5 - 4.6).abs() < 1e-9, "{at_3_5}");
    }

    #[test]
    fn a_batch_without_reduces_takes_every_container_for_maps() {
        let jobs = [JobProfile {
            maps: 10,
            reduces: 0,
            map_time: 2.0,
            reduce_time: 5.0,
        }];
        let choice = best_split(&jobs, 5, 1).expect("a split");
        assert_eq!((choice.map_slots, choice.makespan), (5, 4.0));
    }

    #[test]
    fn work_no_container_can_serve_never_ends() {
        let jobs = paper_example();
        assert_eq!(makespan(&jobs, &[0, 1, 2], 8, 0, 1), f64::INFINITY);
        assert_eq!(best_split(&jobs, 0, 1), None);
    }
}
