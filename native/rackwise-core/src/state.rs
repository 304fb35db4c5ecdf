//! What the core knows about the cluster, built only from the shim's events.
//!
//! Ordered maps everywhere: iteration order feeds decisions, and it must not depend on hash
//! seeds if the same events are to give the same plan in the RM and in the simulator.

use crate::mapreduce::{TaskKind, TASK_KINDS};
use crate::predictor::{LearnedHistory, ShuffleEstimate};
use crate::protocol::{
    AppId, Ask, AskMove, ContainerId, Event, LearnedRatio, Locality, NodeId, Priority, RackName,
    Resources, Utilization,
};
use crate::settings::Settings;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub host: String,
    pub rack: RackName,
    pub capacity: Resources,
    /// The NodeManager's latest utilization report, from the last offer of this node that
    /// carried one.
    pub utilization: Option<Utilization>,
}

/// Where a MapReduce job stands, derived from its task counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobPhase {
    /// Its ApplicationMaster has not started yet.
    Starting,
    /// Maps are pending or running.
    Map,
    /// Every map is done; reduces are pending or running.
    Reduce,
    /// Nothing pending or running (finished, or between asks).
    Idle,
}

/// What a policy is told happened, derived by the state from the shim's events once they are
/// applied (the state already reflects them when a policy sees them).
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    NodeAdded {
        node: NodeId,
    },
    NodeRemoved {
        node: NodeId,
    },
    AppAdded {
        app: AppId,
    },
    /// The app is gone from the state.
    AppRemoved {
        app: AppId,
    },
    /// Rows of the app's ask table changed (`App::asks` holds the table they left).
    AsksChanged {
        app: AppId,
    },
    TaskStarted {
        app: AppId,
        node: NodeId,
        rack: RackName,
        kind: TaskKind,
        priority: Priority,
        locality: Locality,
        time_ms: u64,
    },
    /// A task's container finished: its latency on that node is `finish_ms - start_ms`.
    TaskFinished {
        app: AppId,
        node: NodeId,
        rack: RackName,
        kind: TaskKind,
        /// Where the container was placed relative to the task's data (as `TaskStarted` said).
        locality: Locality,
        start_ms: u64,
        finish_ms: u64,
    },
    /// New counters of the job (`Job` holds them).
    JobStats {
        app: AppId,
    },
    RackLoad {
        rack: RackName,
    },
    /// New figures of a host (`ClusterState::host_figures`).
    HostFigures {
        host: String,
    },
    /// A budget queue's balance and spending rate were set (see `Event::Account`); the state
    /// keeps no accounts, so the values travel with the observation.
    Account {
        queue: String,
        budget: f64,
        spending: f64,
    },
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
    /// Finished map containers per rack: where the job's map output sits. Only a completed map's
    /// `ContainerFinished` adds to it, which keeps `finished_maps` true.
    pub finished_maps_by_rack: BTreeMap<RackName, u32>,
    /// The sum of `finished_maps_by_rack`: NAS predicts every candidate's maps on every offer.
    finished_maps: u32,
    /// Reduce containers per rack, running or done (not those that ended without their task):
    /// the one count of them every policy reads (SARP's reducesOnRack, NAS's placed reduces for
    /// ReduceNum).
    pub reduces_by_rack: BTreeMap<RackName, u32>,
    /// The job's finished map and reduce containers' times: its profile (FRESH), learned by
    /// its name when it leaves.
    pub map_times: FinishedTasks,
    pub reduce_times: FinishedTasks,
    /// Those of `map_times` that ran node-local: what a map of the job takes without reading
    /// its split over the network (NAS's map wait follows how much longer the others took).
    pub node_local_map_times: FinishedTasks,
}

/// An exponentially weighted moving mean: `sample` weighted `weight` against the mean so far,
/// or the sample itself before there is one (NetSat's rack loads, NAS's cost of a remote read).
pub fn moving_mean(mean: Option<f64>, sample: f64, weight: f64) -> f64 {
    match mean {
        Some(previous) => weight * sample + (1.0 - weight) * previous,
        None => sample,
    }
}

