//! NASS, Network-Aware Shuffle Scheduling (ShuffleWatcher, Figure 3), with SAMP's preferred map
//! racks and SARP's per-rack reduce quotas.
//!
//! When the requesting node's rack is network-saturated, the user's maps go first (data-local,
//! then rack-local, then any; at each locality those of jobs preferring this rack first) and
//! shuffle is
//! delayed: reduces of shuffle-light jobs, then shuffle-heavy reduces within their rack quota,
//! then any reduce. When it is not saturated, shuffle-heavy reduces within quota go first to
//! favour intra-job concurrency, then other heavy reduces, then light ones, then maps in the
//! same order. The last categories match any outstanding task, so the user never loses its
//! turn. Within a category jobs go by arrival.
//!
//! Two readings of ours, made configurable per queue:
//! * `sarpQuota=strict` (default): a shuffle-heavy job's reduces are vetoed on a rack whose
//!   quota is used, so reduces end up in proportion to map output; the starvation guard still
//!   bounds any wait. `preference` keeps them as Figure 3's lowest reduce category.
//! * the starvation window (choice 8, docs/design-choices.md): jobs are grouped by `submit / starvationWindowMs`; an
//!   earlier window's jobs are ranked, whole, before a later window's, overriding the
//!   categories (a 10-minute-old job's remote map beats a new job's local one). The order
//!   across jobs is read with `jobOrder=nass`; with `apps`, only after the starvation guard's
//!   entries.

use super::sarp::{self, QuotaState};
use super::{JobPlacement, MapWait, Params};
use crate::mapreduce::TaskKind;
use crate::policy::{Candidate, Offer};
use crate::protocol::{Ask, Locality, PlanEntry};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Category {
    /// Lines 4/16: maps of jobs whose PreferredMapRacks hold this rack, split by locality so
    /// that locality comes first (node-local maps of any job before a preferring job's remote
    /// one): data-local, rack-local, any.
    PreferredRackNodeMaps,
    PreferredRackRackMaps,
    PreferredRackAnyMaps,
    /// Lines 5/17: data-local maps, then rack-local maps.
    NodeLocalMaps,
    RackLocalMaps,
    /// Lines 6/18.
    AnyMaps,
    /// Line 7 (and 15).
    LightReduces,
    /// Lines 8/13: shuffle-heavy reduces on a rack where the job's SARP quota is not met.
    HeavyReducesUnderQuota,
    /// Lines 9/14: the other shuffle-heavy reduces the quota mode allows.
    OtherHeavyReduces,
}

/// Figure 3 lines 4–9: maps first, shuffle delayed; at each locality, maps of jobs preferring
/// this rack first.
const SATURATED: [Category; 9] = [
    Category::PreferredRackNodeMaps,
    Category::NodeLocalMaps,
    Category::PreferredRackRackMaps,
    Category::RackLocalMaps,
    Category::PreferredRackAnyMaps,
    Category::AnyMaps,
    Category::LightReduces,
    Category::HeavyReducesUnderQuota,
    Category::OtherHeavyReduces,
];

/// Figure 3 lines 13–18: shuffle first, heavy before light, then maps.
const UNSATURATED: [Category; 9] = [
    Category::HeavyReducesUnderQuota,
    Category::OtherHeavyReduces,
    Category::LightReduces,
    Category::PreferredRackNodeMaps,
    Category::NodeLocalMaps,
    Category::PreferredRackRackMaps,
    Category::RackLocalMaps,
    Category::PreferredRackAnyMaps,
    Category::AnyMaps,
];

