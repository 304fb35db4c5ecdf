//! NASS, Network-Aware Shuffle Scheduling (ShuffleWatcher, Figure 3).
//!
//! When the requesting node's rack is network-saturated, the user's maps go first (data-local
//! before rack-local before any) and shuffle is delayed: reduces of shuffle-light jobs, then
//! of shuffle-heavy ones. When it is not saturated, shuffle-heavy reduces go first to favour
//! intra-job concurrency, then the other reduces, then maps in the same locality order. The
//! last map and reduce categories match any outstanding task, so the user never loses its
//! turn and FairScheduler's fairness holds. Within a category, jobs go by arrival.
//!
//! Not yet here (the ShuffleWatcher issue adds them): the preferred-rack maps of SAMP (Figure 3
//! lines 4/16) and the per-rack reduce quotas of SARP (lines 8/13).

use super::{Candidate, Offer};
use crate::protocol::{Ask, Locality, PlanEntry, TaskKind};
use crate::settings::QueuePolicy;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Category {
    NodeLocalMaps,
    RackLocalMaps,
    AnyMaps,
    LightReduces,
    HeavyReduces,
}

/// Figure 3 lines 5–9: maps first, shuffle delayed.
const SATURATED: [Category; 5] = [
    Category::NodeLocalMaps,
    Category::RackLocalMaps,
    Category::AnyMaps,
    Category::LightReduces,
    Category::HeavyReduces,
];

/// Figure 3 lines 14–18: heavy reduces first, then the rest, then maps.
const UNSATURATED: [Category; 5] = [
    Category::HeavyReduces,
    Category::LightReduces,
    Category::NodeLocalMaps,
    Category::RackLocalMaps,
    Category::AnyMaps,
];

impl Category {
    fn label(self) -> &'static str {
        match self {
            Category::NodeLocalMaps => "node-local-map",
            Category::RackLocalMaps => "rack-local-map",
            Category::AnyMaps => "any-map",
            Category::LightReduces => "light-reduce",
            Category::HeavyReduces => "heavy-reduce",
        }
    }

    /// The locality at which `ask` of `candidate` falls in this category on this offer.
    fn admits(
        self,
        candidate: &Candidate,
        ask: &Ask,
        policy: &QueuePolicy,
        offer: &Offer,
    ) -> Option<Locality> {
        let kind = TaskKind::of_mapreduce_priority(ask.priority);
        let heavy = candidate.app.job.estimate.ratio > policy.shuffle_heavy_ratio;
        let admitted = match self {
            Category::NodeLocalMaps => {
                kind == TaskKind::Map && ask.hosts.get(offer.host).is_some_and(|n| *n > 0)
            }
            Category::RackLocalMaps => {
                kind == TaskKind::Map && ask.racks.get(offer.rack).is_some_and(|n| *n > 0)
            }
            Category::AnyMaps => kind == TaskKind::Map,
            Category::LightReduces => kind == TaskKind::Reduce && !heavy,
            Category::HeavyReduces => kind == TaskKind::Reduce && heavy,
        };
        let locality = match self {
            Category::NodeLocalMaps => Locality::NodeLocal,
            Category::RackLocalMaps => Locality::RackLocal,
            _ => Locality::OffSwitch,
        };
        admitted.then_some(locality)
    }
}

/// Appends the NASS ranking of the queue's jobs for this offer to `entries`.
pub(super) fn rank(
    candidates: &[Candidate],
    policy: &QueuePolicy,
    offer: &Offer,
    entries: &mut Vec<PlanEntry>,
) {
    let (order, state) = if offer.rack_saturated {
        (&SATURATED, "saturated")
    } else {
        (&UNSATURATED, "unsaturated")
    };
    for category in order {
        for candidate in candidates {
            for ask in candidate.app.asks.values() {
                if let Some(locality) = category.admits(candidate, ask, policy, offer) {
                    entries.push(PlanEntry {
                        app: candidate.id.clone(),
                        priority: ask.priority,
                        locality,
                        reason: format!("nass:{state}:{}", category.label()),
                    });
                }
            }
        }
    }
}
