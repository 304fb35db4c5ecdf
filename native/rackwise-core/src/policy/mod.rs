//! The policy framework: one trait every steering policy implements, a registry of them by
//! `<policy>` name, and the per-offer plan that asks each steered queue's policy for its ranking.
//!
//! FairScheduler has already decided which queue gets the node (the shim lets it); per steered
//! queue the core ranks what its apps may place here. A starvation guard sits above every
//! policy: an app that has waited with tasks pending for longer than its queue's guard (the
//! queue's `<starvationGuardMs>`, else `starvation-guard-ms`, else the policy's own default)
//! goes first with all its asks (of several such apps, the one waiting longest), and an app
//! whose ApplicationMaster a policy holds back (`Policy::held_starts`) starts once it has
//! waited that long since its submission, so no app is ever held back longer than that bound
//! by Rackwise.
//!
//! Adding a policy is one module folder here and one line in [`Registry::builtin`]; a caller
//! may also register its own policies (see `tests/example_policy.rs`).

pub mod dp;
pub mod drmjs;
pub mod fresh;
pub mod nas;
pub mod shufflewatcher;

use crate::mapreduce::TaskKind;
use crate::protocol::{
    AppId, Locality, MarketInterval, NodeId, NodeScoreReport, Plan, PlanEntry, QueuePlan,
    QueueWeight, RackName, Resources,
};
use crate::settings::{params::no_check, Declaration, ParamValues, Settings};
use crate::state::{App, ClusterState, Job, Node, Observation};
use std::any::Any;
use std::sync::Arc;

/// A steering policy: its declared parameters, its own memory (the value itself: one instance
/// per registered policy, for the whole engine; per-queue and per-job memory lives inside it),
/// what it observes, and its ranking of a steered queue's apps on each offer.
///
/// Call order on each offer: `observe` for every observation of the offer's events, in order,
/// each once the state reflects it; then, for each steered queue with candidate apps (queues in
/// name order), `begin_offer` before the policy's first queue of this offer, `rank` for the
/// queue and, if the queue's plan then has entries, `held_starts`; once all queues are planned,
/// `settle` for every policy that ranked a queue, then `end_offer` for every policy; then
/// `queue_weights`, then `closed_intervals`.
pub trait Policy: AsAny + Send {
    /// The `<policy>` name and the parameters, as data (the settings parse and check them).
    fn declaration(&self) -> Declaration;

    /// Something happened in the cluster (the state already reflects it).
    fn observe(&mut self, _context: &Context, _observation: &Observation) {}

    /// Called once per offer before the first queue this policy ranks in it (not at all when
    /// it ranks none).
    fn begin_offer(&mut self, _context: &Context, _offer: &Offer) {}

    /// Appends the ranked entries of one steered queue for this offer. `entries` may already
    /// hold the starvation guard's entries (`turn.starved`), which stay first.
    fn rank(&mut self, turn: &Turn, entries: &mut Vec<PlanEntry>);

    /// Whether FairScheduler's own order between the queue's apps (its leaf queue's policy)
    /// decides which app places on this offer (`QueuePlan::scheduler_orders_apps`): the
    /// policy's entries then say what each app may run and in what order within the app, and
    /// their order across apps is not read. False: the core's order across apps decides, and
    /// on an offer where the starvation guard lifts one of the queue's apps (`Turn::starved`)
    /// the lifted apps go first; with FairScheduler's order the guard only loosens their
    /// locality.
    fn scheduler_orders_apps(&self, _turn: &Turn) -> bool {
        false
    }

    /// Apps of the queue still waiting for their ApplicationMaster container whose start the
    /// policy holds back on this offer (asked after `rank`): the plan steers them without an
    /// entry, which vetoes their AM ask. Asked only when the queue's plan has entries, so a
    /// held start never idles a container the queue's running jobs could use; the starvation
    /// guard lifts the hold once an app has waited since its submission longer than its
    /// queue's guard.
    fn held_starts(&mut self, _turn: &Turn) -> Vec<AppId> {
        Vec::new()
    }

    /// Called once every queue of the offer is planned, for each policy that ranked one of
    /// them, with the whole plan: where a decision for one queue depends on what the others
    /// will do (ShuffleWatcher's relaxed fairness passes a queue's turn only to a queue that
    /// takes the node), the policy settles it here.
    fn settle(&mut self, _context: &Context, _plan: &mut Plan) {}

