//! SARP, Shuffle-Aware Reduce Placement (ShuffleWatcher, Figure 6).
//!
//! When a job's reduces are first enabled (its ApplicationMaster asks for them), SARP fixes
//! how its reduces should split over racks: in proportion to where its map output sits once
//! `mapCompletionThreshold` (15 %) of its maps completed, else SAMP's tentative split. The
//! split is kept as shares so the quota counts always sum to the job's reduce count, even when
//! that count becomes known only later (largest-remainder rounding, ambiguity 7).

use crate::protocol::RackName;
use crate::state::Job;
use std::collections::BTreeMap;

/// The per-rack share of a job's reduces, or `None` when nothing says where its output is.
pub fn reduce_shares(
    job: &Job,
    known_maps: u32,
    map_completion_threshold: f64,
) -> Option<BTreeMap<RackName, f64>> {
    let finished = job.finished_maps();
    let completed_enough = known_maps > 0
        && finished > 0
        && finished as f64 / known_maps as f64 >= map_completion_threshold;
    if completed_enough {
        // Every map of a job is predicted to emit the same bytes, so a rack's intermediate
        // data is proportional to the maps that finished there.
        return Some(
            job.finished_maps_by_rack
                .iter()
                .map(|(rack, maps)| (rack.clone(), *maps as f64 / finished as f64))
                .collect(),
        );
    }
    job.samp.as_ref().map(|samp| samp.tentative_shares.clone())
}

/// Splits `total` into whole counts proportional to `shares` that sum to `total`: floors first,
/// then one more to the largest remainders (ties to the rack that sorts first).
pub fn apportion(total: u32, shares: &BTreeMap<RackName, f64>) -> BTreeMap<RackName, u32> {
    let sum: f64 = shares.values().sum();
    if sum <= 0.0 {
        return BTreeMap::new();
    }
    let exact: Vec<(&RackName, f64)> = shares
        .iter()
        .map(|(rack, share)| (rack, total as f64 * share / sum))
        .collect();
    let mut counts: BTreeMap<RackName, u32> = exact
        .iter()
        .map(|(rack, x)| ((*rack).clone(), x.floor() as u32))
        .collect();
    let mut left = total.saturating_sub(counts.values().sum());
    let mut by_remainder = exact.clone();
    by_remainder.sort_by(|a, b| (b.1 - b.1.floor()).total_cmp(&(a.1 - a.1.floor())));
    for (rack, _) in by_remainder {
        if left == 0 {
            break;
        }
        *counts.entry(rack.clone()).or_insert(0) += 1;
        left -= 1;
    }
    counts
}

/// Bytes of shuffle that cross racks when reduces sit as `reduces_by_rack` and map output as
/// `output_by_rack`: every reduce fetches an equal slice of every rack's output, and the slices
/// held on other racks cross.
pub fn cross_rack_shuffle_bytes(
    output_by_rack: &BTreeMap<RackName, f64>,
    reduces_by_rack: &BTreeMap<RackName, u32>,
) -> f64 {
    let output: f64 = output_by_rack.values().sum();
    let reduces: u32 = reduces_by_rack.values().sum();
    if reduces == 0 {
        return 0.0;
    }
    reduces_by_rack
        .iter()
        .map(|(rack, count)| {
            let local = output_by_rack.get(rack).copied().unwrap_or(0.0);
            *count as f64 / reduces as f64 * (output - local)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(list: &[(&str, f64)]) -> BTreeMap<RackName, f64> {
        list.iter()
            .map(|(r, s)| (RackName(r.to_string()), *s))
            .collect()
    }

    #[test]
    fn quotas_always_sum_to_the_reduce_count() {
        let thirds = shares(&[("/a", 1.0), ("/b", 1.0), ("/c", 1.0)]);
        for total in 0..20 {
            assert_eq!(apportion(total, &thirds).values().sum::<u32>(), total);
        }
        let counts = apportion(10, &shares(&[("/a", 0.55), ("/b", 0.25), ("/c", 0.2)]));
        assert_eq!(counts.values().copied().collect::<Vec<_>>(), [6, 2, 2]);
        let counts = apportion(4, &thirds);
        assert_eq!(counts.values().copied().collect::<Vec<_>>(), [2, 1, 1]);
    }
}