/// Finished tasks of one kind: how many and their total time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FinishedTasks {
    pub count: u32,
    pub total_ms: u64,
}

impl FinishedTasks {
    fn add(&mut self, took_ms: u64) {
        self.count += 1;
        self.total_ms += took_ms;
    }

    /// Their mean time (ms), if any finished.
    pub fn mean_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.total_ms as f64 / self.count as f64)
    }
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
            map_times: FinishedTasks::default(),
            reduce_times: FinishedTasks::default(),
            node_local_map_times: FinishedTasks::default(),
        }
    }

    /// Reduces of the job on `rack`, running or done.
    pub fn reduces_on(&self, rack: &RackName) -> u32 {
        self.reduces_by_rack.get(rack).copied().unwrap_or(0)
    }

    pub fn finished_maps(&self) -> u32 {
        self.finished_maps
    }

    /// Maps the job has: the AM's own count once it reported one (the MapReduce AM reports
    /// `mapsTotal` 0 until it has initialised the job), else what we saw finished, running and
    /// asked. The AM's count wins because the RM's ask can overstate what is left (counting
    /// what it saw, a run of the main job took TeraSort's 12 maps for 14): most likely the
    /// AM's absolute ask, sent before the AM learned of a container the RM had just granted,
    /// restating the count the RM had lowered (YARN-1902).
    pub fn known_maps(&self, pending_maps: u32) -> u32 {
        if self.maps_total > 0 {
            self.maps_total
        } else {
            self.finished_maps() + self.running_maps + pending_maps
        }
    }

    /// Reduces the job has: at least what we saw finished, running and asked. Unlike maps,
    /// this count may pass the AM's: a reduce the AM preempts ends as `KILLED_BY_APPMASTER`,
    /// the status a succeeded task's container ends with too, so it counts as finished while
    /// its rerun is asked again, and only the larger count leaves the rerun room in the job's
    /// reduce quotas (SARP, NAS's ReduceNum).
    pub fn known_reduces(&self, pending_reduces: u32) -> u32 {
        self.reduces_total
            .max(self.finished_reduces + self.running_reduces + pending_reduces)
    }

    /// The job's map output, which its reduces will read: its shuffle ratio (measured from the
    /// counters once maps completed, see `predictor`) × input per map × its maps. Once every map
    /// completed this is the counters' own total.
    pub fn predicted_map_output_bytes(
        &self,
        pending_maps: u32,
        default_map_input_bytes: u64,
    ) -> f64 {
        self.estimate.ratio
            * self.input_bytes_per_map(default_map_input_bytes)
            * f64::from(self.known_maps(pending_maps))
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
    /// Outstanding asks by priority (each with `any > 0`), as last reported. Only
    /// `App::change_asks` changes them, which keeps `pending_by_kind` true.
    pub asks: BTreeMap<Priority, Ask>,
    /// Outstanding containers per task kind (indexed by `TaskKind as usize`), kept in step with
    /// each row change: every offer reads them for every app.
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

    /// Applies changed rows in place: a row replaces its priority's row, `any == 0` removes
    /// it. The per-kind sums move by the difference of each replaced row.
    fn change_asks(&mut self, rows: Vec<Ask>) {
        for row in rows {
            let kind = TaskKind::of_mapreduce_priority(row.priority) as usize;
            let previous = if row.any == 0 {
                self.asks.remove(&row.priority)
            } else {
                self.pending_by_kind[kind] += row.any;
                self.asks.insert(row.priority, row)
            };
            if let Some(previous) = previous {
                self.pending_by_kind[kind] -= previous.any;
            }
        }
    }

    /// Applies moves of rows it holds in place: the row's `any` is replaced (`0` removes the
    /// row) and its host and rack counts change in order. A move of a row the app does not
    /// hold is a caller's error: logged and ignored.
    fn move_asks(&mut self, id: &AppId, moves: Vec<AskMove>) {
        for change in moves {
            let kind = TaskKind::of_mapreduce_priority(change.priority) as usize;
            let Some(row) = self.asks.get_mut(&change.priority) else {
                log::warn!(
                    "ask move of app {} at priority {} ignored: the app has no ask row at that \
                     priority (a move changes a row sent before in full)",
                    id.0,
                    change.priority.0
                );
                continue;
            };
            self.pending_by_kind[kind] += change.any;
            self.pending_by_kind[kind] -= row.any;
            if change.any == 0 {
                self.asks.remove(&change.priority);
                continue;
            }
            row.any = change.any;
            for (host, by) in change.hosts {
                move_count(&mut row.hosts, host, by);
            }
            for (rack, by) in change.racks {
                move_count(&mut row.racks, rack, by);
            }
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

    /// Input of one of the job's reduces: its predicted map output spread over its reduces.
    pub fn predicted_reduce_input_bytes(&self, default_map_input_bytes: u64) -> f64 {
        let reduces = self
            .job
            .known_reduces(self.pending(TaskKind::Reduce))
            .max(1);
        self.job
            .predicted_map_output_bytes(self.pending(TaskKind::Map), default_map_input_bytes)
            / f64::from(reduces)
    }

    pub fn pending_tasks(&self) -> u32 {
        self.pending(TaskKind::Map) + self.pending(TaskKind::Reduce)
    }

    /// Where the job stands: starting, mapping, reducing, or idle.
    pub fn phase(&self) -> JobPhase {
        if self.awaits_application_master() {
            JobPhase::Starting
        } else if self.pending(TaskKind::Map) > 0 || self.job.running_maps > 0 {
            JobPhase::Map
        } else if self.pending(TaskKind::Reduce) > 0 || self.job.running_reduces > 0 {
            JobPhase::Reduce
        } else {
            JobPhase::Idle
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Container {
    pub app: AppId,
    pub node: NodeId,
    pub rack: RackName,
    pub kind: TaskKind,
    pub locality: Locality,
    pub start_ms: u64,
    pub resources: Resources,
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
    pub fn slot_of(&self, id: &AppId) -> Option<usize> {
        self.slots_by_id.get(id).copied()
    }

    /// A known app with its slot, from one search by id (policies want both on every event).
    pub fn with_slot(&self, id: &AppId) -> Option<(usize, &App)> {
        let slot = self.slot_of(id)?;
        Some((slot, self.in_slot(slot)?))
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

/// A figure measured by an operator's feed: a rack's link utilization (0..) or one of a
/// host's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredLoad {
    pub value: f64,
    pub time_ms: u64,
}

/// The latest of each figure the feed gave for one host (each with its own time, as an event
/// may carry only some of them).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostFigures {
    /// Cross-rack traffic, Mbit/s.
    pub cross_rack_mbps: Option<MeasuredLoad>,
    /// Disk utilization, 0..1.
    pub disk_utilization: Option<MeasuredLoad>,
    /// Network utilization, 0..1.
    pub network_utilization: Option<MeasuredLoad>,
    /// CPU speed relative to the cluster's reference machine.
    pub cpu_speed: Option<MeasuredLoad>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterState {
    /// Known nodes. Only `apply` adds, removes or re-racks them, which keeps `nodes_per_rack`
    /// true.
    pub nodes: BTreeMap<NodeId, Node>,
    /// How many nodes each rack has: the set of racks without a scan of every node per offer.
    nodes_per_rack: BTreeMap<RackName, u32>,
    /// How many nodes each host runs: whether a split's host is a live node (storage without
    /// locality names hosts such as `localhost` that are not) without a scan of every node.
    nodes_per_host: BTreeMap<String, u32>,
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
    /// The keys of `containers` by node with each one's app, kind and app slot, so an offer
    /// reads its node's containers and their apps without scanning every running container or
    /// searching the apps by id (NAS's MTS does on every offer). A container's app stays known,
    /// in its slot, while the container is here: containers of unknown apps are not kept, and
    /// removing an app removes its containers.
    containers_by_node: BTreeMap<NodeId, BTreeMap<ContainerId, (AppId, TaskKind, usize)>>,
    pub measured_rack_load: BTreeMap<RackName, MeasuredLoad>,
    /// The feed's figures per host name.
    pub host_figures: BTreeMap<String, HostFigures>,
    pub history: LearnedHistory,
}

impl ClusterState {
    pub fn with_history(history: LearnedHistory) -> ClusterState {
        ClusterState {
            history,
            ..ClusterState::default()
        }
    }

    /// Each queue with candidate apps, in queue name order, with their submit times, slots, ids
    /// and apps in (submit time, app id) order. An app's slot is stable while it is known and
    /// may be reused once it leaves: per-app memory may be indexed by it, checked by id.
    #[allow(clippy::type_complexity)]
    pub fn candidates_by_queue(
        &self,
    ) -> impl ExactSizeIterator<Item = (&Arc<str>, impl Iterator<Item = (u64, usize, &AppId, &App)>)>
    {
        self.candidates_by_queue.iter().map(|(queue, listed)| {
            let apps = listed.iter().filter_map(|((submit, id), &slot)| {
                Some((*submit, slot, id, self.apps.in_slot(slot)?))
            });
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

    /// How many nodes `rack` has (0 for a rack no node is on, such as `/default-rack` when
    /// splits name hosts outside the cluster).
    pub fn nodes_on_rack(&self, rack: &RackName) -> u32 {
        self.nodes_per_rack.get(rack).copied().unwrap_or(0)
    }

    /// Whether a known node runs on `host`.
    pub fn has_node_on_host(&self, host: &str) -> bool {
        self.nodes_per_host.contains_key(host)
    }

    /// Keeps `nodes_per_rack` and `nodes_per_host` in step with a node joining or leaving.
    fn count_node(&mut self, rack: &RackName, host: &str, joined: bool) {
        if joined {
            *self.nodes_per_rack.entry(rack.clone()).or_insert(0) += 1;
            *self.nodes_per_host.entry(host.to_string()).or_insert(0) += 1;
            return;
        }
        if let Some(count) = self.nodes_per_rack.get_mut(rack) {
            *count -= 1;
            if *count == 0 {
                self.nodes_per_rack.remove(rack);
            }
        }
        if let Some(count) = self.nodes_per_host.get_mut(host) {
            *count -= 1;
            if *count == 0 {
                self.nodes_per_host.remove(host);
            }
        }
    }

    /// Keeps the utilization an offer's NodeManager reported as its node's latest; ignored for
    /// an unknown node.
    pub fn record_utilization(&mut self, node: &NodeId, utilization: Utilization) {
        if let Some(known) = self.nodes.get_mut(node) {
            known.utilization = Some(utilization);
        }
    }

    /// Applies one event given by value. Ratios learned from a finished job are appended to
    /// `learned` for the shim to persist, and what policies are told to `observed`. An ask
    /// table is moved into the state, not cloned: it carries one entry per host holding a
    /// pending split, and is re-sent after every allocation.
    pub fn apply(
        &mut self,
        event: Event,
        now_ms: u64,
        settings: &Settings,
        learned: &mut Vec<LearnedRatio>,
        observed: &mut Vec<Observation>,
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
                    .get(&node)
                    .map(|n| (n.utilization, n.rack.clone(), n.host.clone()));
                let utilization = known.as_ref().and_then(|(utilization, ..)| *utilization);
                if let Some((_, old_rack, old_host)) = known {
                    self.count_node(&old_rack, &old_host, false);
                }
                self.count_node(&rack, &host, true);
                self.nodes.insert(
                    node.clone(),
                    Node {
                        host,
                        rack,
                        capacity,
                        utilization,
                    },
                );
                observed.push(Observation::NodeAdded { node });
            }
            Event::NodeRemoved { node } => {
                if let Some(removed) = self.nodes.remove(&node) {
                    self.count_node(&removed.rack, &removed.host, false);
                    observed.push(Observation::NodeRemoved { node });
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
                    &name,
                    &tags,
                    &self.history,
                    settings.max_hint_ratio,
                );
                let job = Job::new(estimate);
                // A re-added app starts without asks, so it is no candidate until they come.
                self.unlist_candidate(&app);
                self.apps.insert(
                    &app,
                    App {
                        name,
                        user,
                        queue,
                        is_mapreduce: app_type.eq_ignore_ascii_case("MAPREDUCE"),
                        tags,
                        submit_ms,
                        asks: BTreeMap::new(),
                        pending_by_kind: [0; TASK_KINDS],
                        job,
                        waiting_since_ms: None,
                    },
                );
                observed.push(Observation::AppAdded { app });
            }
            Event::AppRemoved { app } => {
                if self.remove_app(&app, learned) {
                    observed.push(Observation::AppRemoved { app });
                }
            }
            Event::AsksChanged { app, rows } => {
                if self.change_asks(&app, rows, Vec::new(), now_ms) {
                    observed.push(Observation::AsksChanged { app });
                }
            }
            Event::AsksMoved { app, rows, moves } => {
                if self.change_asks(&app, rows, moves, now_ms) {
                    observed.push(Observation::AsksChanged { app });
                }
            }
            Event::ContainerAllocated {
                app,
                container,
                node,
                priority,
                locality,
                resources,
                time_ms,
            } => {
                let Some(slot) = self.apps.slot_of(&app) else {
                    return;
                };
                let known = self.apps.slots[slot]
                    .as_mut()
                    .expect("a known app's slot holds it");
                let kind = TaskKind::of_mapreduce_priority(priority);
                let rack = self
                    .nodes
                    .get(&node)
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
                    known.waiting_since_ms = Some(time_ms);
                }
                if let Some(replaced) = self.containers.insert(
                    container.clone(),
                    Container {
                        app: app.clone(),
                        node: node.clone(),
                        rack: rack.clone(),
                        kind,
                        locality,
                        start_ms: time_ms,
                        resources,
                    },
                ) {
                    self.unindex(&container, &replaced);
                }
                self.index(&container, &app, slot, &node, kind);
                observed.push(Observation::TaskStarted {
                    app,
                    node,
                    rack,
                    kind,
                    priority,
                    locality,
                    time_ms,
                });
            }
            Event::ContainerFinished {
                container,
                time_ms,
                task_completed,
                ..
            } => {
                let Some(finished) = self.containers.remove(&container) else {
                    return;
                };
                self.unindex(&container, &finished);
                let Some(known) = self.apps.get_mut(&finished.app) else {
                    return;
                };
                let job = &mut known.job;
                match finished.kind {
                    TaskKind::Map => job.running_maps = job.running_maps.saturating_sub(1),
                    TaskKind::Reduce => job.running_reduces = job.running_reduces.saturating_sub(1),
                    TaskKind::ApplicationMaster | TaskKind::Other => {}
                }
                if !task_completed {
                    // Its task runs again elsewhere: only the slot is free. A reduce's rack
                    // count goes back too: left counted, it would use up that rack's quota
                    // (SARP, NAS's ReduceNum) and send the rerun elsewhere.
                    if finished.kind == TaskKind::Reduce {
                        if let Some(placed) = job.reduces_by_rack.get_mut(&finished.rack) {
                            *placed = placed.saturating_sub(1);
                        }
                    }
                    return;
                }
                let took_ms = time_ms.saturating_sub(finished.start_ms);
                match finished.kind {
                    TaskKind::Map => {
                        *job.finished_maps_by_rack
                            .entry(finished.rack.clone())
                            .or_insert(0) += 1;
                        job.finished_maps += 1;
                        job.map_times.add(took_ms);
                        if finished.locality == Locality::NodeLocal {
                            job.node_local_map_times.add(took_ms);
                        }
                    }
                    TaskKind::Reduce => {
                        job.finished_reduces += 1;
                        job.reduce_times.add(took_ms);
                    }
                    TaskKind::ApplicationMaster | TaskKind::Other => {}
                }
                observed.push(Observation::TaskFinished {
                    app: finished.app,
                    node: finished.node,
                    rack: finished.rack,
                    kind: finished.kind,
                    locality: finished.locality,
                    start_ms: finished.start_ms,
                    finish_ms: time_ms,
                });
            }
            Event::JobStats {
                app,
                maps_total,
                maps_completed,
                reduces_total,
                map_input_bytes,
                map_output_bytes,
            } => {
                let Some(known) = self.apps.get_mut(&app) else {
                    return;
                };
                let job = &mut known.job;
                job.maps_total = maps_total;
                job.maps_completed = maps_completed;
                job.reduces_total = reduces_total;
                job.map_input_bytes = map_input_bytes;
                job.map_output_bytes = map_output_bytes;
                if maps_completed > 0 {
                    job.estimate.observe(map_input_bytes, map_output_bytes);
                }
                // A report with maps but no reduces is a map-only job's; before its job is set up
                // an AM reports no maps either.
                if maps_total > 0 && reduces_total == 0 {
                    job.estimate.observe_no_reduces();
                }
                observed.push(Observation::JobStats { app });
            }
            Event::RackLoad {
                rack,
                utilization,
                time_ms,
            } => {
                if let Some(load) = measurement(&rack.0, "utilization", utilization, time_ms) {
                    self.measured_rack_load.insert(rack.clone(), load);
                    observed.push(Observation::RackLoad { rack });
                }
            }
            Event::HostFigures {
                host,
                time_ms,
                cross_rack_mbps,
                disk_utilization,
                network_utilization,
                cpu_speed,
            } => {
                let figures = self.host_figures.entry(host.clone()).or_default();
                let mut changed = false;
                for (name, value, into) in [
                    (
                        "cross_rack_mbps",
                        cross_rack_mbps,
                        &mut figures.cross_rack_mbps,
                    ),
                    (
                        "disk_utilization",
                        disk_utilization,
                        &mut figures.disk_utilization,
                    ),
                    (
                        "network_utilization",
                        network_utilization,
                        &mut figures.network_utilization,
                    ),
                    ("cpu_speed", cpu_speed, &mut figures.cpu_speed),
                ] {
                    if let Some(load) = value.and_then(|v| measurement(&host, name, v, time_ms)) {
                        *into = Some(load);
                        changed = true;
                    }
                }
                if *figures == HostFigures::default() {
                    self.host_figures.remove(&host);
                }
                if changed {
                    observed.push(Observation::HostFigures { host });
                }
            }
            Event::Account {
                queue,
                budget,
                spending,
            } => {
                let valid = |value: f64| value.is_finite() && value >= 0.0;
                if valid(budget) && valid(spending) {
                    observed.push(Observation::Account {
                        queue,
                        budget,
                        spending,
                    });
                } else {
                    log::warn!(
                        "account of queue {queue} ignored: budget {budget} and spending \
                         {spending} must both be finite and >= 0"
                    );
                }
            }
        }
    }

    /// Changed rows of an app's ask table, then moves of rows it holds; the app leaves the
    /// candidate index while they are applied and rejoins it if it still qualifies. `false` if
    /// the app is unknown.
    fn change_asks(
        &mut self,
        app: &AppId,
        rows: Vec<Ask>,
        moves: Vec<AskMove>,
        now_ms: u64,
    ) -> bool {
        self.unlist_candidate(app);
        let Some(known) = self.apps.get_mut(app) else {
            log::debug!("asks for unknown app {} ignored", app.0);
            return false;
        };
        known.change_asks(rows);
        known.move_asks(app, moves);
        if known.pending_tasks() == 0 {
            known.waiting_since_ms = None;
        } else if known.waiting_since_ms.is_none() {
            known.waiting_since_ms = Some(now_ms);
        }
        self.list_candidate(app);
        true
    }

    /// The app's running containers of `kind` on each rack (racks with none left out): what
    /// the core holds of a job's running tasks by rack, e.g. rebuilt from the containers a
    /// restarted ResourceManager recovered.
    pub fn running_by_rack(&self, app: &AppId, kind: TaskKind) -> BTreeMap<RackName, u32> {
        let mut counts = BTreeMap::new();
        for container in self.containers_by_app.get(app).into_iter().flatten() {
            if let Some(running) = self.containers.get(container) {
                if running.kind == kind {
                    *counts.entry(running.rack.clone()).or_insert(0) += 1;
                }
            }
        }
        counts
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
            .map(|(id, (app, kind, _))| (id, app, *kind))
    }

    /// The app and kind of each running container on `node`, in container id order (as
    /// [`ClusterState::containers_on`], without a search of the apps by id).
    pub fn tasks_on<'a>(&'a self, node: &NodeId) -> impl Iterator<Item = (&'a App, TaskKind)> {
        self.containers_by_node
            .get(node)
            .into_iter()
            .flatten()
            .filter_map(|(_, (_, kind, slot))| Some((self.apps.in_slot(*slot)?, *kind)))
    }

    fn index(
        &mut self,
        container: &ContainerId,
        app: &AppId,
        slot: usize,
        node: &NodeId,
        kind: TaskKind,
    ) {
        self.containers_by_app
            .entry(app.clone())
            .or_default()
            .insert(container.clone());
        self.containers_by_node
            .entry(node.clone())
            .or_default()
            .insert(container.clone(), (app.clone(), kind, slot));
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

    /// `false` if the app was unknown.
    fn remove_app(&mut self, app: &AppId, learned: &mut Vec<LearnedRatio>) -> bool {
        self.unlist_candidate(app);
        let Some(removed) = self.apps.remove(app) else {
            return false;
        };
        // The app's own index entry goes first, so `unindex` only has the node's left to do.
        for container in self.containers_by_app.remove(app).unwrap_or_default() {
            if let Some(removed) = self.containers.remove(&container) {
                self.unindex(&container, &removed);
            }
        }
        if !removed.is_mapreduce {
            return true;
        }
        // One entry per name goes to the shim, with everything learned from this run.
        let mut entry = None;
        let estimate = removed.job.estimate;
        if estimate.source == crate::predictor::RatioSource::Counters {
            entry = Some(self.history.learn(&removed.name, estimate.ratio));
        }
        let (map_ms, reduce_ms) = (
            removed.job.map_times.mean_ms(),
            removed.job.reduce_times.mean_ms(),
        );
        if map_ms.is_some() || reduce_ms.is_some() {
            entry = Some(
                self.history
                    .learn_task_times(&removed.name, map_ms, reduce_ms),
            );
        }
        learned.extend(entry);
        true
    }
}

/// Changes `key`'s count in an ask row's location table by `by`; a count that reaches zero
/// leaves the table, as a whole row leaves out locations with no split. A change below zero
/// means the caller's table is out of step with the core's: logged, and the entry dropped.
fn move_count<K: Ord + std::fmt::Debug>(counts: &mut BTreeMap<K, u32>, key: K, by: i32) {
    // One search of the table per move (a map row's hosts and racks move with every
    // allocation), not a look-up and then an insert or removal.
    let entry = counts.entry(key);
    let had = match &entry {
        Entry::Occupied(present) => i64::from(*present.get()),
        Entry::Vacant(_) => 0,
    };
    let moved = had + i64::from(by);
    if moved < 0 {
        log::warn!(
            "ask move takes {} from {:?}, which has {had}: counts cannot go below 0 (the \
             caller's table is out of step with the core's); the entry is dropped",
            -by,
            entry.key(),
        );
    }
    let count = u32::try_from(moved).unwrap_or(u32::MAX);
    match entry {
        Entry::Occupied(mut present) if moved > 0 => *present.get_mut() = count,
        Entry::Occupied(present) => {
            present.remove();
        }
        Entry::Vacant(absent) if moved > 0 => {
            absent.insert(count);
        }
        Entry::Vacant(_) => {}
    }
}

/// Takes a container out of `key`'s entry of a per-key index (`remove` says whether the entry
/// is empty then), dropping the entry once empty.
fn unindex_in<K: Ord, V>(index: &mut BTreeMap<K, V>, key: &K, remove: impl FnOnce(&mut V) -> bool) {
    if index.get_mut(key).is_some_and(remove) {
        index.remove(key);
    }
}

/// A feed figure as kept; a negative or non-finite one is dropped with a warning.
fn measurement(of: &str, figure: &str, value: f64, time_ms: u64) -> Option<MeasuredLoad> {
    if value.is_finite() && value >= 0.0 {
        Some(MeasuredLoad { value, time_ms })
    } else {
        log::warn!("feed figure {figure}={value} for {of} ignored: must be a finite number >= 0");
        None
    }
}
