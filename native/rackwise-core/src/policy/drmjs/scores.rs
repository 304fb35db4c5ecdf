//! DRMJS's per-node performance scores: the resource terms, the influence terms from recent
//! task latencies, the map and reduce scores (MPS/RPS), their rank positions and classes.
//!
//! Everything here is pure computation over what the state and the policy's own latency memory
//! hold; `super` decides when to refresh and what an offer gets.

use super::Params;
use crate::mapreduce::TaskKind;
use crate::protocol::{AppId, NodeId};
use crate::state::ClusterState;
use fixedbitset::FixedBitSet;
use std::collections::{BTreeMap, VecDeque};

/// The most task latencies kept per node and kind: the largest `influenceTasks` allowed.
pub const MAX_INFLUENCE_TASKS: usize = 100;

/// A node's performance class for one task kind, on its score relative to the best node's.
pub use crate::protocol::PerformanceClass as Class;

/// Where the disk (network) term of a node came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermSource {
    /// The operator feed's per-host utilization: the term is `1 - utilization`.
    Feed,
    /// No feed figure: the term is the node's influence term for the kind (its observed task
    /// slowdown), the only sign of contention the core sees without a host agent.
    Observed,
}

/// One node's score for one task kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// MPS or RPS: `w1·CPU + w2·resource + w3·influence`.
    pub score: f64,
    /// The score over the best node's score (1 for the best; 0 when every score is 0).
    pub relative: f64,
    /// The share of nodes with a strictly higher score: 0 for the best, towards 1 for the worst.
    pub position: f64,
    pub class: Class,
}

/// Every term and score of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeScore {
    pub node: NodeId,
    /// Eq 3.1: relative CPU speed (fastest node 1) times the free share of the NodeManager's
    /// reported CPU (1 when it reports none).
    pub cpu: f64,
    /// The two factors of `cpu`: relative speed and free share.
    pub cpu_speed: f64,
    pub cpu_free: f64,
    /// Eq 3.2, as availability (`1 - utilization`), or the observed map slowdown.
    pub disk: f64,
    pub disk_source: TermSource,
    /// Eq 3.3, as availability, or the observed reduce slowdown.
    pub net: f64,
    pub net_source: TermSource,
    pub map_influence: f64,
    pub reduce_influence: f64,
    pub map: Standing,
    pub reduce: Standing,
}

impl NodeScore {
    pub fn standing(&self, kind: TaskKind) -> &Standing {
        if kind == TaskKind::Reduce {
            &self.reduce
        } else {
            &self.map
        }
    }
}

/// A task latency as kept: the slot of the job it belongs to in [`Latencies::jobs`] (to
/// normalise by that job's mean; a slot is not reused while a sample refers to it) and how long
/// it ran.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    job: usize,
    latency_ms: f64,
}

/// Sum and count of a job's task latencies of one kind, for its mean.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Totals {
    sum_ms: f64,
    count: u32,
}

/// A job's latency totals per kind, kept while the job runs or a kept sample refers to it.
#[derive(Debug, Clone, PartialEq)]
struct JobLatencies {
    app: AppId,
    totals: [Totals; 2],
    /// Kept samples (any node, any kind) of this job.
    samples: usize,
    /// The job has left the cluster: its totals go with its last sample.
    gone: bool,
    /// Per kind, the node slots whose window mean was computed with this job's mean of that
    /// kind since it last changed: the windows to recompute when it changes. A set of slots:
    /// a large job's tasks sit in the windows of hundreds of nodes, and each recomputed window
    /// adds its slot once per sample, which a sorted list paid for with a search and a shift.
    /// Cleared, not freed, so a running job's set is not allocated anew on every completion.
    watchers: [FixedBitSet; 2],
}

/// One node's recent latencies of one kind and, while it holds, their mean normalised latency.
#[derive(Debug, Clone, Default, PartialEq)]
struct Window {
    /// The last `MAX_INFLUENCE_TASKS` tasks, oldest first.
    samples: VecDeque<Sample>,
    /// The mean normalised latency of the last `z` samples, with that `z`. It is dropped when a
    /// sample arrives here or the mean of a job among those `z` changes; until then a refresh
    /// reads it instead of the samples, and gets the same bits.
    mean: Option<(usize, Option<f64>)>,
}

