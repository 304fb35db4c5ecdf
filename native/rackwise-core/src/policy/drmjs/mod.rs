//! DRMJS, the dynamic ranking-based MapReduce job scheduler (Jeyaraj's thesis, chapter 3).
//!
//! Every node gets a map performance score and a reduce performance score from its CPU, its
//! disk (maps) or network (reduces) and how fast its recent tasks of that kind ran; nodes are
//! ranked by each and put in High/Medium/Low classes. On an offer the node takes the kind it
//! ranks better at, maps local first, and a node in the Low class for a kind gets none of it
//! while a better node has room. The formulas, what the thesis text lost and what we chose are
//! in docs/drmjs.md; the scores themselves are in [`scores`].
//!
//! Scores depend on a queue's parameters (weights, `z`, class boundaries), so each steered
//! queue keeps its own board, refreshed on the first offer after `refreshMs` has passed or a
//! task has finished anywhere. Queues with equal parameters that refresh in the same offer get
//! one board: within an offer nothing a board reads changes.

pub mod scores;

use crate::mapreduce::TaskKind;
use crate::policy::{containers_fitting, Context, Policy, Turn};
use crate::protocol::{Locality, NodeScoreReport, PlanEntry, Resources};
use crate::settings::{Declaration, Param, ParamProblem, ParamValues};
use crate::state::Observation;
use scores::{Board, Class, Latencies, NodeScore, TermSource, MAX_INFLUENCE_TASKS};
use std::collections::BTreeMap;
use std::sync::Arc;

const CPU_WEIGHT: &str = "cpuWeight";
const RESOURCE_WEIGHT: &str = "resourceWeight";
const INFLUENCE_WEIGHT: &str = "influenceWeight";
const INFLUENCE_TASKS: &str = "influenceTasks";
const REFRESH_MS: &str = "refreshMs";
const HIGH_CLASS_FROM: &str = "highClassFrom";
const LOW_CLASS_BELOW: &str = "lowClassBelow";
const PLACEMENT: &str = "placement";

/// `placement`: hold Low-class nodes while a better one has room (the default).
const STRICT_RANK: &str = "strict-rank";
/// `placement`: cap each node's running tasks of a kind at its share of the best score.
const SCORE_CAP: &str = "score-cap";

/// The `<rackwise>` elements of a `drmjs` queue, at the reconstruction's defaults.
const QUEUE_PARAMS: &[Param] = &[
    Param::number(
        CPU_WEIGHT,
        1.0 / 3.0,
        (0.0, false),
        1.0,
        "w1, weight of the CPU term in both scores",
    ),
    Param::number(
        RESOURCE_WEIGHT,
        1.0 / 3.0,
        (0.0, false),
        1.0,
        "w2, weight of the disk term (map score) and the network term (reduce score)",
    ),
    Param::number(
        INFLUENCE_WEIGHT,
        1.0 / 3.0,
        (0.0, false),
        1.0,
        "w3, weight of the influence term (recent task latencies on the node)",
    ),
    Param::whole(
        INFLUENCE_TASKS,
        5.0,
        1.0,
        MAX_INFLUENCE_TASKS as f64,
        "z, how many of a node's last maps (reduces) make its map (reduce) influence term",
    ),
    Param::number(
        REFRESH_MS,
        10_000.0,
        (0.0, false),
        3_600_000.0,
        "Δ, how often the scores are recomputed (also after every task completion); 0 = every offer",
    ),
    Param::number(
        HIGH_CLASS_FROM,
        2.0 / 3.0,
        (0.0, true),
        1.0,
        "score relative to the best node from which a node is in the High class",
    ),
    Param::number(
        LOW_CLASS_BELOW,
        1.0 / 3.0,
        (0.0, false),
        1.0,
        "score relative to the best node below which a node is in the Low class (at most highClassFrom)",
    ),
    Param::word(
        PLACEMENT,
        STRICT_RANK,
        &[STRICT_RANK, SCORE_CAP],
        "strict-rank: a Low-class node gets no task of that kind while a better node has room; \
         score-cap: a node runs at most ceil(containers x relative score) tasks of each kind",
    ),
];

