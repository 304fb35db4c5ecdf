//! What the core knows about the cluster, built only from the shim's events.
//!
//! Ordered maps everywhere: iteration order feeds decisions, and it must not depend on hash
//! seeds if the same events are to give the same plan in the RM and in the simulator.

use crate::policy::samp::{self, SampChoice};
use crate::policy::sarp;
use crate::predictor::{LearnedHistory, ShuffleEstimate};
use crate::protocol::{
    AppId, Ask, ContainerId, Event, LearnedRatio, Locality, NodeId, Priority, RackName, Resources,
    TaskKind, Utilization,
};
use crate::settings::{PolicyKind, QueuePolicy, Settings};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub host: String,
    pub rack: RackName,
    pub capacity: Resources,
    /// The offered node's latest figures, set by each offer through the same shared borrow the
    /// plan reads the node by, so an offer looks its node up once.
    pub unallocated: Cell<Resources>,
    pub utilization: Cell<Option<Utilization>>,
}

/// What a MapReduce job has told us about itself, through its containers and counters.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub estimate: ShuffleEstimate,
    /// Figures from the ApplicationMaster's counters (0 until the first report).
    pub maps_total: u32,
    pub maps_completed: u32,
    pub reduces_total: u32,
    pub map_input_bytes: u64,
    pub map_output_bytes: u64,
    pub running_maps: u32,
    pub running_reduces: u32,
    pub finished_reduces: u32,
    /// Finished map containers per rack: where the job's map output sits. Only a map's
    /// `ContainerFinished` adds to it, which keeps `finished_maps` true.
    pub finished_maps_by_rack: BTreeMap<RackName, u32>,
    /// The sum of `finished_maps_by_rack`: NAS predicts every candidate's maps on every offer.
    finished_maps: u32,
    /// Reduce containers placed per rack, running or done (SARP's reducesOnRack).
    pub reduces_by_rack: BTreeMap<RackName, u32>,
    /// SAMP's choice, made when the job's first map asks arrived (ShuffleWatcher queues).
    pub samp: Option<SampChoice>,
    /// SARP's per-rack reduce shares, fixed when the job's reduces were first asked for.
    pub reduce_shares: Option<BTreeMap<RackName, f64>>,
    sarp_invoked: bool,
}

/// Where a shuffle-heavy job's reduces stand against their SARP quota on one rack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaState {
    /// SARP had nothing to go on: the job's reduces are not constrained.
    NoQuota,
    Under,
    Used,
}

impl Job {
    fn new(estimate: ShuffleEstimate) -> Job {
        Job {
            estimate,
            maps_total: 0,
            maps_completed: 0,
            reduces_total: 0,
            map_input_bytes: 0,
            map_output_bytes: 0,
            running_maps: 0,
            running_reduces: 0,
            finished_reduces: 0,
            finished_maps_by_rack: BTreeMap::new(),
            finished_maps: 0,
            reduces_by_rack: BTreeMap::new(),
            samp: None,
            reduce_shares: None,
            sarp_invoked: false,
        }
    }

    /// The job's reduces placed on `rack` against its SARP quota there; the quotas are the
    /// shares apportioned over the reduces known now, so they always sum to that count.
    pub fn reduce_quota(&self, rack: &RackName, pending_reduces: u32) -> QuotaState {
        let Some(shares) = &self.reduce_shares else {
            return QuotaState::NoQuota;
        };
        let quota = sarp::apportioned(self.known_reduces(pending_reduces), shares, rack);
        let placed = self.reduces_by_rack.get(rack).copied().unwrap_or(0);
        if placed < quota {
            QuotaState::Under
        } else {
            QuotaState::Used
        }
    }

    pub fn finished_maps(&self) -> u32 {
        self.finished_maps
    }

    /// Maps the job has, as far as anything told us: counters, or what we saw asked and run.
    pub fn known_maps(&self, pending_maps: u32) -> u32 {
        self.maps_total
            .max(self.finished_maps() + self.running_maps + pending_maps)
    }

