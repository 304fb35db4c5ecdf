//! FRESH's dynamic slot configuration (paper Algorithms 2 and 3, Theorem 1): how many of a
//! queue's containers should run maps, from the remaining map and reduce work, looking ahead
//! when the job closest to the end of its map phase is about to bring its reduce work in.

/// The job of the map phase with the least map work left (`J_a`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lightest {
    /// `w'_m(a)`: its map work left.
    pub map_work_left: f64,
    /// Fraction of its maps finished (the progress compared with τ1).
    pub progress: f64,
    /// `m_a`: map containers it holds now.
    pub map_containers: f64,
    /// `w_r(a)`: the reduce work it brings when its maps are done.
    pub reduce_work: f64,
}

/// What Algorithm 3 reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShareInputs {
    /// `RW_m`: map work left of the jobs in the map phase.
    pub map_work_left: f64,
    /// `RW_r`: reduce work left of the jobs reducing or waiting to reduce.
    pub reduce_work_left: f64,
    pub lightest: Option<Lightest>,
    /// `w_m(b)`: map work of the job admitted next (0 when none waits).
    pub next_map_work: f64,
    /// `k`: jobs in the map phase.
    pub k: f64,
    /// `r`: recent mean time between reduce completions; `None` before two completions.
    pub reduce_interval: Option<f64>,
    /// `S`: the containers shared out (the queue's, with the one being offered).
    pub containers: f64,
    /// `s_m`: of those, running maps.
    pub map_containers: f64,
    /// τ1: map progress of `J_a` from which the lookahead applies (paper 0.8).
    pub lookahead_progress: f64,
    /// τ2: relative gap between the share reached and the share expected that switches to the
    /// expected one (paper 0.6).
    pub switch_gap: f64,
}

/// Theorem 1: reduce containers freed while `J_a` finishes its maps, when one reduce finishes
/// every `r` and `J_a` gets its `1/k` of the `θ_cur` map share of each freed container.
/// `x² c + m_a x − w'_m(a) = 0` with `c = θ_cur / (2 r k)` gives the time `x`; `η = x / r`.
/// With `c = 0` (no new map containers) `x = w'_m(a) / m_a`; with neither, `J_a` never ends
/// and every container is freed: `containers`.
pub fn freed_reduce_containers(
    theta_cur: f64,
    lightest: &Lightest,
    k: f64,
    reduce_interval: f64,
    containers: f64,
) -> f64 {
    let c = theta_cur / (2.0 * reduce_interval * k);
    let m = lightest.map_containers;
    let w = lightest.map_work_left;
    let time = if c > 0.0 {
        ((m * m + 4.0 * c * w).sqrt() - m) / (2.0 * c)
    } else if m > 0.0 {
        w / m
    } else {
        return containers;
    };
    (time / reduce_interval).min(containers)
}

