//! ShuffleWatcher (ATC'14): NASS orders a queue's tasks by whether the offered node's rack is
//! network-saturated (NetSat); SAMP picks, once per job, the racks its maps should prefer;
//! SARP fixes, once per job, how its reduces split over racks; a starvation window ranks older
//! jobs first; relaxed fairness lets a queue with nothing preferred pass its turn.

mod nass;
pub mod samp;
pub mod sarp;

use crate::mapreduce::{TaskKind, MAP_PRIORITY};
use crate::policy::{log_storage_without_locality, Context, Policy, Turn};
use crate::protocol::{AppId, PlanEntry, RackName};
use crate::settings::{params::no_check, Declaration, Param, ParamValues};
use crate::state::{App, ClusterState, Observation};
use samp::SampChoice;
use std::collections::BTreeMap;

const RELAXED_FAIRNESS: &str = "relaxedFairness";
const SARP_QUOTA: &str = "sarpQuota";
const SARP_SHARES: &str = "sarpShares";
const SHUFFLE_HEAVY_RATIO: &str = "shuffleHeavyRatio";
const MAP_COMPLETION_THRESHOLD: &str = "mapCompletionThreshold";
const STARVATION_WINDOW_MS: &str = "starvationWindowMs";
const RELAXED_INTERVAL_MS: &str = "relaxedIntervalMs";

/// The `<rackwise>` elements of a `shufflewatcher` queue.
const QUEUE_PARAMS: &[Param] = &[
    Param::bool(
        RELAXED_FAIRNESS,
        false,
        "a queue with nothing preferred on the offered node may pass its turn (SW-relaxed)",
    ),
    Param::word(
        SARP_QUOTA,
        "strict",
        &["strict", "preference"],
        "strict: a shuffle-heavy job's reduces are vetoed on racks whose SARP quota is used; \
         preference: ranked last (Figure 3 as written)",
    ),
    Param::word(
        SARP_SHARES,
        "measured",
        &["measured", "first-ask"],
        "measured: a shuffle-heavy job's reduce quotas follow its finished maps per rack at \
         every reduce placement (once mapCompletionThreshold of them finished); first-ask: \
         fixed when its reduces are first asked for",
    ),
    Param::number(
        SHUFFLE_HEAVY_RATIO,
        1.0,
        (0.0, true),
        1.0e6,
        "shuffle/input ratio above which a job is shuffle-heavy",
    ),
    Param::number(
        MAP_COMPLETION_THRESHOLD,
        0.15,
        (0.0, false),
        1.0,
        "fraction of a job's maps completed before SARP trusts measured map output",
    ),
    Param::number(
        STARVATION_WINDOW_MS,
        600_000.0,
        (0.0, false),
        86_400_000.0,
        "jobs from an earlier submission window of this length go first; 0 = off",
    ),
    Param::number(
        RELAXED_INTERVAL_MS,
        5_000.0,
        (0.0, false),
        3_600_000.0,
        "longest a user may be skipped under relaxed fairness",
    ),
];

/// A queue's parameters, read from its declared values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Params {
    /// A job is shuffle-heavy when its shuffle/input ratio exceeds this (paper: 1.0).
    pub shuffle_heavy_ratio: f64,
    /// SARP trusts measured map output once this fraction of a job's maps completed (15 %).
    pub map_completion_threshold: f64,
    /// Jobs submitted in an earlier window of this length go first (10 min); 0 turns it off.
    pub starvation_window_ms: u64,
    pub relaxed_fairness: bool,
    /// For how long relaxed fairness may skip a user (5 s, as Delay Scheduling).
    pub relaxed_interval_ms: u64,
    /// SARP quotas: `strict` vetoes a shuffle-heavy job's reduces on racks whose quota is
    /// used; `preference` only ranks them lower (Figure 3 lines 9/14 taken literally).
    pub strict_reduce_quotas: bool,
    /// SARP's split: re-read from the job's finished maps at every reduce placement
    /// (`measured`), or fixed at its first reduce ask (`first-ask`).
    pub measured_reduce_shares: bool,
}

impl Params {
    fn of(values: &ParamValues) -> Params {
        Params {
            shuffle_heavy_ratio: values.number(SHUFFLE_HEAVY_RATIO),
            map_completion_threshold: values.number(MAP_COMPLETION_THRESHOLD),
            starvation_window_ms: values.number(STARVATION_WINDOW_MS) as u64,
            relaxed_fairness: values.bool(RELAXED_FAIRNESS),
            relaxed_interval_ms: values.number(RELAXED_INTERVAL_MS) as u64,
            strict_reduce_quotas: values.word(SARP_QUOTA) == "strict",
            measured_reduce_shares: values.word(SARP_SHARES) == "measured",
        }
    }
}

