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
//! * other jobs' claims on a rack: each job that prefers it counts by the share of its maps it
//!   puts there (`SampChoice::claims`), so a job spread over four racks weighs about a quarter
//!   on each, and one concentrated on a rack a whole job;
//! * equally-holding racks are ordered by other jobs' claims on them, then by name, which
//!   spreads jobs whose data sit on the same racks (the paper's Figure 5);
//! * a set that forces remote map reads must be able to give the job its containers: each rack
//!   gives its map containers shared with the other jobs' claims on it, and the set must give
//!   at least what the job can expect to run at once (its maps, at most an even share of the
//!   cluster). Short of that the job's maps would wait for the racks (NASS holds maps for their
//!   preferred racks) and then read across racks anyway. A set holding every split costs the
//!   job concurrency alone, the trade ShuffleWatcher makes, and need not (`CapacityRule`);
//! * only racks with nodes count. Storage without locality names a rack no node is on
//!   (`/default-rack`); a job with no split on a rack with nodes prefers no rack, so none of its
//!   maps waits for one (an RM without data locality must not hold work for it).

use crate::protocol::RackName;
use std::collections::{BTreeMap, BTreeSet};

/// SAMP's decision for one job.
#[derive(Debug, Clone, PartialEq)]
pub struct SampChoice {
    /// The racks the job's maps prefer; empty when the best set is every rack with nodes. A
    /// preference for every rack binds nothing: such a job waits for locality as one without a
    /// SAMP choice, and later jobs' choices do not count it against any rack's containers (a
    /// job alone on the cluster needs every rack for its even share; counted on each rack, it
    /// halved what every rack could give the next job, so a shuffle-heavy job arriving beside
    /// it was given every rack too and its maps spread).
    pub preferred: BTreeSet<RackName>,
    /// Predicted share of the job's map output per rack, for SARP's TentativeReducePerRack.
    pub tentative_shares: BTreeMap<RackName, f64>,
}

impl SampChoice {
    /// Whether the job prefers `rack`; `None` when it prefers no rack over another.
    pub fn prefers(&self, rack: &RackName) -> Option<bool> {
        (!self.preferred.is_empty()).then(|| self.preferred.contains(rack))
    }

    /// The job's claim on each rack it prefers: the share of its maps it puts there (summing to
    /// 1). Counting a job whole on every rack it prefers took a shuffle-light job spread over
    /// ten racks for ten jobs' demand, and the capacity rule then kept a shuffle-heavy job
    /// arriving beside it off those racks, so its maps spread (docs/simulator.md, "SAMP's
    /// claims on a rack").
    pub fn claims(&self) -> impl Iterator<Item = (&RackName, f64)> {
        self.preferred.iter().map(|rack| {
            let share = self.tentative_shares.get(rack).copied().unwrap_or(0.0);
            (rack, share)
        })
    }

    /// Whether a map of a job of shuffle/input `ratio` that reads its split locally off the
    /// preferred racks moves fewer bytes across racks than one on a preferred rack reading its
    /// split from another rack (SAMP's cost, in one map's input). Off the racks, its output
    /// (`ratio`) crosses to the reduces SARP puts on the preferred racks. On a preferred rack
    /// holding a share `s` of the output, the input (1) crosses and the output crosses for the
    /// reduces elsewhere, `ratio · (1 − s)`. Off the racks is cheaper when `ratio · s < 1`; `s`
    /// is the largest preferred rack's share, so the map goes elsewhere only when that beats
    /// even the rack that keeps most of its shuffle.
    pub fn local_elsewhere_pays(&self, ratio: f64) -> bool {
        let largest_share = self
            .preferred
            .iter()
            .filter_map(|rack| self.tentative_shares.get(rack))
            .fold(0.0_f64, |largest, share| largest.max(*share));
        ratio * largest_share < 1.0
    }
}