impl Totals {
    fn mean(&self) -> Option<f64> {
        (self.count > 0 && self.sum_ms > 0.0).then(|| self.sum_ms / f64::from(self.count))
    }
}

/// Recent map and reduce latencies per node, and every job's mean latency per kind.
///
/// A board needs every node's mean normalised latency of its last `z` tasks of each kind on
/// every refresh (after any task completion, so on many offers of a busy cluster). Between two
/// refreshes only a few completions happen, and each moves only the windows of its node and
/// those that hold a task of its job; every other window keeps its mean, so a refresh reads
/// it and recomputes only the moved ones. Samples name their job by slot, and windows are
/// kept by node slot, so either read is an index, not a search by id.
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    /// Each known node's slot in `windows`, in id order.
    nodes: BTreeMap<NodeId, usize>,
    /// The maps' (index 0) and reduces' (index 1) windows of each node slot.
    windows: Vec<[Window; 2]>,
    /// Slots of `windows` left by forgotten nodes, reused before it grows.
    free_windows: Vec<usize>,
    /// Per job, its maps' and reduces' latency totals (every finished task, on any node), at
    /// the slot `slots` gives it; `None` for a free slot.
    jobs: Vec<Option<JobLatencies>>,
    slots: BTreeMap<AppId, usize>,
    /// Free slots of `jobs`, reused before it grows.
    free: Vec<usize>,
}

/// Index of a kind in the per-kind arrays (reruns of maps count as maps).
fn slot(kind: TaskKind) -> Option<usize> {
    match kind {
        TaskKind::Map => Some(0),
        TaskKind::Reduce => Some(1),
        TaskKind::ApplicationMaster | TaskKind::Other => None,
    }
}

impl Latencies {
    /// Records a finished map or reduce; other kinds are ignored.
    pub fn record(&mut self, app: &AppId, node: &NodeId, kind: TaskKind, latency_ms: u64) {
        let Some(slot) = slot(kind) else {
            return;
        };
        let latency_ms = latency_ms as f64;
        let job_slot = self.job_slot(app);
        let node_slot = self.node_slot(node);
        if let Some(job) = self.jobs[job_slot].as_mut() {
            job.totals[slot].sum_ms += latency_ms;
            job.totals[slot].count += 1;
            job.samples += 1;
            // The job's mean moved: so did every window mean computed with it.
            for watcher in job.watchers[slot].ones() {
                if let Some(windows) = self.windows.get_mut(watcher) {
                    windows[slot].mean = None;
                }
            }
            job.watchers[slot].clear();
        }
        let window = &mut self.windows[node_slot][slot];
        window.mean = None;
        let recent = &mut window.samples;
        let evicted = (recent.len() == MAX_INFLUENCE_TASKS)
            .then(|| recent.pop_front())
            .flatten();
        recent.push_back(Sample {
            job: job_slot,
            latency_ms,
        });
        if let Some(evicted) = evicted {
            self.release(evicted.job);
        }
    }

    /// The slot of `app`'s totals, given one if it has none.
    fn job_slot(&mut self, app: &AppId) -> usize {
        if let Some(&job_slot) = self.slots.get(app) {
            return job_slot;
        }
        let job = Some(JobLatencies {
            app: app.clone(),
            totals: [Totals::default(); 2],
            samples: 0,
            gone: false,
            watchers: Default::default(),
        });
        let job_slot = match self.free.pop() {
            Some(free) => {
                self.jobs[free] = job;
                free
            }
            None => {
                self.jobs.push(job);
                self.jobs.len() - 1
            }
        };
        self.slots.insert(app.clone(), job_slot);
        job_slot
    }