/// The score weights w1, w2, w3.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub cpu: f64,
    pub resource: f64,
    pub influence: f64,
}

impl Weights {
    /// `w1·cpu + w2·resource + w3·influence`: MPS with the disk term, RPS with the network term.
    pub fn score(&self, cpu: f64, resource: f64, influence: f64) -> f64 {
        self.cpu * cpu + self.resource * resource + self.influence * influence
    }
}

/// The class boundaries on a score relative to the best node's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Classes {
    pub high_from: f64,
    pub low_below: f64,
}

impl Classes {
    pub fn of(&self, relative: f64) -> Class {
        if relative >= self.high_from {
            Class::High
        } else if relative >= self.low_below {
            Class::Medium
        } else {
            Class::Low
        }
    }
}

/// How a queue keeps tasks off poorly scored nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    StrictRank,
    ScoreCap,
}

/// A DRMJS queue's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub weights: Weights,
    /// z: the last tasks of a kind on a node that make its influence term.
    pub influence_tasks: usize,
    /// Δ.
    pub refresh_ms: u64,
    pub classes: Classes,
    pub placement: Placement,
}

impl Params {
    pub fn of(values: &ParamValues) -> Params {
        Params {
            weights: Weights {
                cpu: values.number(CPU_WEIGHT),
                resource: values.number(RESOURCE_WEIGHT),
                influence: values.number(INFLUENCE_WEIGHT),
            },
            influence_tasks: values.number(INFLUENCE_TASKS) as usize,
            refresh_ms: values.number(REFRESH_MS) as u64,
            classes: Classes {
                high_from: values.number(HIGH_CLASS_FROM),
                low_below: values.number(LOW_CLASS_BELOW),
            },
            placement: match values.word(PLACEMENT) {
                SCORE_CAP => Placement::ScoreCap,
                _ => Placement::StrictRank,
            },
        }
    }
}

/// Checks between a queue's parameters: some weight must count, and Medium must not be
/// inverted.
fn check(values: &ParamValues) -> Vec<ParamProblem> {
    let params = Params::of(values);
    let mut problems = Vec::new();
    let weights = params.weights;
    if weights.cpu + weights.resource + weights.influence <= 0.0 {
        problems.push(ParamProblem {
            element: CPU_WEIGHT,
            reason: format!(
                "with <{RESOURCE_WEIGHT}> and <{INFLUENCE_WEIGHT}> also 0, every node would \
                 score 0: at least one weight must be above 0"
            ),
        });
    }
    if params.classes.low_below > params.classes.high_from {
        problems.push(ParamProblem {
            element: LOW_CLASS_BELOW,
            reason: format!(
                "must not exceed <{HIGH_CLASS_FROM}> ({}): the Low class ends where Medium begins",
                params.classes.high_from
            ),
        });
    }
    problems
}

/// A steered queue's board and when its scores last went to the log (at most once per refresh
/// interval).
#[derive(Debug)]
struct QueueBoard {
    board: Arc<Board>,
    logged_ms: u64,
}

/// DRMJS's memory: recent task latencies (cluster-wide) and each steered queue's board.
#[derive(Debug, Default)]
pub struct Drmjs {
    latencies: Latencies,
    /// Map and reduce completions seen, so a board knows it is out of date.
    completions: u64,
    boards: BTreeMap<Arc<str>, QueueBoard>,
    /// The boards computed in the current offer, with the parameters each was computed for. The
    /// state and the latencies do not change within an offer, so a queue with equal parameters
    /// that finds its board stale in the same offer would compute the same board.
    computed_in_offer: Vec<(Params, Arc<Board>)>,
    /// The scores logged since the last offer's response, for the shim's metrics.
    published: Vec<NodeScoreReport>,
}