/// What a job's racks can give it: per rack with nodes, the map containers it holds, and the
/// job's expected concurrent maps.
#[derive(Debug, Clone, PartialEq)]
pub struct RackCapacity {
    /// Map containers of the job's size each rack with nodes holds.
    pub containers: BTreeMap<RackName, f64>,
    /// The containers the job can expect at once: an even share of the cluster among the jobs.
    pub fair_share: f64,
    /// Which rack sets must be able to give the job that share.
    pub rule: CapacityRule,
    /// The most of the job's maps, running at that share, that a set short of every rack may
    /// make read across racks at once, per rack of the set (`sampRemoteReadsPerRack`); `None`:
    /// no cap.
    pub remote_reads_per_rack: Option<f64>,
}

/// Which of SAMP's candidate rack sets must be able to run the job's maps at its even share
/// (`sampCapacity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapacityRule {
    /// Every set short of all racks.
    Always,
    /// Only a set that forces remote map reads. A set holding every split reads nothing across
    /// racks, so waiting for its containers costs the job concurrency alone: the trade
    /// ShuffleWatcher makes for shuffle locality. A set that forces remote reads and cannot
    /// give the job its share would make its maps wait and then read across racks anyway.
    RemoteReads,
    /// No set: the cheapest by cost alone (Figure 4 as written).
    Never,
}