    /// Called for every policy once an offer's queues are planned.
    fn end_offer(&mut self) {}

    /// Weights to set on FairScheduler queues, asked once per offer (a policy recomputes on
    /// its own interval from `now_ms`); empty leaves every weight as it is.
    fn queue_weights(&mut self, _context: &Context, _now_ms: u64) -> Vec<QueueWeight> {
        Vec::new()
    }

    /// The market intervals that closed since the last call, for the shim's ledger.
    fn closed_intervals(&mut self) -> Vec<MarketInterval> {
        Vec::new()
    }

    /// Per-node scores the policy published since the last call, for the shim's metrics.
    fn node_scores(&mut self) -> Vec<NodeScoreReport> {
        Vec::new()
    }
}

/// Lets the engine hand out a registered policy as its own type (for tests and diagnostics).
pub trait AsAny {
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What a policy reads besides its own memory.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub state: &'a ClusterState,
    pub settings: &'a Settings,
    /// The policy's own yarn-site keys.
    pub keys: &'a ParamValues,
    /// The policy's position in the registry.
    index: usize,
}

impl<'a> Context<'a> {
    /// What the policy at `index` of the registry reads.
    fn of(state: &'a ClusterState, settings: &'a Settings, index: usize) -> Context<'a> {
        Context {
            state,
            settings,
            keys: settings.policy_keys(index),
            index,
        }
    }

    /// The queues whose own `<rackwise>` element names this policy, with their parameters.
    pub fn own_queues(&self) -> impl Iterator<Item = (&'a str, &'a ParamValues)> {
        self.settings.queues_of(self.index)
    }

    /// Whether some queue's own `<rackwise>` element names this policy.
    pub fn named_by_a_queue(&self) -> bool {
        self.settings.is_named_by_a_queue(self.index)
    }

    /// The parameters of `queue` if this policy steers it.
    pub fn steered(&self, queue: &str) -> Option<&'a ParamValues> {
        let setup = self.settings.queue_policy(queue);
        (setup.policy == self.index).then_some(&setup.values)
    }
}

/// The node being offered and what NetSat says about its rack.
#[derive(Debug, Clone)]
pub struct Offer<'a> {
    pub node_id: &'a NodeId,
    pub node: &'a Node,
    pub host: &'a str,
    pub rack: &'a RackName,
    pub rack_saturated: bool,
    /// Some rack (the offered one or another) was at or below NetSat's threshold at its last
    /// sample: traffic held off a saturated rack has somewhere else to go.
    pub some_rack_unsaturated: bool,
    pub now_ms: u64,
}

/// A job of a steered queue, as the policies see it.
pub struct Candidate<'a> {
    pub id: &'a AppId,
    pub app: &'a App,
    /// The app's slot in the state (`Apps::slot_of`): stable while the app is known, reused
    /// after it leaves. A policy keeps per-app memory in an `AppSlots` indexed by it instead of
    /// searching a map by id for every candidate on every offer.
    pub slot: usize,
}

/// A policy's memory per app, indexed by the app's state slot and checked against its id, since
/// a slot is reused after its app leaves.
#[derive(Debug, Clone, PartialEq)]
pub struct AppSlots<T> {
    slots: Vec<Option<(AppId, T)>>,
}

impl<T> Default for AppSlots<T> {
    fn default() -> Self {
        AppSlots { slots: Vec::new() }
    }
}

impl<T> AppSlots<T> {
    /// `app`'s memory, if `slot` holds it.
    pub fn get(&self, slot: usize, app: &AppId) -> Option<&T> {
        match self.slots.get(slot)? {
            Some((id, memory)) if id == app => Some(memory),
            _ => None,
        }
    }

    /// `app`'s memory, if `slot` holds it.
    pub fn get_mut(&mut self, slot: usize, app: &AppId) -> Option<&mut T> {
        match self.slots.get_mut(slot)? {
            Some((id, memory)) if id == app => Some(memory),
            _ => None,
        }
    }

    /// Puts `memory` in `slot` as `app`'s, replacing whatever the slot held.
    pub fn insert(&mut self, slot: usize, app: &AppId, memory: T) {
        *self.entry_slot(slot) = Some((app.clone(), memory));
    }