    /// The slot of `node`'s windows, given one if it has none.
    fn node_slot(&mut self, node: &NodeId) -> usize {
        if let Some(&node_slot) = self.nodes.get(node) {
            return node_slot;
        }
        let node_slot = match self.free_windows.pop() {
            Some(free) => free,
            None => {
                self.windows.push(Default::default());
                self.windows.len() - 1
            }
        };
        self.nodes.insert(node.clone(), node_slot);
        node_slot
    }

    /// Forgets a node that left the cluster. Jobs may still name its slot as a watcher: a
    /// node that takes the slot has its means recomputed once more, never one kept wrongly.
    pub fn forget_node(&mut self, node: &NodeId) {
        let Some(node_slot) = self.nodes.remove(node) else {
            return;
        };
        let windows = std::mem::take(&mut self.windows[node_slot]);
        self.free_windows.push(node_slot);
        for window in windows {
            for sample in window.samples {
                self.release(sample.job);
            }
        }
    }

    /// A job left the cluster: its totals stay while its samples do.
    pub fn forget_job(&mut self, app: &AppId) {
        if let Some(&job_slot) = self.slots.get(app) {
            if let Some(job) = self.jobs[job_slot].as_mut() {
                job.gone = true;
            }
            self.drop_if_done(job_slot);
        }
    }

    /// One kept sample of the job at `job_slot` is dropped.
    fn release(&mut self, job_slot: usize) {
        if let Some(job) = self.jobs[job_slot].as_mut() {
            job.samples -= 1;
        }
        self.drop_if_done(job_slot);
    }

    /// A gone job's totals go with its last kept sample, and its slot is free again.
    fn drop_if_done(&mut self, job_slot: usize) {
        if let Some(job) = self.jobs[job_slot].take_if(|job| job.gone && job.samples == 0) {
            self.slots.remove(&job.app);
            self.free.push(job_slot);
        }
    }

    /// How many jobs' totals are kept (running jobs, and gone ones with kept samples).
    pub fn jobs_kept(&self) -> usize {
        self.slots.len()
    }

    /// The mean normalised latency (`latency / job mean`) of the last `z` tasks of one kind
    /// (`slot`) of the node at `node_slot`; `None` without any. Computed from the samples only
    /// when the kept mean moved (see [`Window::mean`]).
    fn window_mean(&mut self, node_slot: usize, slot: usize, z: usize) -> Option<f64> {
        let window = &mut self.windows[node_slot][slot];
        if let Some((kept_z, mean)) = window.mean {
            if kept_z == z {
                return mean;
            }
        }
        let jobs = &mut self.jobs;
        let (sum, count) = window
            .samples
            .iter()
            .rev()
            .take(z)
            .filter_map(|sample| {
                let job = jobs[sample.job].as_mut()?;
                job.watchers[slot].grow_and_insert(node_slot);
                Some(sample.latency_ms / job.totals[slot].mean()?)
            })
            .fold((0.0, 0usize), |(sum, count), normalised| {
                (sum + normalised, count + 1)
            });
        let mean = (count > 0).then(|| sum / count as f64);
        window.mean = Some((z, mean));
        mean
    }

    /// `map_inf` (index 0) and `reduce_inf` (index 1) of every node in `nodes` (in id order):
    /// the lowest mean normalised latency among nodes with samples over the node's own (the
    /// fastest node 1); a node without samples counts as 1 so that new nodes get tried.
    fn influence(&mut self, nodes: &[&NodeId], z: usize) -> [Vec<f64>; 2] {
        // Both lists are in id order: one pass over each, not a search per node.
        let node_slots: Vec<Option<usize>> = {
            let mut kept = self.nodes.iter().peekable();
            nodes
                .iter()
                .map(|&node| {
                    while kept.next_if(|(id, _)| *id < node).is_some() {}
                    kept.next_if(|(id, _)| *id == node)
                        .map(|(_, &node_slot)| node_slot)
                })
                .collect()
        };
        [0, 1].map(|slot| self.influence_of_kind(&node_slots, slot, z))
    }

