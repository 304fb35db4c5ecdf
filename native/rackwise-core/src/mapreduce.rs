//! MapReduce facts the core, the simulator and (through the wire) the Java shim share: the
//! priorities a MapReduce ApplicationMaster asks with, what they say about a task, and the rule
//! by which a plan is applied to an offer. Each is defined here and nowhere else.

use crate::protocol::{AppId, Locality, Priority, QueuePlan};

/// `RMContainerAllocator`'s priorities (Hadoop 3).
pub const AM_PRIORITY: Priority = Priority(0);
/// A map re-run after a fetch failure (`PRIORITY_FAST_FAIL_MAP`).
pub const RERUN_MAP_PRIORITY: Priority = Priority(5);
pub const REDUCE_PRIORITY: Priority = Priority(10);
/// An opportunistic map (`PRIORITY_OPPORTUNISTIC_MAP`).
pub const OPPORTUNISTIC_MAP_PRIORITY: Priority = Priority(19);
/// An ordinary map, the asks that carry split locations.
pub const MAP_PRIORITY: Priority = Priority(20);

/// What a MapReduce container runs, read from the priority its ApplicationMaster used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaskKind {
    ApplicationMaster,
    Map,
    Reduce,
    Other,
}

/// How many `TaskKind`s there are (for arrays indexed by `TaskKind as usize`).
pub const TASK_KINDS: usize = 4;

impl TaskKind {
    pub fn of_mapreduce_priority(priority: Priority) -> TaskKind {
        match priority {
            AM_PRIORITY => TaskKind::ApplicationMaster,
            RERUN_MAP_PRIORITY | OPPORTUNISTIC_MAP_PRIORITY | MAP_PRIORITY => TaskKind::Map,
            REDUCE_PRIORITY => TaskKind::Reduce,
            _ => TaskKind::Other,
        }
    }
}

/// What one app may do on the offered node under a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The plan does not steer the app: FairScheduler decides as it would without Rackwise.
    Stock,
    /// Another entry of the app's queue goes first (or none can place here): the app declines.
    Vetoed,
    /// The app places one container at `priority`, at no looser locality than `cap`
    /// (FairScheduler with only that key and its allowed locality set to the cap).
    Place { priority: Priority, cap: Locality },
}

/// Whether an app whose best ask at some priority on this node has locality `best` (`None`: no
/// ask there) can satisfy an entry capped at `cap`: the shim asks YARN for a pending ask at the
/// node, its rack or anywhere, as the cap says.
pub fn satisfiable(best: Option<Locality>, cap: Locality) -> bool {
    best.is_some_and(|best| best <= cap)
}

/// The plan-application rule, as `RackwiseAppAttempt` and the simulator apply it. `steered`:
/// whether the plan steers `app` (lists it in its queue's `steered`); `head`: the app, priority
/// and cap of the queue's first entry that is not spent in this offer and whose app can still
/// satisfy it (see [`first_satisfiable`]), among the app's own entries where the queue's plan
/// leaves the order between its apps to FairScheduler (`scheduler_orders_apps`). Only the
/// head's app places, under the head's priority and cap; every other steered app of the queue
/// is vetoed.
pub fn placement<A: PartialEq>(
    app: &A,
    steered: bool,
    head: Option<(&A, Priority, Locality)>,
) -> Placement {
    if !steered {
        return Placement::Stock;
    }
    match head {
        Some((first, priority, cap)) if first == app => Placement::Place { priority, cap },
        _ => Placement::Vetoed,
    }
}

/// The first of a queue's entries that `usable` (given its position) admits: not spent in this
/// offer and satisfiable on this node. With its position.
pub fn first_satisfiable<E>(
    entries: impl IntoIterator<Item = E>,
    usable: impl Fn(usize, &E) -> bool,
) -> Option<(usize, E)> {
    entries
        .into_iter()
        .enumerate()
        .find(|(position, e)| usable(*position, e))
}

/// The whole rule for one queue's plan: whether and how `app` places, given which entries are
/// spent in this offer and, for any app and priority, the closest locality at which that app
/// has a pending ask on the offered node.
pub fn apply_plan(
    plan: &QueuePlan,
    app: &AppId,
    spent: impl Fn(usize) -> bool,
    best: impl Fn(&AppId, Priority) -> Option<Locality>,
) -> Placement {
    let head = first_satisfiable(&plan.entries, |position, entry| {
        (!plan.scheduler_orders_apps || entry.app == *app)
            && !spent(position)
            && satisfiable(best(&entry.app, entry.priority), entry.locality)
    });
    placement(
        app,
        plan.steered.contains(app),
        head.map(|(_, entry)| (&entry.app, entry.priority, entry.locality)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_name_their_task_kinds() {
        let kinds: Vec<TaskKind> = [0, 5, 10, 19, 20, 7]
            .map(|p| TaskKind::of_mapreduce_priority(Priority(p)))
            .to_vec();
        assert_eq!(
            kinds,
            [
                TaskKind::ApplicationMaster,
                TaskKind::Map,
                TaskKind::Reduce,
                TaskKind::Map,
                TaskKind::Map,
                TaskKind::Other
            ]
        );
    }
}
