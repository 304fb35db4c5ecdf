//! FRESH's overall fairness: a job's resource use is the container-time of all its tasks, maps
//! and reduces together, per unit of time since it started (paper Eq. 1); the fairness of a set
//! of jobs is Jain's index of those uses.

/// `r_i = Σ task time / (now − T_i)`: finished tasks count `finish − start`, running ones
/// `now − start`. A job that started just now has used nothing yet: 0.
pub fn resource_use(busy_ms: u64, started_ms: u64, now_ms: u64) -> f64 {
    let elapsed = now_ms.saturating_sub(started_ms);
    if elapsed == 0 {
        0.0
    } else {
        busy_ms as f64 / elapsed as f64
    }
}

/// Jain's index `(Σx)² / (n Σx²)`, in `[1/n, 1]`; `None` for no values or all zero.
pub fn jain(values: &[f64]) -> Option<f64> {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|v| v * v).sum();
    (squares > 0.0).then(|| sum * sum / (values.len() as f64 * squares))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_example_under_fair_is_11_7_10_slot_units() {
        // §III: 4 map + 4 reduce slots, unit tasks; FairScheduler's per-phase shares per time
        // unit (the paper's table) add up to 11, 7 and 10 slot-units over 5 units.
        let per_unit = [[2, 4, 2, 1, 2], [1, 2, 2, 1, 1], [1, 2, 4, 2, 1]];
        let used: Vec<u64> = per_unit.iter().map(|row| row.iter().sum()).collect();
        assert_eq!(used, [11, 7, 10]);
        let uses: Vec<f64> = used.iter().map(|&u| resource_use(u, 0, 5)).collect();
        // Jain = 28² / (3 · (121 + 49 + 100)) = 784 / 810.
        let index = jain(&uses).unwrap();
        assert!((index - 784.0 / 810.0).abs() < 1e-12, "{index}");
        assert!((jain(&[0.7, 0.7, 0.7]).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(jain(&[1.0, 0.0]), Some(0.5));
    }

    #[test]
    fn nothing_used_or_nothing_elapsed_is_no_use() {
        assert_eq!(resource_use(500, 1000, 1000), 0.0);
        assert_eq!(resource_use(500, 1000, 2000), 0.5);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }
}