impl Category {
    /// The plan reason of an entry in this category, `nass:<rack state>:<category>`: spelled
    /// out so that no offer formats one.
    fn reason(self, saturated: bool) -> &'static str {
        match (saturated, self) {
            (
                true,
                Category::PreferredRackNodeMaps
                | Category::PreferredRackRackMaps
                | Category::PreferredRackAnyMaps,
            ) => "nass:saturated:preferred-rack-map",
            (true, Category::NodeLocalMaps) => "nass:saturated:node-local-map",
            (true, Category::RackLocalMaps) => "nass:saturated:rack-local-map",
            (true, Category::AnyMaps) => "nass:saturated:any-map",
            (true, Category::LightReduces) => "nass:saturated:light-reduce",
            (true, Category::HeavyReducesUnderQuota) => "nass:saturated:heavy-reduce-under-quota",
            (true, Category::OtherHeavyReduces) => "nass:saturated:heavy-reduce",
            (
                false,
                Category::PreferredRackNodeMaps
                | Category::PreferredRackRackMaps
                | Category::PreferredRackAnyMaps,
            ) => "nass:unsaturated:preferred-rack-map",
            (false, Category::NodeLocalMaps) => "nass:unsaturated:node-local-map",
            (false, Category::RackLocalMaps) => "nass:unsaturated:rack-local-map",
            (false, Category::AnyMaps) => "nass:unsaturated:any-map",
            (false, Category::LightReduces) => "nass:unsaturated:light-reduce",
            (false, Category::HeavyReducesUnderQuota) => {
                "nass:unsaturated:heavy-reduce-under-quota"
            }
            (false, Category::OtherHeavyReduces) => "nass:unsaturated:heavy-reduce",
        }
    }

    /// Whether a placement in this category counts as "preferred" for relaxed fairness
    /// (Figure 3 lines 4/5/7/8 saturated, 13/16/17 unsaturated: choice 9).
    pub(super) fn is_preferred(self, saturated: bool) -> bool {
        match self {
            Category::PreferredRackNodeMaps
            | Category::PreferredRackRackMaps
            | Category::PreferredRackAnyMaps
            | Category::NodeLocalMaps
            | Category::RackLocalMaps
            | Category::HeavyReducesUnderQuota => true,
            Category::LightReduces => saturated,
            Category::AnyMaps | Category::OtherHeavyReduces => false,
        }
    }

    /// The locality at which the ask `facts` describes falls in this category on this offer,
    /// if it does.
    fn admits(self, facts: &AskFacts, policy: &Params) -> Option<Locality> {
        let prefers_here = facts.prefers_here;
        let map = facts.kind == TaskKind::Map;
        let heavy_reduce = facts.kind == TaskKind::Reduce && facts.heavy;
        let admitted = match self {
            Category::PreferredRackNodeMaps => {
                map && prefers_here == Some(true) && facts.node_split
            }
            Category::PreferredRackRackMaps => {
                map && prefers_here == Some(true) && facts.rack_split
            }
            Category::PreferredRackAnyMaps => map && prefers_here == Some(true),
            Category::NodeLocalMaps => map && facts.node_split,
            Category::RackLocalMaps => map && facts.rack_split,
            Category::AnyMaps => map,
            Category::LightReduces => {
                facts.kind == TaskKind::Reduce && !facts.heavy && !facts.reduce_held
            }
            Category::HeavyReducesUnderQuota => {
                heavy_reduce && facts.quota == Some(QuotaState::Under)
            }
            Category::OtherHeavyReduces => {
                heavy_reduce
                    && match facts.quota {
                        Some(QuotaState::NoQuota) => true,
                        Some(QuotaState::Under) | None => false,
                        Some(QuotaState::Used) => !policy.strict_reduce_quotas,
                    }
            }
        };
        admitted.then_some(match self {
            Category::PreferredRackNodeMaps | Category::NodeLocalMaps => Locality::NodeLocal,
            Category::PreferredRackRackMaps | Category::RackLocalMaps => Locality::RackLocal,
            _ => Locality::OffSwitch,
        })
    }
}

/// One candidate job on this offer, as ShuffleWatcher's memory has it.
pub(super) struct JobTurn<'a> {
    /// SAMP's and SARP's decisions for the job, if any were made.
    pub(super) placement: Option<&'a JobPlacement>,
    /// Its map-locality level now (`MapWait`).
    pub(super) level: u8,
    /// Whether `reduceRackWaitMs` keeps its shuffle-light reduces off the offered rack.
    pub(super) reduce_held: bool,
}

/// What the categories ask of one outstanding ask on this offer, worked out once per offer
/// rather than again in every category that tests it: each split test is a search of the ask's
/// host or rack table, and the SARP quota a walk of the job's shares.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct AskFacts {
    /// The candidate's position among the queue's candidates.
    position: usize,
    /// Whether the job's SAMP racks hold the offered one (`None`: no SAMP choice).
    prefers_here: Option<bool>,
    /// The job's `JobPlacement::off_racks` now.
    off_racks: Option<Locality>,
    priority: crate::protocol::Priority,
    kind: TaskKind,
    /// A map ask with a pending split on the offered node / rack.
    node_split: bool,
    rack_split: bool,
    /// The job is shuffle-heavy (its estimated ratio above `shuffleHeavyRatio`).
    heavy: bool,
    /// A shuffle-heavy reduce's SARP quota on the offered rack; `None` for any other ask.
    quota: Option<QuotaState>,
    /// A shuffle-light reduce that `reduceRackWaitMs` keeps off the offered rack.
    reduce_held: bool,
    /// The localities already emitted for this ask (bits by `Locality as u8`): an entry
    /// repeated in a later category could never be chosen, the first satisfiable one wins.
    emitted: u8,
}