    pub fn known_reduces(&self, pending_reduces: u32) -> u32 {
        self.reduces_total
            .max(self.finished_reduces + self.running_reduces + pending_reduces)
    }

    /// Input bytes of one map: measured mean once maps completed, else the configured block.
    pub fn input_bytes_per_map(&self, default_map_input_bytes: u64) -> f64 {
        if self.maps_completed > 0 && self.map_input_bytes > 0 {
            self.map_input_bytes as f64 / self.maps_completed as f64
        } else {
            default_map_input_bytes as f64
        }
    }

    /// Fraction of the job's map output that sits on `rack`, from where its maps finished;
    /// `None` before any map finished.
    pub fn map_output_share_on(&self, rack: &RackName) -> Option<f64> {
        let total = self.finished_maps();
        (total > 0)
            .then(|| *self.finished_maps_by_rack.get(rack).unwrap_or(&0) as f64 / total as f64)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct App {
    pub name: String,
    pub user: String,
    pub queue: String,
    pub is_mapreduce: bool,
    pub tags: Vec<String>,
    pub submit_ms: u64,
    /// Outstanding asks by priority, as last reported. Only `apply_asks` replaces them, which
    /// keeps `pending_by_kind` true.
    pub asks: BTreeMap<Priority, Ask>,
    /// Outstanding containers per task kind (indexed by `TaskKind as usize`), summed once per
    /// ask table: every offer reads them for every app.
    pending_by_kind: [u32; TASK_KINDS],
    pub job: Job,
    /// Since when the app has had tasks pending without getting a container; drives the
    /// starvation guard.
    pub waiting_since_ms: Option<u64>,
}

impl App {
    /// Outstanding containers of the given kind (MapReduce priorities).
    pub fn pending(&self, kind: TaskKind) -> u32 {
        self.pending_by_kind[kind as usize]
    }

    /// Replaces the ask table and its per-kind sums.
    fn set_asks(&mut self, asks: BTreeMap<Priority, Ask>) {
        self.asks = asks;
        for kind in [
            TaskKind::ApplicationMaster,
            TaskKind::Map,
            TaskKind::Reduce,
            TaskKind::Other,
        ] {
            self.pending_by_kind[kind as usize] = self
                .asks
                .values()
                .filter(|ask| TaskKind::of_mapreduce_priority(ask.priority) == kind)
                .map(|ask| ask.any)
                .sum();
        }
    }

    /// Whether the policies consider this app at all: a MapReduce job past its
    /// ApplicationMaster with map or reduce tasks pending.
    fn is_candidate(&self) -> bool {
        self.is_mapreduce && !self.awaits_application_master() && self.pending_tasks() > 0
    }

    /// An app still waiting for its ApplicationMaster container is left to FairScheduler: the
    /// AM ask (priority 0) is never touched.
    pub fn awaits_application_master(&self) -> bool {
        self.pending(TaskKind::ApplicationMaster) > 0
    }

    fn pending_tasks(&self) -> u32 {
        self.pending(TaskKind::Map) + self.pending(TaskKind::Reduce)
    }

    /// Whether SAMP is to run on this ask table: the job has no choice yet and map asks
    /// arrived.
    fn samp_due(&self) -> bool {
        self.job.samp.is_none() && self.asks.contains_key(&Priority(MAP_PRIORITY))
    }

    /// ShuffleWatcher's once-per-job steps: SAMP when the first map asks arrive (their rack
    /// counts are where the input blocks are), SARP when reduces are first asked for.
    /// `preferred_by_others` is SAMP's tie-break, given when SAMP is due.
    fn shuffle_watch(
        &mut self,
        policy: &QueuePolicy,
        preferred_by_others: Option<&BTreeMap<RackName, u32>>,
    ) {
        if let Some(preferred_by_others) = preferred_by_others {
            if let Some(maps) = self.asks.get(&Priority(MAP_PRIORITY)) {
                self.job.samp = samp::choose(
                    maps.any,
                    &maps.racks,
                    self.job.estimate.ratio,
                    preferred_by_others,
                );
                // Once per job: the one place an operator can see why its maps cluster.
                if let Some(choice) = &self.job.samp {
                    log::info!(
                        "job '{}' (queue {}): SAMP prefers racks {} for its {} maps \
                         (splits per rack {:?}, racks other jobs prefer {:?}), \
                         tentative reduce shares {}",
                        self.name,
                        self.queue,
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
        }
        let pending_reduces = self.pending(TaskKind::Reduce);
        if !self.job.sarp_invoked && pending_reduces > 0 {
            self.job.sarp_invoked = true;
            let known_maps = self.job.known_maps(self.pending(TaskKind::Map));
            self.job.reduce_shares =
                sarp::reduce_shares(&self.job, known_maps, policy.map_completion_threshold);
            log::info!(
                "job '{}' (queue {}): SARP reduce shares {} ({} of {} maps finished)",
                self.name,
                self.queue,
                self.job
                    .reduce_shares
                    .as_ref()
                    .map_or_else(|| "none".to_string(), format_shares),
                self.job.finished_maps(),
                known_maps
            );
        }
    }
}

/// `rack=share` pairs for log lines, e.g. `/rack1=0.75,/rack2=0.25`.
fn format_shares(shares: &BTreeMap<RackName, f64>) -> String {
    shares
        .iter()
        .map(|(rack, share)| format!("{}={share:.2}", rack.0))
        .collect::<Vec<_>>()
        .join(",")
}

/// How many `TaskKind`s there are.
const TASK_KINDS: usize = 4;

/// The priority of a MapReduce job's ordinary map asks, the ones carrying split locations.
const MAP_PRIORITY: i32 = 20;

#[derive(Debug, Clone, PartialEq)]
pub struct Container {
    pub app: AppId,
    pub node: NodeId,
    pub rack: RackName,
    pub kind: TaskKind,
    pub locality: Locality,
    pub start_ms: u64,
}

/// The known apps, searched by id like an ordered map. Each app also keeps a slot for as long
/// as it is known, so that the candidate index names its apps by slot and every plan reads its
/// candidates without searching by id.
#[derive(Debug, Clone, Default)]
pub struct Apps {
    /// Each known app's slot, in id order.
    slots_by_id: BTreeMap<AppId, usize>,
    slots: Vec<Option<App>>,
    /// The slots of removed apps, taken again first.
    free: Vec<usize>,
}

impl Apps {
    pub fn get(&self, id: &AppId) -> Option<&App> {
        self.in_slot(self.slot_of(id)?)
    }

    pub fn get_mut(&mut self, id: &AppId) -> Option<&mut App> {
        let slot = self.slot_of(id)?;
        self.slots[slot].as_mut()
    }

    /// The slot of a known app.
    fn slot_of(&self, id: &AppId) -> Option<usize> {
        self.slots_by_id.get(id).copied()
    }

    /// The apps in id order.
    pub fn iter(&self) -> impl Iterator<Item = (&AppId, &App)> {
        self.slots_by_id
            .iter()
            .filter_map(|(id, &slot)| Some((id, self.in_slot(slot)?)))
    }

    pub fn values(&self) -> impl Iterator<Item = &App> {
        self.iter().map(|(_, app)| app)
    }

    fn in_slot(&self, slot: usize) -> Option<&App> {
        self.slots.get(slot)?.as_ref()
    }

    /// Adds or replaces an app; a replaced app keeps its slot.
    fn insert(&mut self, id: &AppId, app: App) {
        if let Some(&slot) = self.slots_by_id.get(id) {
            self.slots[slot] = Some(app);
            return;
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(app);
                slot
            }
            None => {
                self.slots.push(Some(app));
                self.slots.len() - 1
            }
        };
        self.slots_by_id.insert(id.clone(), slot);
    }

    fn remove(&mut self, id: &AppId) -> Option<App> {
        let slot = self.slots_by_id.remove(id)?;
        self.free.push(slot);
        self.slots[slot].take()
    }
}

/// Apps compare as the maps of id to app they stand for; which slot holds an app is not part of
/// it.
impl PartialEq for Apps {
    fn eq(&self, other: &Apps) -> bool {
        self.iter().eq(other.iter())
    }
}

impl std::ops::Index<&AppId> for Apps {
    type Output = App;

    fn index(&self, id: &AppId) -> &App {
        self.get(id).expect("no app with this id")
    }
}

/// A figure measured by an operator's feed: a rack's link utilization (0..) or a host's
/// cross-rack Mbit/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredLoad {
    pub value: f64,
    pub time_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterState {
    /// Known nodes. Only `apply` adds, removes or re-racks them, which keeps `nodes_per_rack`
    /// true; callers may update a node's free resources and utilization in place.
    pub nodes: BTreeMap<NodeId, Node>,
    /// How many nodes each rack has: the set of racks without a scan of every node per offer.
    nodes_per_rack: BTreeMap<RackName, u32>,
    pub apps: Apps,
    /// Running containers of the apps we know.
    pub containers: BTreeMap<ContainerId, Container>,
    /// The candidate apps (see `App::is_candidate`) of each queue, in (submit time, app id)
    /// order: what every offer plans over, kept here because it changes only with an app's
    /// arrival, removal or ask table.
    /// Each candidate with its slot in `apps`.
    candidates_by_queue: BTreeMap<Arc<str>, BTreeMap<(u64, AppId), usize>>,
    /// The keys of `containers` by app, so removing an app does not scan every container.
    containers_by_app: BTreeMap<AppId, BTreeSet<ContainerId>>,
    /// The keys of `containers` by node with each one's app and kind, so an offer reads its
    /// node's containers without scanning every running container or looking each one up
    /// (NAS's MTS does on every offer).
    containers_by_node: BTreeMap<NodeId, BTreeMap<ContainerId, (AppId, TaskKind)>>,
    pub measured_rack_load: BTreeMap<RackName, MeasuredLoad>,
    pub measured_host_load: BTreeMap<String, MeasuredLoad>,
    pub history: LearnedHistory,
}

impl ClusterState {
    pub fn with_history(history: LearnedHistory) -> ClusterState {
        ClusterState {
            history,
            ..ClusterState::default()
        }
    }

    /// For each rack, how many running jobs other than `app` prefer it (SAMP's tie-break).
    fn racks_preferred_by_jobs_other_than(&self, app: &AppId) -> BTreeMap<RackName, u32> {
        let mut counts = BTreeMap::new();
        for (id, other) in self.apps.iter() {
            if id == app {
                continue;
            }
            for rack in other.job.samp.iter().flat_map(|s| s.preferred.iter()) {
                *counts.entry(rack.clone()).or_insert(0) += 1;
            }
        }
        counts
    }

    /// Each queue with candidate apps, in queue name order, with their submit times, ids and
    /// apps in (submit time, app id) order.
    pub fn candidates_by_queue(
        &self,
    ) -> impl ExactSizeIterator<Item = (&Arc<str>, impl Iterator<Item = (u64, &AppId, &App)>)> {
        self.candidates_by_queue.iter().map(|(queue, listed)| {
            let apps = listed
                .iter()
                .filter_map(|((submit, id), &slot)| Some((*submit, id, self.apps.in_slot(slot)?)));
            (queue, apps)
        })
    }

    /// Takes `id` out of `candidates_by_queue` before its app changes or leaves.
    fn unlist_candidate(&mut self, id: &AppId) {
        let Some(app) = self.apps.get(id) else {
            return;
        };
        if let Some(listed) = self.candidates_by_queue.get_mut(app.queue.as_str()) {
            listed.remove(&(app.submit_ms, id.clone()));
            if listed.is_empty() {
                self.candidates_by_queue.remove(app.queue.as_str());
            }
        }
    }

    /// Puts `id` into `candidates_by_queue` if its app, as it is now, is a candidate.
    fn list_candidate(&mut self, id: &AppId) {
        let Some(slot) = self.apps.slot_of(id) else {
            return;
        };
        let Some(app) = self.apps.in_slot(slot).filter(|app| app.is_candidate()) else {
            return;
        };
        self.candidates_by_queue
            .entry(Arc::from(app.queue.as_str()))
            .or_default()
            .insert((app.submit_ms, id.clone()), slot);
    }

    /// Distinct racks that have at least one node.
    pub fn rack_count(&self) -> usize {
        self.nodes_per_rack.len()
    }

    /// The racks that have at least one node, in order.
    pub fn racks(&self) -> impl Iterator<Item = &RackName> {
        self.nodes_per_rack.keys()
    }

    /// Keeps `nodes_per_rack` in step with a node joining or leaving a rack.
    fn count_node(&mut self, rack: &RackName, joined: bool) {
        if joined {
            *self.nodes_per_rack.entry(rack.clone()).or_insert(0) += 1;
        } else if let Some(count) = self.nodes_per_rack.get_mut(rack) {
            *count -= 1;
            if *count == 0 {
                self.nodes_per_rack.remove(rack);
            }
        }
    }

    /// Applies one event. Ratios learned from a finished job are appended to `learned` for
    /// the shim to persist.
    pub fn apply(
        &mut self,
        event: &Event,
        now_ms: u64,
        settings: &Settings,
        learned: &mut Vec<LearnedRatio>,
    ) {
        match event {
            Event::NodeAdded {
                node,
                host,
                rack,
                capacity,
            } => {
                let known = self
                    .nodes
                    .get(node)
                    .map(|n| (n.unallocated.get(), n.rack.clone()));
                let unallocated = known.as_ref().map_or(*capacity, |(free, _)| *free);
                if let Some((_, old_rack)) = known {
                    self.count_node(&old_rack, false);
                }
                self.count_node(rack, true);
                self.nodes.insert(
                    node.clone(),
                    Node {
                        host: host.clone(),
                        rack: rack.clone(),
                        capacity: *capacity,
                        unallocated: Cell::new(unallocated),
                        utilization: Cell::new(None),
                    },
                );
            }
            Event::NodeRemoved { node } => {
                if let Some(removed) = self.nodes.remove(node) {
                    self.count_node(&removed.rack, false);
                }
            }
            Event::AppAdded {
                app,
                name,
                user,
                queue,
                app_type,
                tags,
                submit_ms,
            } => {
                let estimate = ShuffleEstimate::initial(
                    &app.0,
                    name,
                    tags,
                    &self.history,
                    settings.max_hint_ratio,
                );
                let job = Job::new(estimate);
                // A re-added app starts without asks, so it is no candidate until they come.
                self.unlist_candidate(app);
                self.apps.insert(
                    app,
                    App {
                        name: name.clone(),
                        user: user.clone(),
                        queue: queue.clone(),
                        is_mapreduce: app_type.eq_ignore_ascii_case("MAPREDUCE"),
                        tags: tags.clone(),
                        submit_ms: *submit_ms,
                        asks: BTreeMap::new(),
                        pending_by_kind: [0; TASK_KINDS],
                        job,
                        waiting_since_ms: None,
                    },
                );
            }
            Event::AppRemoved { app } => self.remove_app(app, learned),
            Event::Asks { app, asks } => self.apply_asks(
                app,
                asks.iter()
                    .filter(|ask| ask.any > 0)
                    .map(|ask| (ask.priority, ask.clone())),
                now_ms,
                settings,
            ),
            Event::ContainerAllocated {
                app,
                container,
                node,
                priority,
                locality,
                resources: _,
                time_ms,
            } => {
                let Some(known) = self.apps.get_mut(app) else {
                    return;
                };
                let kind = TaskKind::of_mapreduce_priority(*priority);
                let rack = self
                    .nodes
                    .get(node)
                    .map_or_else(|| RackName("".into()), |n| n.rack.clone());
                match kind {
                    TaskKind::Map => known.job.running_maps += 1,
                    TaskKind::Reduce => {
                        known.job.running_reduces += 1;
                        *known.job.reduces_by_rack.entry(rack.clone()).or_insert(0) += 1;
                    }
                    TaskKind::ApplicationMaster | TaskKind::Other => {}
                }
                if matches!(kind, TaskKind::Map | TaskKind::Reduce) {
                    // The app got a task: its wait (and so its starvation clock) restarts.
                    known.waiting_since_ms = Some(*time_ms);
                }
                if let Some(replaced) = self.containers.insert(
                    container.clone(),
                    Container {
                        app: app.clone(),
                        node: node.clone(),
                        rack,
                        kind,
                        locality: *locality,
                        start_ms: *time_ms,
                    },
                ) {
                    self.unindex(container, &replaced);
                }
                self.index(container, app, node, kind);
            }
            Event::ContainerFinished { container, .. } => {
                let Some(finished) = self.containers.remove(container) else {
                    return;
                };
                self.unindex(container, &finished);
                let Some(known) = self.apps.get_mut(&finished.app) else {
                    return;
                };
                let job = &mut known.job;
                match finished.kind {
                    TaskKind::Map => {
                        job.running_maps = job.running_maps.saturating_sub(1);
                        *job.finished_maps_by_rack.entry(finished.rack).or_insert(0) += 1;
                        job.finished_maps += 1;
                    }
                    TaskKind::Reduce => {
                        job.running_reduces = job.running_reduces.saturating_sub(1);
                        job.finished_reduces += 1;
                    }
                    TaskKind::ApplicationMaster | TaskKind::Other => {}
                }
            }
            Event::JobStats {
                app,
                maps_total,
                maps_completed,
                reduces_total,
                map_input_bytes,
                map_output_bytes,
            } => {
                let Some(known) = self.apps.get_mut(app) else {
                    return;
                };
                let job = &mut known.job;
                job.maps_total = *maps_total;
                job.maps_completed = *maps_completed;
                job.reduces_total = *reduces_total;
                job.map_input_bytes = *map_input_bytes;
                job.map_output_bytes = *map_output_bytes;
                if *maps_completed > 0 {
                    job.estimate.observe(*map_input_bytes, *map_output_bytes);
                }
            }
            Event::RackLoad {
                rack,
                utilization,
                time_ms,
            } => record_measurement(&mut self.measured_rack_load, rack, *utilization, *time_ms),
            Event::HostLoad {
                host,
                cross_rack_mbps,
                time_ms,
            } => record_measurement(
                &mut self.measured_host_load,
                host,
                *cross_rack_mbps,
                *time_ms,
            ),
        }
    }

    /// Applies one event given by value, with the same effect as [`ClusterState::apply`]. An
    /// ask table is moved into the state instead of cloned; every other event goes to `apply`.
    pub fn apply_owned(
        &mut self,
        event: Event,
        now_ms: u64,
        settings: &Settings,
        learned: &mut Vec<LearnedRatio>,
    ) {
        match event {
            Event::Asks { app, asks } => self.apply_asks(
                &app,
                asks.into_iter()
                    .filter(|ask| ask.any > 0)
                    .map(|ask| (ask.priority, ask)),
                now_ms,
                settings,
            ),
            other => self.apply(&other, now_ms, settings, learned),
        }
    }

    /// An app's whole ask table, replacing the previous one (`asks` holds only asks with
    /// `any > 0`).
    fn apply_asks(
        &mut self,
        app: &AppId,
        asks: impl Iterator<Item = (Priority, Ask)>,
        now_ms: u64,
        settings: &Settings,
    ) {
        self.unlist_candidate(app);
        let Some(known) = self.apps.get_mut(app) else {
            log::debug!("asks for unknown app {} ignored", app.0);
            return;
        };
        known.set_asks(asks.collect());
        if known.pending_tasks() == 0 {
            known.waiting_since_ms = None;
        } else if known.waiting_since_ms.is_none() {
            known.waiting_since_ms = Some(now_ms);
        }
        let policy = settings.queue_policy(&known.queue);
        if known.is_mapreduce && policy.kind == PolicyKind::ShuffleWatcher {
            // SAMP's tie-break walks every app, so it is counted only when SAMP runs (once per
            // job). This ask table changes no other job's choice, so the counts are the ones
            // before it was applied.
            let preferred_by_others = known
                .samp_due()
                .then(|| self.racks_preferred_by_jobs_other_than(app));
            if let Some(known) = self.apps.get_mut(app) {
                known.shuffle_watch(&policy, preferred_by_others.as_ref());
            }
        }
        self.list_candidate(app);
    }

    /// The running containers on `node` with their app and kind, in container id order (the
    /// order of `containers`).
    pub fn containers_on<'a>(
        &'a self,
        node: &NodeId,
    ) -> impl Iterator<Item = (&'a ContainerId, &'a AppId, TaskKind)> {
        self.containers_by_node
            .get(node)
            .into_iter()
            .flatten()
            .map(|(id, (app, kind))| (id, app, *kind))
    }

    fn index(&mut self, container: &ContainerId, app: &AppId, node: &NodeId, kind: TaskKind) {
        self.containers_by_app
            .entry(app.clone())
            .or_default()
            .insert(container.clone());
        self.containers_by_node
            .entry(node.clone())
            .or_default()
            .insert(container.clone(), (app.clone(), kind));
    }

    /// Drops a container that left `containers` from the app and node indexes.
    fn unindex(&mut self, container: &ContainerId, removed: &Container) {
        unindex_in(&mut self.containers_by_app, &removed.app, |set| {
            set.remove(container);
            set.is_empty()
        });
        unindex_in(&mut self.containers_by_node, &removed.node, |on_node| {
            on_node.remove(container);
            on_node.is_empty()
        });
    }

    fn remove_app(&mut self, app: &AppId, learned: &mut Vec<LearnedRatio>) {
        self.unlist_candidate(app);
        let Some(removed) = self.apps.remove(app) else {
            return;
        };
        // The app's own index entry goes first, so `unindex` only has the node's left to do.
        for container in self.containers_by_app.remove(app).unwrap_or_default() {
            if let Some(removed) = self.containers.remove(&container) {
                self.unindex(&container, &removed);
            }
        }
        let estimate = removed.job.estimate;
        if removed.is_mapreduce && estimate.source == crate::predictor::RatioSource::Counters {
            learned.push(self.history.learn(&removed.name, estimate.ratio));
        }
    }
}

/// Takes a container out of `key`'s entry of a per-key index (`remove` says whether the entry
/// is empty then), dropping the entry once empty.
fn unindex_in<K: Ord, V>(index: &mut BTreeMap<K, V>, key: &K, remove: impl FnOnce(&mut V) -> bool) {
    if index.get_mut(key).is_some_and(remove) {
        index.remove(key);
    }
}

/// Keeps a feed measurement; a negative or non-finite figure is dropped with a warning.
fn record_measurement<K: Ord + Clone + std::fmt::Debug>(
    into: &mut BTreeMap<K, MeasuredLoad>,
    key: &K,
    value: f64,
    time_ms: u64,
) {
    if value.is_finite() && value >= 0.0 {
        into.insert(key.clone(), MeasuredLoad { value, time_ms });
    } else {
        log::warn!("feed figure {value} for {key:?} ignored: must be a finite number >= 0");
    }
}
