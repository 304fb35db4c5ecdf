//! What the core knows about the cluster, built only from the shim's events.
//!
//! Ordered maps everywhere: iteration order feeds decisions, and it must not depend on hash
//! seeds if the same events are to give the same plan in the RM and in the simulator.

use crate::predictor::{LearnedHistory, ShuffleEstimate};
use crate::protocol::{
    AppId, Ask, ContainerId, Event, LearnedRatio, Locality, NodeId, Priority, RackName, Resources,
    TaskKind, Utilization,
};
use crate::settings::Settings;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub host: String,
    pub rack: RackName,
    pub capacity: Resources,
    pub unallocated: Resources,
    pub utilization: Option<Utilization>,
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
    /// Finished map containers per rack: where the job's map output sits.
    pub finished_maps_by_rack: BTreeMap<RackName, u32>,
}

impl Job {
    pub fn finished_maps(&self) -> u32 {
        self.finished_maps_by_rack.values().sum()
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
    /// Outstanding asks by priority, as last reported.
    pub asks: BTreeMap<Priority, Ask>,
    pub job: Job,
    /// Since when the app has had tasks pending without getting a container; drives the
    /// starvation guard.
    pub waiting_since_ms: Option<u64>,
}

impl App {
    /// Outstanding containers of the given kind (MapReduce priorities).
    pub fn pending(&self, kind: TaskKind) -> u32 {
        self.asks
            .values()
            .filter(|ask| TaskKind::of_mapreduce_priority(ask.priority) == kind)
            .map(|ask| ask.any)
            .sum()
    }

    /// An app still waiting for its ApplicationMaster container is left to FairScheduler: the
    /// AM ask (priority 0) is never touched.
    pub fn awaits_application_master(&self) -> bool {
        self.pending(TaskKind::ApplicationMaster) > 0
    }

    fn pending_tasks(&self) -> u32 {
        self.pending(TaskKind::Map) + self.pending(TaskKind::Reduce)
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
    pub nodes: BTreeMap<NodeId, Node>,
    pub apps: BTreeMap<AppId, App>,
    /// Running containers of the apps we know.
    pub containers: BTreeMap<ContainerId, Container>,
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

    /// Distinct racks that have at least one node.
    pub fn rack_count(&self) -> usize {
        let mut racks: Vec<&RackName> = self.nodes.values().map(|n| &n.rack).collect();
        racks.sort();
        racks.dedup();
        racks.len()
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
                let unallocated = self
                    .nodes
                    .get(node)
                    .map_or(*capacity, |known| known.unallocated);
                self.nodes.insert(
                    node.clone(),
                    Node {
                        host: host.clone(),
                        rack: rack.clone(),
                        capacity: *capacity,
                        unallocated,
                        utilization: None,
                    },
                );
            }
            Event::NodeRemoved { node } => {
                self.nodes.remove(node);
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
                let job = Job {
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
                };
                self.apps.insert(
                    app.clone(),
                    App {
                        name: name.clone(),
                        user: user.clone(),
                        queue: queue.clone(),
                        is_mapreduce: app_type.eq_ignore_ascii_case("MAPREDUCE"),
                        tags: tags.clone(),
                        submit_ms: *submit_ms,
                        asks: BTreeMap::new(),
                        job,
                        waiting_since_ms: None,
                    },
                );
            }
            Event::AppRemoved { app } => self.remove_app(app, learned),
            Event::Asks { app, asks } => {
                let Some(known) = self.apps.get_mut(app) else {
                    log::debug!("asks for unknown app {} ignored", app.0);
                    return;
                };
                known.asks = asks
                    .iter()
                    .filter(|ask| ask.any > 0)
                    .map(|ask| (ask.priority, ask.clone()))
                    .collect();
                if known.pending_tasks() == 0 {
                    known.waiting_since_ms = None;
                } else if known.waiting_since_ms.is_none() {
                    known.waiting_since_ms = Some(now_ms);
                }
            }
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
                match kind {
                    TaskKind::Map => known.job.running_maps += 1,
                    TaskKind::Reduce => known.job.running_reduces += 1,
                    TaskKind::ApplicationMaster | TaskKind::Other => {}
                }
                if matches!(kind, TaskKind::Map | TaskKind::Reduce) {
                    // The app got a task: its wait (and so its starvation clock) restarts.
                    known.waiting_since_ms = Some(*time_ms);
                }
                let rack = self
                    .nodes
                    .get(node)
                    .map_or_else(|| RackName(String::new()), |n| n.rack.clone());
                self.containers.insert(
                    container.clone(),
                    Container {
                        app: app.clone(),
                        node: node.clone(),
                        rack,
                        kind,
                        locality: *locality,
                        start_ms: *time_ms,
                    },
                );
            }
            Event::ContainerFinished { container, .. } => {
                let Some(finished) = self.containers.remove(container) else {
                    return;
                };
                let Some(known) = self.apps.get_mut(&finished.app) else {
                    return;
                };
                let job = &mut known.job;
                match finished.kind {
                    TaskKind::Map => {
                        job.running_maps = job.running_maps.saturating_sub(1);
                        *job.finished_maps_by_rack.entry(finished.rack).or_insert(0) += 1;
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

    fn remove_app(&mut self, app: &AppId, learned: &mut Vec<LearnedRatio>) {
        let Some(removed) = self.apps.remove(app) else {
            return;
        };
        self.containers.retain(|_, c| &c.app != app);
        let estimate = removed.job.estimate;
        if removed.is_mapreduce && estimate.source == crate::predictor::RatioSource::Counters {
            learned.push(self.history.learn(&removed.name, estimate.ratio));
        }
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
