//! SAMP, Shuffle-Aware Map Placement (ShuffleWatcher, Figure 4, whose tail the paper leaves
//! open: our reading of it follows).
//!
//! Once per job, when its first map asks arrive, SAMP picks the racks the job's maps should
//! prefer. It sorts the racks by how many of the job's splits they hold, adds them one by one
//! and keeps the set with the lowest predicted cross-rack traffic: the remote map reads the set
//! forces plus the cross-rack shuffle that follows if reduces are later placed in proportion to
//! map output (SARP). Few racks localise the shuffle; too few force remote map reads.
//!
//! The RM only tells us, per rack, how many of the job's maps have a replica there (the MapReduce
//! AM's rack asks), not which blocks share replicas. Our choices (choice 4 in docs/design-choices.md):
//! * blocks with no replica in a set of racks: `M × Π (1 − c[x]/M)`, replicas taken as
//!   independent across racks;
//! * maps whose splits the set holds are balanced across the set's racks (they free up at
//!   roughly the same rate), each rack taking at most the maps it holds; remote maps spread
//!   evenly;
//! * equally-holding racks are ordered by how many other jobs already prefer them, then by
//!   name, which spreads jobs whose data sit on the same racks (the paper's Figure 5).

use crate::protocol::RackName;
use std::collections::{BTreeMap, BTreeSet};

/// SAMP's decision for one job.
#[derive(Debug, Clone, PartialEq)]
pub struct SampChoice {
    pub preferred: BTreeSet<RackName>,
    /// Predicted share of the job's map output per rack, for SARP's TentativeReducePerRack.
    pub tentative_shares: BTreeMap<RackName, f64>,
}

/// Chooses PreferredMapRacks for a job of `maps` maps whose splits have a replica on each rack
/// as `replicas` says, with shuffle/input `ratio`. `preferred_by_others` counts, per rack, the
/// running jobs that already prefer it. `None` when the asks carry no rack at all.
pub fn choose(
    maps: u32,
    replicas: &BTreeMap<RackName, u32>,
    ratio: f64,
    preferred_by_others: &BTreeMap<RackName, u32>,
) -> Option<SampChoice> {
    let total = maps as f64;
    let mut sorted: Vec<(&RackName, f64)> = replicas
        .iter()
        .filter(|(_, count)| **count > 0)
        .map(|(rack, count)| (rack, (*count as f64).min(total)))
        .collect();
    if total <= 0.0 || sorted.is_empty() {
        return None;
    }
    let others = |rack: &RackName| preferred_by_others.get(rack).copied().unwrap_or(0);
    sorted.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| others(a.0).cmp(&others(b.0)))
            .then_with(|| a.0.cmp(b.0))
    });

    let mut best: Option<(f64, SampChoice)> = None;
    for size in 1..=sorted.len() {
        let chosen = &sorted[..size];
        let uncovered = total * chosen.iter().map(|(_, c)| 1.0 - c / total).product::<f64>();
        let held = balance(total - uncovered, chosen);
        let remote_each = uncovered / size as f64;
        let shares: BTreeMap<RackName, f64> = chosen
            .iter()
            .zip(held)
            .map(|((rack, _), maps_here)| ((*rack).clone(), (maps_here + remote_each) / total))
            .collect();
        let concentration: f64 = shares.values().map(|f| f * f).sum();
        // Costs in units of one map's input: remote reads plus shuffle crossing racks.
        let cost = uncovered + ratio * total * (1.0 - concentration);
        if best
            .as_ref()
            .is_none_or(|(lowest, _)| cost < *lowest - 1e-9)
        {
            best = Some((
                cost,
                SampChoice {
                    preferred: shares.keys().cloned().collect(),
                    tentative_shares: shares,
                },
            ));
        }
    }
    best.map(|(_, choice)| choice)
}

/// Spreads `covered` maps evenly over the racks, each taking at most what it holds (water
/// filling), and returns each rack's part in the racks' order.
fn balance(covered: f64, racks: &[(&RackName, f64)]) -> Vec<f64> {
    let mut parts = vec![0.0; racks.len()];
    let mut open: Vec<usize> = (0..racks.len()).collect();
    let mut left = covered;
    while left > 1e-9 && !open.is_empty() {
        let even = left / open.len() as f64;
        let mut still_open = Vec::new();
        for &i in &open {
            let room = racks[i].1 - parts[i];
            let take = even.min(room);
            parts[i] += take;
            left -= take;
            if room - take > 1e-9 {
                still_open.push(i);
            }
        }
        if still_open.len() == open.len() {
            break;
        }
        open = still_open;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn racks(list: &[(&str, u32)]) -> BTreeMap<RackName, u32> {
        list.iter()
            .map(|(r, c)| (RackName(r.to_string().into()), *c))
            .collect()
    }

    fn names(choice: &SampChoice) -> Vec<&str> {
        choice.preferred.iter().map(|r| &*r.0).collect()
    }

    #[test]
    fn data_on_one_rack_keeps_the_maps_there() {
        let choice = choose(
            10,
            &racks(&[("/r1", 10), ("/r2", 4)]),
            1.0,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(names(&choice), ["/r1"]);
        assert_eq!(choice.tentative_shares[&RackName("/r1".into())], 1.0);
    }

    #[test]
    fn a_light_job_spreads_rather_than_read_remotely() {
        // Each rack holds half the splits: one rack alone forces ~half the maps remote; with a
        // tiny shuffle, spreading over both racks is cheaper.
        let choice = choose(
            10,
            &racks(&[("/r1", 5), ("/r2", 5)]),
            0.01,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(names(&choice), ["/r1", "/r2"]);
    }

    #[test]
    fn a_heavy_job_accepts_some_remote_maps_to_localise_its_shuffle() {
        let choice = choose(
            10,
            &racks(&[("/r1", 8), ("/r2", 3)]),
            10.0,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(names(&choice), ["/r1"]);
    }

    #[test]
    fn no_rack_information_means_no_preference() {
        assert_eq!(choose(10, &BTreeMap::new(), 1.0, &BTreeMap::new()), None);
    }
}