    /// One kind's influence terms (see [`Latencies::influence`]) of the nodes with these
    /// window slots (`None`: no samples).
    fn influence_of_kind(
        &mut self,
        node_slots: &[Option<usize>],
        slot: usize,
        z: usize,
    ) -> Vec<f64> {
        let means: Vec<Option<f64>> = node_slots
            .iter()
            .map(|&node_slot| self.window_mean(node_slot?, slot, z))
            .collect();
        let fastest = means
            .iter()
            .flatten()
            .copied()
            .fold(f64::INFINITY, f64::min);
        means
            .iter()
            .map(|mean| match mean {
                Some(mean) if *mean > 0.0 => (fastest / mean).min(1.0),
                _ => 1.0,
            })
            .collect()
    }
}

/// The scores of every known node, computed at `computed_ms`, in node id order.
#[derive(Debug, Clone, PartialEq)]
pub struct Board {
    pub computed_ms: u64,
    /// How many task completions the policy had seen when this board was computed.
    pub completions: u64,
    pub nodes: Vec<NodeScore>,
    /// Nodes in map (reduce) rank order, best first, as indexes into `nodes`.
    pub map_rank: Vec<usize>,
    pub reduce_rank: Vec<usize>,
}

impl Board {
    /// Computes every node's terms and scores from the state, the latencies and `params`.
    pub fn compute(
        state: &ClusterState,
        latencies: &mut Latencies,
        params: &Params,
        now_ms: u64,
        completions: u64,
    ) -> Board {
        let ids: Vec<&NodeId> = state.nodes.keys().collect();
        let z = params.influence_tasks;
        let [map_influence, reduce_influence] = latencies.influence(&ids, z);
        let speeds: Vec<f64> = state
            .nodes
            .values()
            .map(|node| {
                state
                    .host_figures
                    .get(&node.host)
                    .and_then(|figures| figures.cpu_speed)
                    .map_or(1.0, |speed| speed.value)
            })
            .collect();
        let fastest = speeds.iter().copied().fold(0.0, f64::max);
        let mut nodes: Vec<NodeScore> = Vec::with_capacity(ids.len());
        for (index, (id, node)) in state.nodes.iter().enumerate() {
            let relative_speed = if fastest > 0.0 {
                speeds[index] / fastest
            } else {
                1.0
            };
            let cpu_free = node.utilization.map_or(1.0, |used| {
                let vcores = f64::from(node.capacity.vcores);
                if vcores > 0.0 {
                    (1.0 - used.cpu / vcores).clamp(0.0, 1.0)
                } else {
                    1.0
                }
            });
            let figures = state.host_figures.get(&node.host);
            let available = |figure: Option<f64>, observed: f64| match figure {
                Some(utilization) => ((1.0 - utilization).clamp(0.0, 1.0), TermSource::Feed),
                None => (observed, TermSource::Observed),
            };
            let (disk, disk_source) = available(
                figures.and_then(|f| f.disk_utilization).map(|m| m.value),
                map_influence[index],
            );
            let (net, net_source) = available(
                figures.and_then(|f| f.network_utilization).map(|m| m.value),
                reduce_influence[index],
            );
            let cpu = relative_speed * cpu_free;
            let weights = &params.weights;
            let unranked = |score| Standing {
                score,
                relative: 0.0,
                position: 0.0,
                class: Class::Low,
            };
            nodes.push(NodeScore {
                node: id.clone(),
                cpu,
                cpu_speed: relative_speed,
                cpu_free,
                disk,
                disk_source,
                net,
                net_source,
                map_influence: map_influence[index],
                reduce_influence: reduce_influence[index],
                map: unranked(weights.score(cpu, disk, map_influence[index])),
                reduce: unranked(weights.score(cpu, net, reduce_influence[index])),
            });
        }
        let map_rank = rank(&mut nodes, params, |n| &mut n.map);
        let reduce_rank = rank(&mut nodes, params, |n| &mut n.reduce);
        Board {
            computed_ms: now_ms,
            completions,
            nodes,
            map_rank,
            reduce_rank,
        }
    }