impl Drmjs {
    /// The scores `queue` was last planned with.
    pub fn board(&self, queue: &str) -> Option<&Board> {
        self.boards.get(queue).map(|queue| queue.board.as_ref())
    }

    /// The recent task latencies the influence terms come from.
    pub fn latencies(&self) -> &Latencies {
        &self.latencies
    }

    /// The queue's board, recomputed if `refreshMs` has passed, a task finished or the offered
    /// node joined since it was computed.
    fn refreshed_board(&mut self, turn: &Turn, params: &Params) -> &Board {
        let now_ms = turn.offer.now_ms;
        let stale = self.boards.get(turn.queue).is_none_or(|queue| {
            let board = &queue.board;
            now_ms.saturating_sub(board.computed_ms) >= params.refresh_ms
                || board.completions != self.completions
                || board.node(turn.offer.node_id).is_none()
        });
        if stale {
            let board = self.board_of_this_offer(turn, params);
            // Completions can refresh the board on nearly every offer of a busy cluster; the
            // operator's lines come at most once per interval.
            let last_logged = self.boards.get(turn.queue).map(|old| old.logged_ms);
            let logged_ms = match last_logged {
                Some(logged) if now_ms.saturating_sub(logged) < params.refresh_ms => logged,
                _ => {
                    for node in &board.nodes {
                        log_score(turn.queue, node);
                        self.published.push(report(turn.queue, node));
                    }
                    now_ms
                }
            };
            self.boards
                .insert(Arc::clone(turn.queue), QueueBoard { board, logged_ms });
        }
        &self.boards[turn.queue].board
    }

    /// A board computed now for `params`: the one an earlier queue of this offer got, or a new
    /// one.
    fn board_of_this_offer(&mut self, turn: &Turn, params: &Params) -> Arc<Board> {
        if let Some((_, board)) = self
            .computed_in_offer
            .iter()
            .find(|(computed_for, _)| computed_for == params)
        {
            return Arc::clone(board);
        }
        let board = Arc::new(Board::compute(
            turn.context.state,
            &mut self.latencies,
            params,
            turn.offer.now_ms,
            self.completions,
        ));
        self.computed_in_offer
            .push((params.clone(), Arc::clone(&board)));
        board
    }
}

/// The same scores for the shim's metrics.
fn report(queue: &str, node: &NodeScore) -> NodeScoreReport {
    NodeScoreReport {
        queue: queue.to_string(),
        node: node.node.clone(),
        cpu_speed: node.cpu_speed,
        cpu_free: node.cpu_free,
        disk: node.disk,
        disk_from_feed: node.disk_source == TermSource::Feed,
        net: node.net,
        net_from_feed: node.net_source == TermSource::Feed,
        map_influence: node.map_influence,
        reduce_influence: node.reduce_influence,
        map_score: node.map.score,
        map_class: node.map.class,
        reduce_score: node.reduce.score,
        reduce_class: node.reduce.class,
    }
}

/// The operator's view of a node's scores at a refresh: one line per node.
fn log_score(queue: &str, node: &NodeScore) {
    log::info!(
        "drmjs {queue} node {}: cpu={:.3} (speed {:.3} x free {:.3}) disk={:.3} ({:?}) \
         net={:.3} ({:?}) map_inf={:.3} reduce_inf={:.3} MPS={:.3} ({:?}, rank position {:.2}) \
         RPS={:.3} ({:?}, rank position {:.2})",
        node.node.0,
        node.cpu,
        node.cpu_speed,
        node.cpu_free,
        node.disk,
        node.disk_source,
        node.net,
        node.net_source,
        node.map_influence,
        node.reduce_influence,
        node.map.score,
        node.map.class,
        node.map.position,
        node.reduce.score,
        node.reduce.class,
        node.reduce.position,
    );
}

impl Policy for Drmjs {
    fn declaration(&self) -> Declaration {
        Declaration {
            name: "drmjs",
            queue_params: QUEUE_PARAMS,
            cluster_params: &[],
            check,
            steers: true,
            reads_netsat: false,
            starvation_guard_ms: None,
        }
    }