/// What ShuffleWatcher decided for one job, once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobPlacement {
    /// SAMP's choice, made when the job's first map asks arrived.
    pub samp: Option<SampChoice>,
    /// SARP's per-rack reduce shares as they stood when the job's reduces were first asked
    /// for: the quotas under `sarpShares=first-ask`, and under `measured` until
    /// `mapCompletionThreshold` of its maps finished.
    pub reduce_shares: Option<BTreeMap<RackName, f64>>,
    sarp_invoked: bool,
    /// No split of the job names a rack with nodes (storage without locality): SAMP has
    /// nothing to choose from and the job prefers no rack.
    without_locality: bool,
}

/// ShuffleWatcher's memory: each job's SAMP and SARP decisions, and since when relaxed
/// fairness has been skipping each queue.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShuffleWatcher {
    /// Each job's decisions with its id, at the job's slot in the state: every offer reads the
    /// decisions of every candidate, without a search by id.
    jobs: Vec<Option<(AppId, JobPlacement)>>,
    /// A queue is skipped only while it has nothing preferred to run here, for at most its
    /// `relaxedIntervalMs`.
    relaxed_skips: BTreeMap<String, u64>,
}

impl ShuffleWatcher {
    /// SAMP's and SARP's decisions for a job, if any was made.
    pub fn job(&self, app: &AppId) -> Option<&JobPlacement> {
        self.known().find(|(id, _)| *id == app).map(|(_, job)| job)
    }

    /// The decisions of the job at `slot`, if they are `app`'s.
    fn at(&self, slot: usize, app: &AppId) -> Option<&JobPlacement> {
        match self.jobs.get(slot)? {
            Some((id, job)) if id == app => Some(job),
            _ => None,
        }
    }

    fn known(&self) -> impl Iterator<Item = (&AppId, &JobPlacement)> {
        self.jobs.iter().flatten().map(|(id, job)| (id, job))
    }

    /// Forgets the decisions of a job that left (its slot is no longer known).
    fn forget(&mut self, app: &AppId) {
        for slot in &mut self.jobs {
            if slot.as_ref().is_some_and(|(id, _)| id == app) {
                *slot = None;
            }
        }
    }

    /// For each rack, how many known jobs other than `app` prefer it (SAMP's tie-break).
    fn racks_preferred_by_jobs_other_than(&self, app: &AppId) -> BTreeMap<RackName, u32> {
        let mut counts = BTreeMap::new();
        for (id, other) in self.known() {
            if id == app {
                continue;
            }
            for rack in other.samp.iter().flat_map(|s| s.preferred.iter()) {
                *counts.entry(rack.clone()).or_insert(0) += 1;
            }
        }
        counts
    }

    /// The once-per-job steps on a new ask table: SAMP when the first map asks arrive (their
    /// rack counts are where the input blocks are), SARP when reduces are first asked for.
    fn shuffle_watch(
        &mut self,
        state: &ClusterState,
        id: &AppId,
        slot: usize,
        app: &App,
        params: &Params,
    ) {
        let maps = app.asks.get(&MAP_PRIORITY);
        let samp_due = maps.is_some()
            && self
                .at(slot, id)
                .is_none_or(|j| j.samp.is_none() && !j.without_locality);
        // SAMP's tie-break walks every job, so it is counted only when SAMP runs (once per
        // job). This ask table changes no other job's choice.
        let preferred_by_others = samp_due.then(|| self.racks_preferred_by_jobs_other_than(id));
        if self.jobs.len() <= slot {
            self.jobs.resize(slot + 1, None);
        }
        let entry = &mut self.jobs[slot];
        if entry.as_ref().is_none_or(|(owner, _)| owner != id) {
            *entry = Some((id.clone(), JobPlacement::default()));
        }
        let Some((_, placement)) = entry else {
            return;
        };
        if let (Some(preferred_by_others), Some(maps)) = (preferred_by_others, maps) {
            // A split on a rack no node is on (`/default-rack`, where storage without locality
            // such as `file:///` or an object store puts `localhost`) can never be read there:
            // SAMP weighs only racks with nodes.
            let racks_with_nodes: BTreeMap<RackName, u32> = maps
                .racks
                .iter()
                .filter(|(rack, count)| **count > 0 && state.nodes_on_rack(rack) > 0)
                .map(|(rack, count)| (rack.clone(), *count))
                .collect();
            if racks_with_nodes.is_empty() {
                placement.without_locality = true;
                log_storage_without_locality("shufflewatcher", app);
                return;
            }
            placement.samp = samp::choose(
                maps.any,
                &racks_with_nodes,
                app.job.estimate.ratio,
                &preferred_by_others,
            );
            // Once per job: the one place an operator can see why its maps cluster.
            if let Some(choice) = &placement.samp {
                log::info!(
                    "job '{}' (queue {}): SAMP prefers racks {} for its {} maps \
                     (splits per rack {:?}, racks other jobs prefer {:?}), \
                     tentative reduce shares {}",
                    app.name,
                    app.queue,
                    choice
                        .preferred
                        .iter()
                        .map(|r| &*r.0)
                        .collect::<Vec<_>>()
                        .join(","),
                    maps.any,
                    maps.racks,
                    preferred_by_others,
                    format_shares(&choice.tentative_shares)
                );
            }
        }
        let pending_reduces = app.pending(TaskKind::Reduce);
        if !placement.sarp_invoked && pending_reduces > 0 {
            placement.sarp_invoked = true;
            let known_maps = app.job.known_maps(app.pending(TaskKind::Map));
            placement.reduce_shares = sarp::reduce_shares(
                &app.job,
                placement.samp.as_ref(),
                known_maps,
                params.map_completion_threshold,
            );
            // The job as the core holds it when SARP runs, by rack: after a ResourceManager
            // restart, what an operator compares with the line the previous RM wrote.
            log::info!(
                "job '{}' (queue {}): SARP reduce shares {} ({} of {} maps finished; \
                 running maps {}, running reduces {})",
                app.name,
                app.queue,
                placement
                    .reduce_shares
                    .as_ref()
                    .map_or_else(|| "none".to_string(), format_shares),
                app.job.finished_maps(),
                known_maps,
                format_counts(&state.running_by_rack(id, TaskKind::Map)),
                format_counts(&state.running_by_rack(id, TaskKind::Reduce))
            );
        }
    }