    /// The scores of `node`, if it was known at the refresh.
    pub fn node(&self, node: &NodeId) -> Option<&NodeScore> {
        self.nodes
            .binary_search_by(|score| score.node.cmp(node))
            .ok()
            .map(|index| &self.nodes[index])
    }

    /// The nodes in rank order for `kind`, best first.
    pub fn ranked(&self, kind: TaskKind) -> impl Iterator<Item = &NodeScore> {
        let order = if kind == TaskKind::Reduce {
            &self.reduce_rank
        } else {
            &self.map_rank
        };
        order.iter().map(|&index| &self.nodes[index])
    }
}

/// Fills in each node's relative score, rank position and class for one kind, and returns the
/// rank list (best first; ties by node id).
fn rank(
    nodes: &mut [NodeScore],
    params: &Params,
    standing: impl Fn(&mut NodeScore) -> &mut Standing,
) -> Vec<usize> {
    // Score and index side by side: the sort compares neighbours in memory, not through an
    // index. The index breaks ties, so no two keys are equal and an unstable sort gives the
    // one order a stable sort would.
    let mut order: Vec<(f64, usize)> = nodes
        .iter_mut()
        .enumerate()
        .map(|(index, n)| (standing(n).score, index))
        .collect();
    order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let best = order.first().map_or(0.0, |&(score, _)| score);
    let count = nodes.len() as f64;
    let mut better = 0;
    for (place, &(score, index)) in order.iter().enumerate() {
        if place > 0 && order[place - 1].0 > score {
            better = place;
        }
        let relative = if best > 0.0 { score / best } else { 0.0 };
        let entry = standing(&mut nodes[index]);
        entry.relative = relative;
        entry.position = better as f64 / count;
        entry.class = params.classes.of(relative);
    }
    order.into_iter().map(|(_, index)| index).collect()
}

#[cfg(test)]
mod tests {
    //! The kept window means against means computed from the samples alone, over random
    //! histories of completions, departures and refreshes with varying `z`.

    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Step {
        Finished {
            app: u8,
            node: u8,
            reduce: bool,
            latency_ms: u64,
        },
        AppRemoved(u8),
        NodeRemoved(u8),
        Refresh(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => (0..5u8, 0..4u8, any::<bool>(), 0..3_000u64).prop_map(
                |(app, node, reduce, latency_ms)| Step::Finished { app, node, reduce, latency_ms }
            ),
            1 => (0..5u8).prop_map(Step::AppRemoved),
            1 => (0..4u8).prop_map(Step::NodeRemoved),
            3 => (1..8usize).prop_map(Step::Refresh),
        ]
    }

    proptest! {
        #[test]
        fn kept_means_equal_means_from_the_samples(steps in prop::collection::vec(step(), 1..120)) {
            let nodes: Vec<NodeId> = (0..4).map(|n| NodeId(format!("n{n}").into())).collect();
            let node_refs: Vec<&NodeId> = nodes.iter().collect();
            let app = |a: u8| AppId(format!("application_1_{a}").into());
            let mut latencies = Latencies::default();
            for step in steps {
                match step {
                    Step::Finished { app: a, node, reduce, latency_ms } => {
                        let kind = if reduce { TaskKind::Reduce } else { TaskKind::Map };
                        latencies.record(&app(a), &nodes[usize::from(node)], kind, latency_ms);
                    }
                    Step::AppRemoved(a) => latencies.forget_job(&app(a)),
                    Step::NodeRemoved(node) => latencies.forget_node(&nodes[usize::from(node)]),
                    Step::Refresh(z) => {
                        let mut from_samples = latencies.clone();
                        for windows in &mut from_samples.windows {
                            for window in windows {
                                window.mean = None;
                            }
                        }
                        let bits = |terms: [Vec<f64>; 2]| -> Vec<u64> {
                            terms.iter().flatten().map(|t| t.to_bits()).collect()
                        };
                        let kept = bits(latencies.influence(&node_refs, z));
                        let fresh = bits(from_samples.influence(&node_refs, z));
                        prop_assert_eq!(kept, fresh, "z {}", z);
                    }
                }
            }
        }
    }
}