    fn observe(&mut self, context: &Context, observation: &Observation) {
        // Latencies are kept only while some queue runs DRMJS: recording every task of a
        // cluster that has none cost 1–1.6 % of a simulated day under each other policy. A
        // queue that takes DRMJS up later starts from no history, never from one with a gap
        // (tasks, departures and removed nodes it was not told of).
        if !context.named_by_a_queue() {
            if self.completions > 0 || !self.boards.is_empty() {
                *self = Drmjs::default();
            }
            return;
        }
        match observation {
            Observation::TaskFinished {
                app,
                node,
                kind,
                start_ms,
                finish_ms,
                ..
            } if matches!(kind, TaskKind::Map | TaskKind::Reduce) => {
                self.latencies
                    .record(app, node, *kind, finish_ms.saturating_sub(*start_ms));
                self.completions += 1;
            }
            Observation::NodeRemoved { node } => self.latencies.forget_node(node),
            Observation::AppRemoved { app } => self.latencies.forget_job(app),
            _ => {}
        }
    }

    fn end_offer(&mut self) {
        self.computed_in_offer.clear();
    }

    fn node_scores(&mut self) -> Vec<NodeScoreReport> {
        std::mem::take(&mut self.published)
    }

    fn rank(&mut self, turn: &Turn, entries: &mut Vec<PlanEntry>) {
        let params = turn.params.typed(Params::of);
        let board = self.refreshed_board(turn, params);
        let Some(here) = board.node(turn.offer.node_id) else {
            return;
        };
        // The kind this node ranks better at goes first: a disk-contended node, low on the map
        // list but not on the reduce list, runs reduces.
        let kinds = if here.map.position <= here.reduce.position {
            [TaskKind::Map, TaskKind::Reduce]
        } else {
            [TaskKind::Reduce, TaskKind::Map]
        };
        for kind in kinds {
            let Some(size) = container_size(turn, kind) else {
                continue;
            };
            let held = match params.placement {
                Placement::StrictRank => held_for_better_node(turn, board, here, kind, &size),
                Placement::ScoreCap => at_score_cap(turn, here, kind, &size),
            };
            if held {
                continue;
            }
            match kind {
                TaskKind::Map => map_entries(turn, entries),
                _ => reduce_entries(turn, params, board, here, &size, entries),
            }
        }
    }
}

/// The container size the queue's first app with asks of `kind` asks for; `None` without any.
fn container_size(turn: &Turn, kind: TaskKind) -> Option<Resources> {
    turn.candidates.iter().find_map(|candidate| {
        candidate
            .app
            .asks
            .values()
            .find(|ask| TaskKind::of_mapreduce_priority(ask.priority) == kind)
            .map(|ask| ask.resources)
    })
}

/// Whether a node of the given capacity running `running` tasks has room for one more of
/// `size`.
fn has_room(capacity: &Resources, running: usize, size: &Resources) -> bool {
    (running as u64) < containers_fitting(capacity, size)
}

/// Interference avoidance (strict rank): a node in the Low class for `kind` is held while a
/// node of a better class for it has room for such a container.
fn held_for_better_node(
    turn: &Turn,
    board: &Board,
    here: &NodeScore,
    kind: TaskKind,
    size: &Resources,
) -> bool {
    here.standing(kind).class == Class::Low
        && room_from_class(turn, board, kind, Class::Medium, size)
}

/// Whether a node whose class for `kind` is `class` or better has room for a container of
/// `size`.
fn room_from_class(
    turn: &Turn,
    board: &Board,
    kind: TaskKind,
    class: Class,
    size: &Resources,
) -> bool {
    let state = turn.context.state;
    board
        .ranked(kind)
        .take_while(|other| other.standing(kind).class >= class)
        .any(|other| {
            state.nodes.get(&other.node).is_some_and(|node| {
                has_room(
                    &node.capacity,
                    state.containers_on(&other.node).count(),
                    size,
                )
            })
        })
}

