//! FRESH-static against a brute force. With one job per phase (k = 1) a batch is the
//! two-machine flow shop whose stage times are `w_m / s_m` and `w_r / s_r`; its makespan for an
//! order has the closed form `C_m(j) = C_m(j−1) + a_j`, `C_r(j) = max(C_r(j−1), C_m(j)) + b_j`,
//! and Johnson's rule is optimal there. So for small random batches, Algorithm 1's best split
//! must equal the minimum of that closed form over every split and every order.

use proptest::prelude::*;
use rackwise_core::policy::fresh::batch::{best_split, makespan, JobProfile};

/// The flow-shop makespan of `order` in closed form (independent of the simulation).
fn flow_shop(jobs: &[JobProfile], order: &[usize], map_slots: u32, reduce_slots: u32) -> f64 {
    let time = |work: f64, slots: u32| {
        if work == 0.0 {
            0.0
        } else if slots == 0 {
            f64::INFINITY
        } else {
            work / slots as f64
        }
    };
    let (mut maps_end, mut reduces_end) = (0.0f64, 0.0f64);
    for &j in order {
        maps_end += time(jobs[j].map_work(), map_slots);
        reduces_end = reduces_end.max(maps_end) + time(jobs[j].reduce_work(), reduce_slots);
    }
    reduces_end
}

/// Every order of `0..n` (Heap's algorithm).
fn permutations(n: usize) -> Vec<Vec<usize>> {
    fn heap(k: usize, items: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if k <= 1 {
            out.push(items.clone());
            return;
        }
        for i in 0..k {
            heap(k - 1, items, out);
            let swap = if k % 2 == 0 { i } else { 0 };
            items.swap(swap, k - 1);
        }
    }
    let mut out = Vec::new();
    heap(n, &mut (0..n).collect(), &mut out);
    out
}

fn job() -> impl Strategy<Value = JobProfile> {
    (0u32..6, 0u32..6, 1u32..6, 1u32..6).prop_map(|(maps, reduces, m, r)| JobProfile {
        maps,
        reduces,
        map_time: m as f64,
        reduce_time: r as f64,
    })
}

proptest! {
    #[test]
    fn with_one_job_per_phase_the_best_split_is_the_brute_force_optimum(
        jobs in prop::collection::vec(job(), 1..6),
        slots in 1u32..9,
    ) {
        let orders = permutations(jobs.len());
        let brute = (0..=slots)
            .flat_map(|s_m| orders.iter().map(move |o| (s_m, o)))
            .map(|(s_m, order)| flow_shop(&jobs, order, s_m, slots - s_m))
            .fold(f64::INFINITY, f64::min);
        // With one container, a job with maps and reduces cannot run on any fixed split.
        let Some(choice) = best_split(&jobs, slots, 1) else {
            prop_assert!(brute.is_infinite(), "no split chosen, brute force {}", brute);
            return Ok(());
        };
        prop_assert!((choice.makespan - brute).abs() <= 1e-9 * brute.max(1.0),
            "Algorithm 1 {} vs brute force {}", choice.makespan, brute);
        // The simulation agrees with the closed form on the chosen split and order.
        let closed = flow_shop(&jobs, &choice.order, choice.map_slots, choice.reduce_slots);
        prop_assert!((choice.makespan - closed).abs() <= 1e-9 * closed.max(1.0));
    }

    #[test]
    fn admitting_every_job_is_never_slower_than_the_work_of_the_busier_phase(
        jobs in prop::collection::vec(job(), 1..8),
        s_m in 1u32..6,
        s_r in 1u32..6,
    ) {
        // A lower bound any schedule obeys: each phase's work over its containers.
        let order: Vec<usize> = (0..jobs.len()).collect();
        let span = makespan(&jobs, &order, s_m, s_r, jobs.len());
        let map_bound: f64 = jobs.iter().map(JobProfile::map_work).sum::<f64>() / s_m as f64;
        let reduce_bound: f64 = jobs.iter().map(JobProfile::reduce_work).sum::<f64>() / s_r as f64;
        prop_assert!(span + 1e-9 >= map_bound.max(reduce_bound), "{span} < bounds");
        // And no slower than running the jobs one by one through both phases.
        let serial: f64 = jobs
            .iter()
            .map(|j| j.map_work() / s_m as f64 + j.reduce_work() / s_r as f64)
            .sum();
        prop_assert!(span <= serial + 1e-9, "{span} > serial {serial}");
    }
}