    /// ShuffleWatcher's relaxed fairness (SW-relaxed, as Delay Scheduling relaxes fairness): a
    /// queue with nothing preferred to run on this node passes its turn (all its apps vetoed,
    /// so FairScheduler offers the node to the next queue), for at most `relaxedIntervalMs` in
    /// a row.
    fn relax(
        &mut self,
        queue: &str,
        preferred: bool,
        params: &Params,
        now_ms: u64,
        entries: &mut Vec<PlanEntry>,
    ) {
        if preferred {
            self.relaxed_skips.remove(queue);
            return;
        }
        // The queue's name is copied only when its skipping starts, not on every offer it lasts.
        let since = match self.relaxed_skips.get(queue) {
            Some(since) => *since,
            None => {
                self.relaxed_skips.insert(queue.to_string(), now_ms);
                now_ms
            }
        };
        if now_ms.saturating_sub(since) < params.relaxed_interval_ms {
            entries.clear();
        }
    }
}

impl Policy for ShuffleWatcher {
    fn declaration(&self) -> Declaration {
        Declaration {
            name: "shufflewatcher",
            queue_params: QUEUE_PARAMS,
            cluster_params: &[],
            check: no_check,
            steers: true,
        }
    }

    fn observe(&mut self, context: &Context, observation: &Observation) {
        match observation {
            // A re-added app starts over.
            // A (re-)added app starts over at its slot.
            Observation::AppAdded { app } => {
                if let Some(slot) = context.state.apps.slot_of(app) {
                    if let Some(entry) = self.jobs.get_mut(slot) {
                        *entry = None;
                    }
                }
            }
            Observation::AppRemoved { app } => self.forget(app),
            Observation::AsksChanged { app: id } => {
                let state: &ClusterState = context.state;
                let (Some(slot), Some(app)) = (state.apps.slot_of(id), state.apps.get(id)) else {
                    return;
                };
                if !app.is_mapreduce {
                    return;
                }
                if let Some(values) = context.steered(&app.queue) {
                    self.shuffle_watch(context.state, id, slot, app, values.typed(Params::of));
                }
            }
            _ => {}
        }
    }

    fn rank(&mut self, turn: &Turn, entries: &mut Vec<PlanEntry>) {
        let params = turn.params.typed(Params::of);
        let placements: Vec<Option<&JobPlacement>> = turn
            .candidates
            .iter()
            .map(|candidate| self.at(candidate.slot, candidate.id))
            .collect();
        let preferred = nass::rank(turn.candidates, &placements, params, turn.offer, entries);
        if params.relaxed_fairness && !turn.starved {
            self.relax(turn.queue, preferred, params, turn.offer.now_ms, entries);
        }
    }
}

/// `rack=share` pairs for log lines, e.g. `/rack1=0.75,/rack2=0.25`.
/// Counts per rack as `/rack1=2,/rack2=1`, or `none`.
fn format_counts(counts: &BTreeMap<RackName, u32>) -> String {
    if counts.is_empty() {
        return "none".to_string();
    }
    counts
        .iter()
        .map(|(rack, count)| format!("{}={count}", rack.0))
        .collect::<Vec<_>>()
        .join(",")
}

fn format_shares(shares: &BTreeMap<RackName, f64>) -> String {
    shares
        .iter()
        .map(|(rack, share)| format!("{}={share:.2}", rack.0))
        .collect::<Vec<_>>()
        .join(",")
}