/// The score-proportional cap (§2.2 step 8): a node runs at most `ceil(containers × relative
/// score)` tasks of `kind`.
fn at_score_cap(turn: &Turn, here: &NodeScore, kind: TaskKind, size: &Resources) -> bool {
    let cap = (containers_fitting(&turn.offer.node.capacity, size) as f64
        * here.standing(kind).relative)
        .ceil() as usize;
    let running = turn
        .context
        .state
        .containers_on(turn.offer.node_id)
        .filter(|(_, _, running_kind)| *running_kind == kind)
        .count();
    running >= cap
}

/// The queue's maps, node-local ones first, then rack-local, then any; within a tier by job
/// arrival, re-run maps before ordinary ones.
fn map_entries(turn: &Turn, entries: &mut Vec<PlanEntry>) {
    let offer = turn.offer;
    for (locality, reason) in [
        (Locality::NodeLocal, "drmjs:map-node-local"),
        (Locality::RackLocal, "drmjs:map-rack-local"),
        (Locality::OffSwitch, "drmjs:map"),
    ] {
        for candidate in turn.candidates {
            for ask in candidate.app.asks.values() {
                if TaskKind::of_mapreduce_priority(ask.priority) != TaskKind::Map {
                    continue;
                }
                let reaches = match locality {
                    Locality::NodeLocal => ask.hosts.get(offer.host).is_some_and(|&n| n > 0),
                    Locality::RackLocal => ask.racks.get(offer.rack).is_some_and(|&n| n > 0),
                    Locality::OffSwitch => true,
                };
                if reaches {
                    entries.push(PlanEntry {
                        app: candidate.id.clone(),
                        priority: ask.priority,
                        locality,
                        reason: reason.into(),
                    });
                }
            }
        }
    }
}

/// The input size class of each candidate's reduces (the thesis' Table 3.1), `None` for a
/// candidate without pending reduces: its predicted input per reduce relative to the largest
/// among the queue's candidates, classed by the queue's boundaries as node scores are.
fn reduce_size_classes(turn: &Turn, params: &Params) -> Vec<Option<Class>> {
    let default_map_input_bytes = turn.context.settings.default_map_input_bytes;
    let inputs: Vec<Option<f64>> = turn
        .candidates
        .iter()
        .map(|candidate| {
            (candidate.app.pending(TaskKind::Reduce) > 0).then(|| {
                candidate
                    .app
                    .predicted_reduce_input_bytes(default_map_input_bytes)
            })
        })
        .collect();
    let largest = inputs.iter().flatten().copied().fold(0.0, f64::max);
    inputs
        .iter()
        .map(|input| {
            input.map(|bytes| {
                if largest > 0.0 {
                    params.classes.of(bytes / largest)
                } else {
                    Class::Low
                }
            })
        })
        .collect()
}

/// The queue's reduces by job arrival. Reduces go by input size class onto nodes of the same or
/// better reduce class: a job whose reduces are in a class above this node's is left out while
/// a node of its class or better has room for a reduce.
fn reduce_entries(
    turn: &Turn,
    params: &Params,
    board: &Board,
    here: &NodeScore,
    size: &Resources,
    entries: &mut Vec<PlanEntry>,
) {
    let size_classes = reduce_size_classes(turn, params);
    for (candidate, size_class) in turn.candidates.iter().zip(size_classes) {
        let Some(size_class) = size_class else {
            continue;
        };
        if size_class > here.reduce.class
            && room_from_class(turn, board, TaskKind::Reduce, size_class, size)
        {
            continue;
        }
        for ask in candidate.app.asks.values() {
            if TaskKind::of_mapreduce_priority(ask.priority) == TaskKind::Reduce {
                entries.push(PlanEntry {
                    app: candidate.id.clone(),
                    priority: ask.priority,
                    locality: Locality::OffSwitch,
                    reason: "drmjs:reduce".into(),
                });
            }
        }
    }
}
