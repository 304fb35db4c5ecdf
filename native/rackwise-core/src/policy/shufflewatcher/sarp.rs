//! SARP, Shuffle-Aware Reduce Placement (ShuffleWatcher, Figure 6).
//!
//! SARP splits a job's reduces over racks in proportion to where its map output sits once
//! `mapCompletionThreshold` (15 %) of its maps completed, else as SAMP's tentative split. By
//! default (`sarpShares=measured`) the split is read again at every reduce placement from the
//! maps finished by then, so reduces placed late follow the output that is really there;
//! `sarpShares=first-ask` fixes it once, when the job's reduces are first asked for. The split
//! is kept as shares so the quota counts always sum to the job's reduce count, even when that
//! count becomes known only later (largest-remainder rounding, choice 7 in
//! docs/design-choices.md).

use super::samp::SampChoice;
use crate::protocol::RackName;
use crate::state::Job;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Whether enough of the job's maps finished for SARP to split by their measured output.
pub fn trusts_measured_output(job: &Job, known_maps: u32, map_completion_threshold: f64) -> bool {
    let finished = job.finished_maps();
    known_maps > 0
        && finished > 0
        && finished as f64 / known_maps as f64 >= map_completion_threshold
}

/// The per-rack share of a job's reduces, or `None` when nothing says where its output is.
pub fn reduce_shares(
    job: &Job,
    samp: Option<&SampChoice>,
    known_maps: u32,
    map_completion_threshold: f64,
) -> Option<BTreeMap<RackName, f64>> {
    if trusts_measured_output(job, known_maps, map_completion_threshold) {
        // Every map of a job is predicted to emit the same bytes, so a rack's intermediate
        // data is proportional to the maps that finished there.
        let finished = f64::from(job.finished_maps());
        return Some(
            job.finished_maps_by_rack
                .iter()
                .map(|(rack, maps)| (rack.clone(), f64::from(*maps) / finished))
                .collect(),
        );
    }
    samp.map(|samp| samp.tentative_shares.clone())
}

/// Where a shuffle-heavy job's reduces stand against their SARP quota on one rack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaState {
    /// SARP had nothing to go on: the job's reduces are not constrained.
    NoQuota,
    Under,
    Used,
}

/// The job's reduces placed on `rack` against its SARP quota there; the quotas are the shares
/// apportioned over the reduces known now, so they always sum to that count.
pub fn reduce_quota<W: Copy + Into<f64>>(
    job: &Job,
    shares: Option<&BTreeMap<RackName, W>>,
    rack: &RackName,
    pending_reduces: u32,
) -> QuotaState {
    let Some(shares) = shares else {
        return QuotaState::NoQuota;
    };
    let quota = apportioned(job.known_reduces(pending_reduces), shares, rack);
    if job.reduces_on(rack) < quota {
        QuotaState::Under
    } else {
        QuotaState::Used
    }
}

/// Splits `total` into whole counts proportional to `shares` that sum to `total` (see
/// [`apportioned`]); empty when the shares say nothing.
pub fn apportion(total: u32, shares: &BTreeMap<RackName, f64>) -> BTreeMap<RackName, u32> {
    if shares.values().sum::<f64>() <= 0.0 {
        return BTreeMap::new();
    }
    shares
        .keys()
        .map(|rack| (rack.clone(), apportioned(total, shares, rack)))
        .collect()
}

/// Rack `rack`'s whole count when `total` is split in proportion to `shares` so that the counts
/// sum to `total`: floors first, then one more to the largest remainders (ties to the rack that
/// sorts first). Only the asked rack's count is computed: this runs for every shuffle-heavy
/// reduce ask on every offer, and building every rack's count there dominated a run. The
/// shares are weights (fractions, or finished maps per rack): only their ratios count.
pub fn apportioned<W: Copy + Into<f64>>(
    total: u32,
    shares: &BTreeMap<RackName, W>,
    rack: &RackName,
) -> u32 {
    let sum: f64 = shares.values().map(|s| (*s).into()).sum();
    if sum <= 0.0 {
        return 0;
    }
    let Some((key, share)) = shares.get_key_value(rack) else {
        return 0;
    };
    let exact = |share: W| total as f64 * share.into() / sum;
    let remainder = |x: f64| x - x.floor();
    let mine = exact(*share);
    let floors: u32 = shares.values().map(|s| exact(*s).floor() as u32).sum();
    let left = total.saturating_sub(floors);
    // The racks that get their extra one before this rack: larger remainders, and equal ones
    // that sort first.
    let mut ahead = 0;
    let mut sorts_first = true;
    for (other, share) in shares {
        if std::ptr::eq(other, key) {
            sorts_first = false;
            continue;
        }
        match remainder(exact(*share)).total_cmp(&remainder(mine)) {
            Ordering::Greater => ahead += 1,
            Ordering::Equal if sorts_first => ahead += 1,
            _ => {}
        }
    }
    mine.floor() as u32 + u32::from(ahead < left)
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
            .map(|(r, s)| (RackName(r.to_string().into()), *s))
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
        assert_eq!(apportioned(4, &thirds, &RackName("/d".into())), 0);
    }
}
