//! Turning state into a plan for one node offer.
//!
//! FairScheduler has already decided which queue gets the node (Design A in
//! `../shared/design/hadoop-hooks.md`); per steered queue the core ranks what its apps may
//! place here. A starvation guard sits above every policy: an app that has waited with tasks
//! pending for longer than `starvation-guard-ms` goes first with all its asks, so no app is
//! ever held back longer than that bound by Rackwise.

pub mod nas;
mod nass;
pub mod samp;
pub mod sarp;

use crate::protocol::{AppId, Locality, NodeId, Plan, PlanEntry, QueuePlan, RackName, TaskKind};
use crate::settings::{PolicyKind, QueuePolicy, Settings};
use crate::state::{App, ClusterState, Node};
use nas::NasState;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The node being offered and what NetSat says about its rack.
#[derive(Debug, Clone)]
pub struct Offer<'a> {
    pub node_id: &'a NodeId,
    pub node: &'a Node,
    pub host: &'a str,
    pub rack: &'a RackName,
    pub rack_saturated: bool,
    pub now_ms: u64,
}

/// A job of a steered queue, as the policies see it.
pub struct Candidate<'a> {
    pub id: &'a AppId,
    pub app: &'a App,
}

/// Since when relaxed fairness has been skipping each queue; a queue is skipped only while it
/// has nothing preferred to run here, for at most its `relaxedIntervalMs`.
pub type RelaxedSkips = BTreeMap<String, u64>;

/// The plan for this offer, and the apps whose wait tripped the starvation guard. Policies
/// that remember things between offers keep them in `skips` (relaxed fairness) and `nas`.
pub fn plan(
    state: &ClusterState,
    settings: &Settings,
    offer: &Offer,
    skips: &mut RelaxedSkips,
    nas: &mut NasState,
) -> (Plan, Vec<AppId>) {
    let mut plan = Plan {
        queues: Vec::with_capacity(state.candidates_by_queue().len()),
    };
    let mut starved_apps = Vec::new();
    // One buffer for every queue's candidates.
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut nas_budget = None;
    // Queues in name order, each one's jobs by arrival: ties between categories are broken by
    // job arrival (ShuffleWatcher §3.1).
    for (queue, listed) in state.candidates_by_queue() {
        let policy = settings.queue_policy(queue);
        if policy.kind == PolicyKind::None {
            continue;
        }
        candidates.clear();
        candidates.extend(listed.map(|(_, id, app)| Candidate { id, app }));
        let mut entries = Vec::new();
        for candidate in &candidates {
            let waited = candidate
                .app
                .waiting_since_ms
                .map_or(0, |since| offer.now_ms.saturating_sub(since));
            if waited > settings.starvation_guard_ms {
                starved_apps.push(candidate.id.clone());
                entries.extend(all_asks(candidate, "starvation-guard"));
            }
        }
        let starved = !entries.is_empty();
        match policy.kind {
            PolicyKind::ShuffleWatcher => {
                let preferred = nass::rank(&candidates, &policy, offer, &mut entries);
                if policy.relaxed_fairness && !starved {
                    relax(queue, preferred, &policy, offer.now_ms, skips, &mut entries);
                }
            }
            PolicyKind::Nas => {
                let budget =
                    *nas_budget.get_or_insert_with(|| nas.begin_offer(state, settings, offer));
                let turn = nas::Turn {
                    candidates: &candidates,
                    queue,
                    params: &policy.nas,
                    settings,
                    state,
                    budget,
                    offer,
                };
                nas::rank(&turn, nas, &mut entries);
            }
            // Filtered out above: such queues are left to FairScheduler.
            PolicyKind::None => {}
        }
        plan.queues.push(QueuePlan {
            queue: Arc::clone(queue),
            steered: candidates.iter().map(|c| c.id.clone()).collect(),
            entries,
        });
    }
    nas.end_offer();
    (plan, starved_apps)
}

/// ShuffleWatcher's relaxed fairness (SW-relaxed, as Delay Scheduling relaxes fairness): a
/// queue with nothing preferred to run on this node passes its turn (all its apps vetoed, so
/// FairScheduler offers the node to the next queue), for at most `relaxedIntervalMs` in a row.
fn relax(
    queue: &str,
    preferred: bool,
    policy: &QueuePolicy,
    now_ms: u64,
    skips: &mut RelaxedSkips,
    entries: &mut Vec<PlanEntry>,
) {
    if preferred {
        skips.remove(queue);
        return;
    }
    // The queue's name is copied only when its skipping starts, not on every offer it lasts.
    let since = match skips.get(queue) {
        Some(since) => *since,
        None => {
            skips.insert(queue.to_string(), now_ms);
            now_ms
        }
    };
    if now_ms.saturating_sub(since) < policy.relaxed_interval_ms {
        entries.clear();
    }
}

/// Every outstanding map and reduce ask of an app, loosest locality, lowest priority first
/// (MapReduce's own order: re-run maps, reduces, maps).
fn all_asks<'a>(
    candidate: &'a Candidate,
    reason: &'static str,
) -> impl Iterator<Item = PlanEntry> + 'a {
    candidate
        .app
        .asks
        .values()
        .filter(|ask| {
            matches!(
                TaskKind::of_mapreduce_priority(ask.priority),
                TaskKind::Map | TaskKind::Reduce
            )
        })
        .map(move |ask| PlanEntry {
            app: candidate.id.clone(),
            priority: ask.priority,
            locality: Locality::OffSwitch,
            reason: reason.into(),
        })
}