    /// `app`'s memory, started afresh if `slot` held none of it.
    pub fn entry(&mut self, slot: usize, app: &AppId) -> &mut T
    where
        T: Default,
    {
        let held = self.entry_slot(slot);
        if held.as_ref().is_some_and(|(id, _)| id != app) {
            *held = None;
        }
        &mut held.get_or_insert_with(|| (app.clone(), T::default())).1
    }

    /// The place of `slot`, grown to it.
    fn entry_slot(&mut self, slot: usize) -> &mut Option<(AppId, T)> {
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || None);
        }
        &mut self.slots[slot]
    }

    /// Forgets whatever `slot` holds.
    pub fn clear(&mut self, slot: usize) {
        if let Some(held) = self.slots.get_mut(slot) {
            *held = None;
        }
    }

    /// Forgets `app`'s memory, wherever it is (for an app whose slot is no longer known).
    pub fn forget(&mut self, app: &AppId) {
        for held in &mut self.slots {
            if held.as_ref().is_some_and(|(id, _)| id == app) {
                *held = None;
            }
        }
    }

    /// Every app's memory, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (&AppId, &T)> {
        self.slots.iter().flatten().map(|(id, memory)| (id, memory))
    }

    /// `app`'s memory, searched for by id.
    pub fn find(&self, app: &AppId) -> Option<&T> {
        self.iter()
            .find(|(id, _)| *id == app)
            .map(|(_, memory)| memory)
    }
}

/// One steered queue on one offer.
pub struct Turn<'a> {
    pub context: Context<'a>,
    pub queue: &'a Arc<str>,
    /// The queue's candidate apps, by arrival (submit time, then id).
    pub candidates: &'a [Candidate<'a>],
    /// The queue's parameters for this policy.
    pub params: &'a ParamValues,
    pub offer: &'a Offer<'a>,
    /// Whether the starvation guard put entries first.
    pub starved: bool,
}

/// `<policy>none</policy>`: the queue is left to FairScheduler.
struct Unsteered;

impl Policy for Unsteered {
    fn declaration(&self) -> Declaration {
        Declaration {
            name: "none",
            queue_params: &[],
            cluster_params: &[],
            check: no_check,
            steers: false,
            reads_netsat: false,
            starvation_guard_ms: None,
        }
    }

    fn rank(&mut self, _turn: &Turn, _entries: &mut Vec<PlanEntry>) {}
}

/// The policies an engine knows, by `<policy>` name.
pub struct Registry {
    policies: Vec<Box<dyn Policy>>,
    declarations: Vec<Declaration>,
    /// Which policies began the current offer (scratch, kept to avoid an allocation per offer).
    begun: Vec<bool>,
}

impl Registry {
    /// `none`, `shufflewatcher`, `nas`, `fresh`, `drmjs` and `dp`.
    pub fn builtin() -> Registry {
        Registry {
            policies: Vec::new(),
            declarations: Vec::new(),
            begun: Vec::new(),
        }
        .with(Box::new(Unsteered))
        .with(Box::new(shufflewatcher::ShuffleWatcher::default()))
        .with(Box::new(nas::Nas::default()))
        .with(Box::new(fresh::Fresh::default()))
        .with(Box::new(drmjs::Drmjs::default()))
        .with(Box::new(dp::Dp::default()))
    }

    /// Adds a policy. Panics if its name is taken: two policies answering to one `<policy>`
    /// name is a programming error.
    pub fn with(mut self, policy: Box<dyn Policy>) -> Registry {
        let declaration = policy.declaration();
        assert!(
            self.declarations.iter().all(|d| d.name != declaration.name),
            "a policy named {} is already registered",
            declaration.name
        );
        self.declarations.push(declaration);
        self.policies.push(policy);
        self.begun.push(false);
        self
    }

    pub fn declarations(&self) -> &[Declaration] {
        &self.declarations
    }