impl AskFacts {
    fn of(
        position: usize,
        candidate: &Candidate,
        job: &JobTurn,
        ask: &Ask,
        policy: &Params,
        offer: &Offer,
        (prefers_here, off_racks): (Option<bool>, Option<Locality>),
    ) -> AskFacts {
        let placement = job.placement;
        let app = candidate.app;
        let kind = TaskKind::of_mapreduce_priority(ask.priority);
        let map = kind == TaskKind::Map;
        let heavy = policy.shuffle_heavy(app);
        let quota = (kind == TaskKind::Reduce && heavy).then(|| {
            let pending_reduces = app.pending(TaskKind::Reduce);
            let measured_now = policy.measured_reduce_shares
                && sarp::trusts_measured_output(
                    &app.job,
                    app.job.known_maps(app.pending(TaskKind::Map)),
                    policy.map_completion_threshold,
                );
            if measured_now {
                // The maps finished per rack are where the output sits now: SARP's split as
                // it stands at this placement.
                sarp::reduce_quota(
                    &app.job,
                    Some(&app.job.finished_maps_by_rack),
                    offer.rack,
                    pending_reduces,
                )
            } else {
                sarp::reduce_quota(
                    &app.job,
                    placement.and_then(|p| p.reduce_shares.as_ref()),
                    offer.rack,
                    pending_reduces,
                )
            }
        });
        AskFacts {
            position,
            prefers_here,
            off_racks,
            priority: ask.priority,
            kind,
            node_split: map && ask.hosts.get(offer.host).is_some_and(|n| *n > 0),
            rack_split: map && ask.racks.get(offer.rack).is_some_and(|n| *n > 0),
            heavy,
            quota,
            reduce_held: job.reduce_held && kind == TaskKind::Reduce,
            emitted: 0,
        }
    }
}

/// Appends the NASS ranking of the queue's jobs for this offer to `entries`; returns whether
/// any entry is "preferred" (for relaxed fairness). `candidates` come by arrival (submit time
/// first), so each starvation window's jobs are one run of them, earlier windows first.
/// `jobs` has, per candidate, ShuffleWatcher's decisions, its map-locality level (`MapWait`: a
/// map placement the job's level does not reach yet is left out, so the job waits for a better
/// one, for a bounded time) and whether `reduceRackWaitMs` keeps its shuffle-light reduces off
/// the offered rack.
/// `facts` is a buffer kept across offers (what it holds on entry is cleared, not read).
pub(super) fn rank(
    candidates: &[Candidate],
    jobs: &[JobTurn],
    policy: &Params,
    offer: &Offer,
    facts: &mut Vec<AskFacts>,
    entries: &mut Vec<PlanEntry>,
) -> bool {
    let saturated = offer.rack_saturated;
    let order = if saturated { &SATURATED } else { &UNSATURATED };
    let window = |c: &Candidate| match policy.starvation_window_ms {
        0 => 0,
        width => c.app.submit_ms / width,
    };
    let mut preferred = false;
    let mut window_start = 0;
    for in_window in candidates.chunk_by(|a, b| window(a) == window(b)) {
        facts.clear();
        for (position, candidate) in (window_start..).zip(in_window) {
            let job = &jobs[position];
            let placement = job.placement;
            // Whether the job prefers the offered rack, and how far off its SAMP racks its
            // maps may go at level 1 with its ratio as of now: once per job, not per entry.
            let prefers_here = placement.and_then(|p| p.prefers(offer.rack));
            let off_racks =
                placement.and_then(|p| p.off_racks(candidate.app.job.estimate.ratio, policy));
            for ask in candidate.app.asks.values() {
                facts.push(AskFacts::of(
                    position,
                    candidate,
                    job,
                    ask,
                    policy,
                    offer,
                    (prefers_here, off_racks),
                ));
            }
        }
        for category in order {
            for ask in facts.iter_mut() {
                let position = ask.position;
                let Some(locality) = category.admits(ask, policy) else {
                    continue;
                };
                // A map the job's locality wait does not reach yet is left out.
                if ask.kind == TaskKind::Map
                    && MapWait::needed(locality, ask.prefers_here, ask.off_racks)
                        > jobs[position].level
                {
                    continue;
                }
                let bit = 1 << locality as u8;
                if ask.emitted & bit != 0 {
                    continue;
                }
                ask.emitted |= bit;
                preferred |= category.is_preferred(saturated);
                entries.push(PlanEntry {
                    app: candidates[position].id.clone(),
                    priority: ask.priority,
                    locality,
                    reason: category.reason(saturated).into(),
                });
            }
        }
        window_start += in_window.len();
    }
    preferred
}