/// Chooses PreferredMapRacks for a job of `maps` maps whose splits have a replica on each rack
/// as `replicas` says, with shuffle/input `ratio`. `claimed_by_others` sums, per rack, the
/// running jobs' claims on it (`SampChoice::claims`). `None` when the cluster has no rack with
/// nodes.
pub fn choose(
    maps: u32,
    replicas: &BTreeMap<RackName, u32>,
    ratio: f64,
    claimed_by_others: &BTreeMap<RackName, f64>,
    capacity: &RackCapacity,
) -> Option<SampChoice> {
    let total = maps as f64;
    let others = |rack: &RackName| claimed_by_others.get(rack).copied().unwrap_or(0.0);
    // What a rack can give this job: its containers, shared with the other jobs' claims on it.
    let gives = |rack: &RackName, containers: f64| containers / (1.0 + others(rack));
    // Racks with nodes, with the splits each holds (replicas on racks without nodes, such as
    // `/default-rack`, can never be read locally).
    let mut sorted: Vec<(&RackName, f64, f64)> = capacity
        .containers
        .iter()
        .map(|(rack, containers)| {
            let held = replicas.get(rack).map_or(0.0, |c| (*c as f64).min(total));
            (rack, held, gives(rack, *containers))
        })
        .collect();
    if total <= 0.0 || sorted.is_empty() {
        return None;
    }
    // No split on a rack with nodes (storage without locality): no rack is better placed than
    // another to read the input, so the job prefers none and waits for none.
    if sorted.iter().all(|(_, held, _)| *held <= 0.0) {
        let even = 1.0 / sorted.len() as f64;
        return Some(SampChoice {
            preferred: BTreeSet::new(),
            tentative_shares: sorted
                .iter()
                .map(|(rack, _, _)| ((*rack).clone(), even))
                .collect(),
        });
    }
    // Racks holding more of the job's splits first; among equals, those other jobs claim
    // less, then those that give more, then by name.
    sorted.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| others(a.0).total_cmp(&others(b.0)))
            .then_with(|| b.2.total_cmp(&a.2))
            .then_with(|| a.0.cmp(b.0))
    });
    let all_give: f64 = sorted.iter().map(|(_, _, give)| give).sum();
    let demand = total.min(capacity.fair_share).min(all_give);

    // Candidate sets: the racks by data held, one more at a time, and each other rack alone
    // (where the racks holding most are shared with other jobs, a rack of its own may give the
    // job its containers and the same data).
    let prefixes = (1..=sorted.len()).map(|size| (0..size).collect::<Vec<usize>>());
    let singles = (1..sorted.len()).map(|rack| vec![rack]);
    let mut best: Option<(f64, SampChoice)> = None;
    for set in prefixes.chain(singles) {
        let chosen: Vec<&(&RackName, f64, f64)> = set.iter().map(|&i| &sorted[i]).collect();
        let size = set.len();
        let holds: Vec<(&RackName, f64)> = chosen.iter().map(|(r, held, _)| (*r, *held)).collect();
        let uncovered = total * holds.iter().map(|(_, c)| 1.0 - c / total).product::<f64>();
        let given: f64 = chosen.iter().map(|(_, _, give)| give).sum();
        let must_give = match capacity.rule {
            CapacityRule::Always => true,
            CapacityRule::RemoteReads => uncovered > 1e-9,
            CapacityRule::Never => false,
        };
        // A set that cannot give the job its containers, where the rule asks it to, is not a
        // choice (the full set always is: the demand is at most what every rack gives).
        if must_give && given + 1e-9 < demand && size < sorted.len() {
            continue;
        }
        // Every remote read of a set enters through the set's rack links. Running at its share,
        // the job reads across racks on `demand × uncovered ÷ maps` containers at once; a set
        // whose links would carry more than the cap each is not a choice. The share is what
        // makes the cap follow the load: a big job on a quiet cluster spreads over more links,
        // and as the shares shrink its maps concentrate again (the full set always is a choice).
        let reads_at_once = demand * uncovered / total;
        if capacity
            .remote_reads_per_rack
            .is_some_and(|cap| reads_at_once > cap * size as f64 + 1e-9)
            && size < sorted.len()
        {
            continue;
        }
        let held = balance(total - uncovered, &holds);
        let remote_each = uncovered / size as f64;
        // In rack name order, the order of the choice's map: the concentration is summed in
        // it. The map itself is built only for a set that becomes the best so far (of up to
        // twice the racks' sets tried per job).
        let mut shares: Vec<(&RackName, f64)> = holds
            .iter()
            .zip(held)
            .map(|((rack, _), maps_here)| (*rack, (maps_here + remote_each) / total))
            .collect();
        shares.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let concentration: f64 = shares.iter().map(|(_, f)| f * f).sum();
        // Costs in units of one map's input: remote reads plus shuffle crossing racks.
        let cost = uncovered + ratio * total * (1.0 - concentration);
        if best
            .as_ref()
            .is_none_or(|(lowest, _)| cost < *lowest - 1e-9)
        {
            let every_rack = size == sorted.len();
            let tentative_shares: BTreeMap<RackName, f64> = shares
                .into_iter()
                .map(|(rack, share)| (rack.clone(), share))
                .collect();
            best = Some((
                cost,
                SampChoice {
                    preferred: if every_rack {
                        BTreeSet::new()
                    } else {
                        tentative_shares.keys().cloned().collect()
                    },
                    tentative_shares,
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

    /// Per-rack values: splits held (`u32`) or other jobs' claims (`f64`).
    fn racks<T: Copy>(list: &[(&str, T)]) -> BTreeMap<RackName, T> {
        list.iter()
            .map(|(r, c)| (RackName(r.to_string().into()), *c))
            .collect()
    }

    /// `racks` racks `/r1`.. of 100 containers each, and a job share of 100.
    fn roomy(racks: u32) -> RackCapacity {
        RackCapacity {
            containers: (1..=racks)
                .map(|r| (RackName(format!("/r{r}").into()), 100.0))
                .collect(),
            fair_share: 100.0,
            rule: CapacityRule::Always,
            remote_reads_per_rack: None,
        }
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
            &roomy(2),
        )
        .unwrap();
        assert_eq!(names(&choice), ["/r1"]);
        assert_eq!(choice.tentative_shares[&RackName("/r1".into())], 1.0);
    }

    #[test]
    fn a_light_job_spreads_rather_than_read_remotely() {
        // Each rack holds half the splits: one rack alone forces ~half the maps remote; with a
        // tiny shuffle, spreading over both racks is cheaper. Every rack is no preference.
        let choice = choose(
            10,
            &racks(&[("/r1", 5), ("/r2", 5)]),
            0.01,
            &BTreeMap::new(),
            &roomy(2),
        )
        .unwrap();
        assert!(names(&choice).is_empty());
        assert_eq!(
            choice.tentative_shares.len(),
            2,
            "SARP still gets both racks' shares"
        );
    }

    #[test]
    fn a_heavy_job_accepts_some_remote_maps_to_localise_its_shuffle() {
        let choice = choose(
            10,
            &racks(&[("/r1", 8), ("/r2", 3)]),
            10.0,
            &BTreeMap::new(),
            &roomy(2),
        )
        .unwrap();
        assert_eq!(names(&choice), ["/r1"]);
    }

    #[test]
    fn a_set_that_cannot_give_the_job_its_containers_is_not_chosen() {
        // All the splits on /r1, but /r1 gives 100 containers shared with 3 jobs that prefer it
        // (25 for this one) and the job runs 60 maps at once: /r1 alone would make it wait.
        // SAMP adds the next rack holding the most splits, or takes another rack alone. For a
        // light job (ratio 0.1) /r1 + /r2 costs 60 x 0.1 x (1 - 5/9) = 2.7 (no remote read),
        // /r2 alone 40 remote reads; for a heavy one (ratio 10) /r1 + /r2 costs 267 in shuffle
        // across racks and /r2 alone still 40.
        let others = racks(&[("/r1", 3.0)]);
        let splits = racks(&[("/r1", 60), ("/r2", 20), ("/r3", 20)]);
        let light = choose(60, &splits, 0.1, &others, &roomy(3)).unwrap();
        assert_eq!(names(&light), ["/r1", "/r2"]);
        let heavy = choose(60, &splits, 10.0, &others, &roomy(3)).unwrap();
        assert_eq!(names(&heavy), ["/r2"]);
        // Without the other jobs, /r1 alone gives enough.
        let alone = choose(
            60,
            &racks(&[("/r1", 60), ("/r2", 20), ("/r3", 20)]),
            10.0,
            &BTreeMap::new(),
            &roomy(3),
        )
        .unwrap();
        assert_eq!(names(&alone), ["/r1"]);
    }

    #[test]
    fn claims_sum_to_one_job_and_share_what_a_rack_gives() {
        // A light job whose splits sit on four racks prefers all four (nothing read across
        // racks) and puts a quarter of its maps on each: its claims sum to one job.
        let spread = choose(
            40,
            &racks(&[("/r1", 10), ("/r2", 10), ("/r3", 10), ("/r4", 10)]),
            0.01,
            &BTreeMap::new(),
            &roomy(8),
        )
        .unwrap();
        assert_eq!(names(&spread), ["/r1", "/r2", "/r3", "/r4"]);
        for (rack, claim) in spread.claims() {
            assert!((claim - 0.25).abs() < 1e-9, "{rack:?} claims {claim}");
        }
        // A heavy job with 50 of its 60 splits on /r1 would run 60 maps at once. Beside one
        // job concentrated on /r1, /r1 gives it 50 containers, not enough: it takes /r2 alone
        // (50 remote reads, less than spreading its shuffle). Beside two jobs spread over /r1
        // and three other racks each (claims of a quarter), /r1 gives it 100 / 1.5 = 67 and
        // it keeps its shuffle on one rack for 10 remote reads.
        let splits = racks(&[("/r1", 50), ("/r2", 10)]);
        let capacity = roomy(2);
        let beside_one = choose(60, &splits, 10.0, &racks(&[("/r1", 1.0)]), &capacity).unwrap();
        assert_eq!(names(&beside_one), ["/r2"]);
        let beside_spread = choose(60, &splits, 10.0, &racks(&[("/r1", 0.5)]), &capacity).unwrap();
        assert_eq!(names(&beside_spread), ["/r1"]);
    }

    #[test]
    fn a_set_holding_every_split_need_not_give_the_job_its_containers_unless_always() {
        // The case above: /r1 holds every split and gives this job 25 containers of the 60 it
        // would run at once. Under `remote-reads` and `never`, /r1 alone reads nothing across
        // racks, so it is chosen at its cost of nothing (the whole shuffle on one rack) for the
        // light job and the heavy one alike.
        let others = racks(&[("/r1", 3.0)]);
        let splits = racks(&[("/r1", 60), ("/r2", 20), ("/r3", 20)]);
        for rule in [CapacityRule::RemoteReads, CapacityRule::Never] {
            let capacity = RackCapacity { rule, ..roomy(3) };
            for ratio in [0.1, 10.0] {
                let choice = choose(60, &splits, ratio, &others, &capacity).unwrap();
                assert_eq!(names(&choice), ["/r1"], "{rule:?}, ratio {ratio}");
            }
        }
    }

    #[test]
    fn a_set_forcing_remote_reads_must_give_the_job_its_containers_unless_never() {
        // /r1 holds 50 of 60 splits and gives this job 25 containers (3 other jobs prefer it).
        // For a heavy job (ratio 10) /r1 alone costs its 10 remote reads; with /r2 it costs
        // 10 x 60 x (1 - 0.5) = 300 in shuffle. Under `remote-reads` /r1 must give the job
        // its 60 and cannot: the heavy job takes /r2 alone (40 remote reads, the next cheapest
        // set that gives enough). Under `never` it takes /r1.
        let others = racks(&[("/r1", 3.0)]);
        let splits = racks(&[("/r1", 50), ("/r2", 20), ("/r3", 20)]);
        for (rule, expected) in [
            (CapacityRule::Always, ["/r2"]),
            (CapacityRule::RemoteReads, ["/r2"]),
            (CapacityRule::Never, ["/r1"]),
        ] {
            let capacity = RackCapacity { rule, ..roomy(3) };
            let choice = choose(60, &splits, 10.0, &others, &capacity).unwrap();
            assert_eq!(names(&choice), expected, "{rule:?}");
        }
    }

    #[test]
    fn storage_without_locality_never_prefers_a_rack_without_nodes() {
        // `file:///` input: every split names /default-rack, which no node is on. No rack with
        // nodes can read the input locally, so the job prefers none (and so waits for none),
        // and its tentative reduce shares are even over the racks with nodes.
        let capacity = RackCapacity {
            containers: [("/r1", 100.0), ("/r2", 120.0), ("/r3", 80.0)]
                .into_iter()
                .map(|(r, c)| (RackName(r.into()), c))
                .collect(),
            fair_share: 150.0,
            rule: CapacityRule::Always,
            remote_reads_per_rack: None,
        };
        let choice = choose(
            200,
            &racks(&[("/default-rack", 200)]),
            1.0,
            &BTreeMap::new(),
            &capacity,
        )
        .unwrap();
        assert!(choice.preferred.is_empty(), "{choice:?}");
        assert_eq!(
            choice.tentative_shares.keys().collect::<Vec<_>>(),
            [
                &RackName("/r1".into()),
                &RackName("/r2".into()),
                &RackName("/r3".into())
            ]
        );
        assert!(choice
            .tentative_shares
            .values()
            .all(|share| (share - 1.0 / 3.0).abs() < 1e-9));
    }

    #[test]
    fn no_rack_with_nodes_means_no_preference() {
        let none = RackCapacity {
            containers: BTreeMap::new(),
            fair_share: 0.0,
            rule: CapacityRule::Always,
            remote_reads_per_rack: None,
        };
        assert_eq!(
            choose(10, &racks(&[("/r1", 10)]), 1.0, &BTreeMap::new(), &none),
            None
        );
    }
}