    /// The registered policy of type `T`, if any.
    pub fn get<T: Policy + 'static>(&self) -> Option<&T> {
        self.policies
            .iter()
            .find_map(|policy| (**policy).as_any().downcast_ref::<T>())
    }

    /// Tells every policy what happened.
    pub(crate) fn observe(
        &mut self,
        state: &ClusterState,
        settings: &Settings,
        observation: &Observation,
    ) {
        for (index, policy) in self.policies.iter_mut().enumerate() {
            let context = Context::of(state, settings, index);
            policy.observe(&context, observation);
        }
    }

    /// The plan for this offer, and the apps whose wait tripped the starvation guard.
    pub(crate) fn plan(
        &mut self,
        state: &ClusterState,
        settings: &Settings,
        offer: &Offer,
    ) -> (Plan, Vec<AppId>) {
        let mut plan = Plan {
            queues: Vec::with_capacity(state.candidates_by_queue().len()),
        };
        let mut starved_apps = Vec::new();
        // One buffer for every queue's candidates.
        let mut candidates: Vec<Candidate> = Vec::new();
        // Queues in name order, each one's jobs by arrival: ties between categories are broken
        // by job arrival (ShuffleWatcher §3.1).
        for (queue, listed) in state.candidates_by_queue() {
            let setup = settings.queue_policy(queue);
            let index = setup.policy;
            if !self.declarations[index].steers {
                continue;
            }
            candidates.clear();
            candidates.extend(listed.map(|(_, slot, id, app)| Candidate { id, app, slot }));
            let mut entries = Vec::new();
            let guard_ms = settings.starvation_guard_ms(setup);
            // The longest wait goes first. An app's wait restarts at each container, so in
            // arrival order an early job with many tasks pending trips the guard again one
            // bound after each container and keeps heading the queue, while a later job that
            // has had none waits until the early job's asks run out (FB-2009 at X = 96:
            // one-map jobs of a user running a 120-reduce job took an hour; docs/simulator.md,
            // "The starvation guard's order").
            let mut starved: Vec<(u64, &Candidate)> = candidates
                .iter()
                .filter_map(|candidate| {
                    let waited = candidate
                        .app
                        .waiting_since_ms
                        .map_or(0, |since| offer.now_ms.saturating_sub(since));
                    (waited > guard_ms).then_some((waited, candidate))
                })
                .collect();
            // Stable: equal waits keep arrival order.
            starved.sort_by_key(|&(waited, _)| std::cmp::Reverse(waited));
            for (_, candidate) in starved {
                starved_apps.push(candidate.id.clone());
                entries.extend(all_asks(candidate, "starvation-guard"));
            }
            let context = Context::of(state, settings, index);
            let policy = &mut self.policies[index];
            if !std::mem::replace(&mut self.begun[index], true) {
                policy.begin_offer(&context, offer);
            }
            let turn = Turn {
                context,
                queue,
                candidates: &candidates,
                params: &setup.values,
                offer,
                starved: !entries.is_empty(),
            };
            policy.rank(&turn, &mut entries);
            let scheduler_orders_apps = policy.scheduler_orders_apps(&turn);
            let mut steered: Vec<AppId> = candidates.iter().map(|c| c.id.clone()).collect();
            if !entries.is_empty() {
                for id in policy.held_starts(&turn) {
                    let waited = state
                        .apps
                        .get(&id)
                        .map_or(0, |app| offer.now_ms.saturating_sub(app.submit_ms));
                    if waited > guard_ms {
                        starved_apps.push(id);
                    } else {
                        steered.push(id);
                    }
                }
            }
            plan.queues.push(QueuePlan {
                queue: Arc::clone(queue),
                steered,
                entries,
                scheduler_orders_apps,
            });
        }
        for (index, (policy, begun)) in self.policies.iter_mut().zip(&mut self.begun).enumerate() {
            if std::mem::replace(begun, false) {
                let context = Context::of(state, settings, index);
                policy.settle(&context, &mut plan);
            }
            policy.end_offer();
        }
        (plan, starved_apps)
    }

    /// Every policy's queue weights for this offer.
    pub(crate) fn queue_weights(
        &mut self,
        state: &ClusterState,
        settings: &Settings,
        now_ms: u64,
    ) -> Vec<QueueWeight> {
        let mut weights = Vec::new();
        for (index, policy) in self.named_policies(settings) {
            let context = Context::of(state, settings, index);
            weights.extend(policy.queue_weights(&context, now_ms));
        }
        weights
    }

    /// Every policy's market intervals closed since the previous offer.
    pub(crate) fn closed_intervals(&mut self, settings: &Settings) -> Vec<MarketInterval> {
        concatenated(
            self.named_policies(settings)
                .map(|(_, policy)| policy.closed_intervals()),
        )
    }

    /// Every policy's per-node scores published since the previous offer.
    pub(crate) fn node_scores(&mut self, settings: &Settings) -> Vec<NodeScoreReport> {
        concatenated(
            self.named_policies(settings)
                .map(|(_, policy)| policy.node_scores()),
        )
    }

    /// The policies some queue names, with their registry positions. The others publish
    /// nothing, and asking each of them on every one of millions of offers was measurable.
    fn named_policies<'a>(
        &'a mut self,
        settings: &'a Settings,
    ) -> impl Iterator<Item = (usize, &'a mut Box<dyn Policy>)> + 'a {
        self.policies
            .iter_mut()
            .enumerate()
            .filter(|(index, _)| settings.is_named_by_a_queue(*index))
    }
}