/// Algorithm 3 (`CalExpSm`): the expected number of map containers, or `None` when no work is
/// left to share. Algorithm 2 then runs a map on a freed container iff this exceeds `s_m`.
pub fn expected_map_containers(inputs: &ShareInputs) -> Option<f64> {
    let total = inputs.map_work_left + inputs.reduce_work_left;
    if total <= 0.0 {
        return None;
    }
    let theta_cur = inputs.map_work_left / total;
    let current = Some(theta_cur * inputs.containers);
    let (Some(a), Some(r)) = (inputs.lightest, inputs.reduce_interval) else {
        return current;
    };
    if a.progress < inputs.lookahead_progress || r <= 0.0 {
        return current;
    }
    // When J_a's maps are done, the other k−1 jobs of the phase have done about as much.
    let map_after =
        (inputs.map_work_left - a.map_work_left * inputs.k).max(0.0) + inputs.next_map_work;
    let reduce_after = inputs.reduce_work_left + a.reduce_work;
    let theta_exp = map_after / (map_after + reduce_after);
    let eta = freed_reduce_containers(theta_cur, &a, inputs.k, r, inputs.containers);
    let reached = (inputs.map_containers + theta_cur * eta) / inputs.containers;
    let gap = (reached - theta_exp).abs();
    // Relative to θ_exp; with θ_exp = 0 any gap is infinitely large.
    let switch = if theta_exp > 0.0 {
        gap / theta_exp > inputs.switch_gap
    } else {
        gap > 0.0
    };
    Some(if switch {
        theta_exp * inputs.containers
    } else {
        theta_cur * inputs.containers
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> ShareInputs {
        ShareInputs {
            map_work_left: 300.0,
            reduce_work_left: 100.0,
            lightest: Some(Lightest {
                map_work_left: 100.0,
                progress: 0.9,
                map_containers: 2.0,
                reduce_work: 500.0,
            }),
            next_map_work: 0.0,
            k: 2.0,
            reduce_interval: Some(10.0),
            containers: 8.0,
            map_containers: 6.0,
            lookahead_progress: 0.8,
            switch_gap: 0.6,
        }
    }

    #[test]
    fn theorem_1_worked_example() {
        // θ = 0.5, r = 10, k = 2: c = 0.5 / 40 = 0.0125; √(2² + 4·0.0125·100) = √9 = 3;
        // η = (3 − 2) / (2 · 0.0125 · 10) = 4.
        let a = inputs().lightest.unwrap();
        let eta = freed_reduce_containers(0.5, &a, 2.0, 10.0, 100.0);
        assert!((eta - 4.0).abs() < 1e-9, "{eta}");
        // No map share: J_a keeps its 2 containers, 100 / 2 = 50 = 5 reduce completions.
        assert!((freed_reduce_containers(0.0, &a, 2.0, 10.0, 100.0) - 5.0).abs() < 1e-9);
        let stalled = Lightest {
            map_containers: 0.0,
            ..a
        };
        assert_eq!(freed_reduce_containers(0.0, &stalled, 2.0, 10.0, 8.0), 8.0);
    }

    #[test]
    fn far_from_a_phase_change_the_share_follows_the_remaining_work() {
        let mut far = inputs();
        far.lightest.as_mut().unwrap().progress = 0.5;
        // θ_cur = 300 / 400 = 0.75 of 8 containers.
        assert_eq!(expected_map_containers(&far), Some(6.0));
        let unmeasured = ShareInputs {
            reduce_interval: None,
            ..inputs()
        };
        assert_eq!(expected_map_containers(&unmeasured), Some(6.0));
    }

    #[test]
    fn a_reduce_heavy_job_about_to_finish_its_maps_turns_containers_to_reduces_early() {
        // θ_cur = 0.75. After J_a: RW'_m = 300 − 100·2 + 0 = 100, RW'_r = 100 + 500 = 600,
        // θ_exp = 1/7 ≈ 0.143. Theorem 1 at θ_cur = 0.75, r = 10, k = 2: c = 0.01875,
        // x = (√(4 + 7.5) − 2) / 0.0375 = 37.10, η = 3.71; s'_m = 6 + 0.75·3.71 = 8.78,
        // s'_m / S = 1.10, |1.10 − 0.143| / 0.143 = 6.7 > 0.6: expect θ_exp·S = 8/7.
        let expected = expected_map_containers(&inputs()).unwrap();
        assert!((expected - 8.0 / 7.0).abs() < 1e-9, "{expected}");
    }

    #[test]
    fn a_lookahead_that_agrees_with_the_current_share_keeps_it() {
        // J_a brings little reduce work and a job of equal map work follows: RW'_m = 300 −
        // 200 + 200 = 300, RW'_r = 100 + 20 = 120, θ_exp = 0.714; s'_m / S = (4.5 + 0.75·η)/8
        // with η = 3.71: 0.91, gap 0.27 relative < 0.6: θ_cur·S = 6.
        let mut close = inputs();
        close.map_containers = 4.5;
        close.next_map_work = 200.0;
        close.lightest.as_mut().unwrap().reduce_work = 20.0;
        assert_eq!(expected_map_containers(&close), Some(6.0));
    }

    #[test]
    fn no_work_left_expresses_no_preference() {
        let idle = ShareInputs {
            map_work_left: 0.0,
            reduce_work_left: 0.0,
            ..inputs()
        };
        assert_eq!(expected_map_containers(&idle), None);
    }
}