/// The policies' lists in policy order, as one. Asked on every offer, when nearly every list is
/// empty: the first non-empty one is taken as it is, and only a second is copied.
fn concatenated<T>(lists: impl Iterator<Item = Vec<T>>) -> Vec<T> {
    let mut all = Vec::new();
    for list in lists {
        if all.is_empty() {
            all = list;
        } else {
            all.extend(list);
        }
    }
    all
}

/// How many containers of `container`'s size fit a node of `capacity` (by memory and vcores,
/// whichever binds; a size of zero on both counts as one).
pub fn containers_fitting(capacity: &Resources, container: &Resources) -> u64 {
    let by_memory = (container.memory_mb > 0).then(|| capacity.memory_mb / container.memory_mb);
    let by_vcores = (container.vcores > 0).then(|| u64::from(capacity.vcores / container.vcores));
    match (by_memory, by_vcores) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => 1,
    }
}

/// Says, once per job (the caller remembers that it did), that a steered job's maps will not be
/// held for locality because no split names a node or rack of the cluster.
pub fn log_storage_without_locality(policy: &str, app: &App) {
    log::info!(
        "job '{}' (queue {}, {policy}): no split names a node or rack of the cluster \
         (storage without locality, such as file:/// or an object store): its maps are not \
         held for locality",
        app.name,
        app.queue
    );
}

/// The closest locality any pending map of `app` can ever get on the cluster as it is: node-local
/// when a split names the host of a live node, rack-local when a split's rack has nodes, else
/// off-switch. With storage that has no locality (`file:///`, object stores) splits name hosts
/// such as `localhost` and the rack `/default-rack`, which no node is on: waiting for a local
/// container there would only hold the job's maps.
pub fn reachable_map_locality(app: &App, state: &ClusterState) -> Locality {
    let maps = || {
        app.asks
            .values()
            .filter(|ask| TaskKind::of_mapreduce_priority(ask.priority) == TaskKind::Map)
    };
    let on_live_host = maps().any(|ask| {
        ask.hosts
            .iter()
            .any(|(host, count)| *count > 0 && state.has_node_on_host(host))
    });
    if on_live_host {
        return Locality::NodeLocal;
    }
    let on_live_rack = maps().any(|ask| {
        ask.racks
            .iter()
            .any(|(rack, count)| *count > 0 && state.nodes_on_rack(rack) > 0)
    });
    if on_live_rack {
        Locality::RackLocal
    } else {
        Locality::OffSwitch
    }
}

/// Whether a reduce of `app` should stay off `rack` (`reduceRackWaitMs` of NAS, and of
/// ShuffleWatcher for shuffle-light jobs): the job's reduces there reached its CA-RTS ReduceNum
/// in whole reduces (its reduces apportioned over the racks of its finished maps, floors then
/// the largest remainders, so a one-reduce job wants exactly its busiest rack, where the paper's
/// fraction is above 0 on every rack holding any output), and `rack` holds less than half the
/// finished maps of the busiest rack, so a reduce here would fetch markedly more across racks
/// than one there (never before a map finished).
pub fn reduce_held_off(app: &App, rack: &RackName) -> bool {
    let job = &app.job;
    let total = job.known_reduces(app.pending(TaskKind::Reduce));
    output_elsewhere(job, rack)
        && job.reduces_on(rack)
            >= shufflewatcher::sarp::apportioned(total, &job.finished_maps_by_rack, rack)
}

/// Whether `rack` holds less than half the finished maps of the job's busiest rack (false
/// before any finished).
fn output_elsewhere(job: &Job, rack: &RackName) -> bool {
    let here = job.finished_maps_by_rack.get(rack).copied().unwrap_or(0);
    let busiest = job
        .finished_maps_by_rack
        .values()
        .copied()
        .max()
        .unwrap_or(0);
    2 * here < busiest
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
