//! FRESH (Wang et al.), translated from Hadoop 0.20's typed slots to a YARN queue's containers.
//! Per offer, for each queue under `fresh`:
//! - **admission** (§III): at most `k` jobs in their map phase (M) and `k` in their reduce phase
//!   (R). Jobs waiting to start their maps are admitted in Johnson's order of their profiles;
//!   a job done with its maps joins R when there is room, else waits first-come first-served
//!   (R'). A job not admitted to the phase it is in places nothing.
//! - **map or reduce** (Algorithms 2, 3): the freed container runs a map iff the expected
//!   number of map containers exceeds the maps the queue runs now, over the queue's own
//!   containers instead of the paper's `S` slots. Reduces asked at slow-start stay pending in
//!   the ApplicationMaster until FRESH gives them a container.
//! - **which job** (Algorithm 4): the admitted job with the least overall resource use `r_i`.
//!
//! Job profiles (mean map and reduce task time) come from the job's own finished tasks, else
//! from the learned history of its name (kept with the shuffle ratios, persisted by the shim
//! across restarts), else from the queue's defaults.
//! When FRESH prefers one kind and no admitted job has a task of it pending, the other kind
//! goes (a container left idle helps no job).
//!
//! Most offers change nothing of the above (on a saturated cluster nearly every offer places
//! nothing), so a queue's turn is kept until something it read changes; only the admitted
//! jobs' `r_i`, which moves with time, is computed on every offer.

pub mod batch;
pub mod fairness;
pub mod share;

use crate::mapreduce::TaskKind;
use crate::policy::{Candidate, Context, Offer, Policy, Turn};
use crate::protocol::{AppId, Locality, PlanEntry};
use crate::settings::{params::no_check, Declaration, Param, ParamValues, Value};
use crate::state::{App, ClusterState, Observation};
use batch::{johnson_order, JobProfile};
use share::{expected_map_containers, Lightest, ShareInputs};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

const JOBS_PER_PHASE: &str = "jobsPerPhase";
const LOOKAHEAD_PROGRESS: &str = "lookaheadProgress";
const SWITCH_GAP: &str = "switchGap";
const REDUCE_INTERVAL_WINDOW: &str = "reduceIntervalWindow";
const DEFAULT_MAP_MS: &str = "defaultMapMs";
const DEFAULT_REDUCE_MS: &str = "defaultReduceMs";
const STARTS_AHEAD: &str = "startsAhead";

const HALF: &str = "half";
const ALL: &str = "all";

/// `k`: read by the queue's element and by the `fresh-static` command alike.
const JOBS_PER_PHASE_PARAM: Param = Param::whole_or_word(
    JOBS_PER_PHASE,
    HALF,
    (1.0, 100_000.0),
    &[HALF, ALL],
    "k: most jobs in the map phase and most in the reduce phase at once; half = half the \
     jobs that arrived since the queue was last empty (rounded up), all = no limit",
);

/// The `<rackwise>` elements of a `fresh` queue.
const QUEUE_PARAMS: &[Param] = &[
    JOBS_PER_PHASE_PARAM,
    Param::number(
        LOOKAHEAD_PROGRESS,
        0.8,
        (0.0, false),
        1.0,
        "tau1: map progress of the job nearest the end of its maps from which FRESH looks \
         ahead to its reduce work",
    ),
    Param::number(
        SWITCH_GAP,
        0.6,
        (0.0, true),
        100.0,
        "tau2: relative gap between the map share reached and the share expected after that \
         job's maps that makes FRESH follow the expected share",
    ),
    Param::whole(
        REDUCE_INTERVAL_WINDOW,
        10.0,
        1.0,
        1000.0,
        "r: mean over this many recent intervals between the queue's reduce completions",
    ),
    Param::number(
        DEFAULT_MAP_MS,
        30_000.0,
        (0.0, true),
        86_400_000.0,
        "mean map task time assumed for a job with no finished map and no history",
    ),
    Param::number(
        DEFAULT_REDUCE_MS,
        60_000.0,
        (0.0, true),
        86_400_000.0,
        "mean reduce task time assumed for a job with no finished reduce and no history",
    ),
    Param::whole(
        STARTS_AHEAD,
        1.0,
        0.0,
        100_000.0,
        "jobs waiting for admission to the map phase that may run their ApplicationMaster \
         ahead of it (so that Johnson's order has their task counts); the AMs of later jobs \
         wait while the queue's admitted jobs have tasks pending, at most the starvation guard",
    ),
];

/// `k`, as configured: a count, `half` or `all`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JobsPerPhase {
    Count(usize),
    Half,
    All,
}

impl JobsPerPhase {
    /// Reads `k` as the `jobsPerPhase` element does; the error says why it is refused.
    pub fn parse(text: &str) -> Result<JobsPerPhase, String> {
        JOBS_PER_PHASE_PARAM
            .parse(text)
            .map(JobsPerPhase::from_value)
    }

    fn from_value(value: Value) -> JobsPerPhase {
        match value {
            Value::Number(k) => JobsPerPhase::Count(k as usize),
            Value::Word(HALF) => JobsPerPhase::Half,
            _ => JobsPerPhase::All,
        }
    }

    /// `k` for a batch of `jobs` jobs (at least 1).
    pub fn of(self, jobs: usize) -> usize {
        match self {
            JobsPerPhase::Count(k) => k,
            JobsPerPhase::Half => jobs.div_ceil(2).max(1),
            JobsPerPhase::All => usize::MAX,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Params {
    jobs_per_phase: JobsPerPhase,
    lookahead_progress: f64,
    switch_gap: f64,
    reduce_interval_window: usize,
    default_map_ms: f64,
    default_reduce_ms: f64,
    starts_ahead: usize,
}

impl Params {
    fn of(values: &ParamValues) -> Params {
        Params {
            jobs_per_phase: JobsPerPhase::from_value(values.whole_or_word(JOBS_PER_PHASE)),
            lookahead_progress: values.number(LOOKAHEAD_PROGRESS),
            switch_gap: values.number(SWITCH_GAP),
            reduce_interval_window: values.number(REDUCE_INTERVAL_WINDOW) as usize,
            default_map_ms: values.number(DEFAULT_MAP_MS),
            default_reduce_ms: values.number(DEFAULT_REDUCE_MS),
            starts_ahead: values.number(STARTS_AHEAD) as usize,
        }
    }
}

/// What FRESH observed of one job.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct JobRecord {
    /// Container-time of its finished map and reduce tasks.
    finished_busy_ms: u64,
    /// Its running map and reduce tasks, and the sum of their start times: their time so far
    /// is `running · now − start sum`, with no walk over containers.
    running: u64,
    running_start_sum_ms: u64,
    /// `T_i`: when it was admitted to its map phase.
    started_ms: Option<u64>,
}

impl JobRecord {
    fn busy_ms(&self, now_ms: u64) -> u64 {
        self.finished_busy_ms + (self.running * now_ms).saturating_sub(self.running_start_sum_ms)
    }

    /// `r_i` at `now_ms`, once the job is admitted.
    fn resource_use(&self, now_ms: u64) -> Option<f64> {
        let started = self.started_ms?;
        Some(fairness::resource_use(
            self.busy_ms(now_ms),
            started,
            now_ms,
        ))
    }
}

/// The admission sets of one queue.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Phases {
    /// M: admitted to their map phase, in admission order.
    pub mapping: Vec<AppId>,
    /// R: admitted to their reduce phase.
    pub reducing: Vec<AppId>,
    /// R': done with their maps, waiting for room in R, first come first served.
    pub waiting: VecDeque<AppId>,
    /// Jobs whose ApplicationMaster runs, waiting for admission to M.
    pub started_waiting: usize,
    /// Every job seen since the queue was last empty: `half` is half of these.
    batch: BTreeSet<AppId>,
    /// Finish times of the queue's latest reduces, for `r`.
    reduce_finishes: VecDeque<u64>,
}

impl Phases {
    fn holds(&self, id: &AppId) -> bool {
        self.mapping.contains(id) || self.reducing.contains(id) || self.waiting.contains(id)
    }

    /// `r`: mean interval between the recorded reduce completions.
    fn reduce_interval(&self) -> Option<f64> {
        let (first, last) = (self.reduce_finishes.front()?, self.reduce_finishes.back()?);
        let intervals = self.reduce_finishes.len() - 1;
        (intervals > 0).then(|| (last - first) as f64 / intervals as f64)
    }
}

/// FRESH's memory: each observed job and each queue's admission sets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fresh {
    jobs: BTreeMap<AppId, JobRecord>,
    queues: BTreeMap<String, Phases>,
    members: Members,
    /// Each queue's last turn, kept while nothing it was computed from has changed: most
    /// offers change nothing FRESH reads (on FB-2010, 31 M of 33 M offers place nothing).
    turns: BTreeMap<String, QueueTurn>,
    /// The running containers the state had at the last observation or offer. A task whose
    /// container stops before it completes (preempted, a speculative attempt killed) changes
    /// its job's running counts without an observation; it shows here as a container fewer
    /// than the observations account for.
    containers_seen: usize,
}

/// What a queue's turn computed from its jobs, their records, the learned history and its
/// parameters; only the resource use of its admitted jobs moves with the offer's time.
#[derive(Debug, Clone, PartialEq)]
struct QueueTurn {
    params: Params,
    /// Algorithm 2's choice.
    maps_first: bool,
    /// The admitted jobs with a map (`maps`) or a reduce (`reduces`) pending, in the order of
    /// the turn's candidates: each one's position among them, id and record.
    maps: Vec<(usize, AppId, JobRecord)>,
    reduces: Vec<(usize, AppId, JobRecord)>,
    /// The answer of `held_starts`, once asked.
    held: Option<Vec<AppId>>,
}

impl QueueTurn {
    /// Whether the turn was taken with these parameters and its positions still name the same
    /// candidates. The observations that forget a turn cover every change of a queue's
    /// candidates; this check keeps a kept position from ever naming another job.
    fn fits(&self, turn: &Turn, params: &Params) -> bool {
        self.params == *params
            && self
                .maps
                .iter()
                .chain(&self.reduces)
                .all(|(at, id, _)| turn.candidates.get(*at).is_some_and(|c| c.id == id))
    }
}

/// Every known app by queue, kept from the apps' arrivals and departures: FRESH reads a queue's
/// jobs on every offer for every queue, and a scan of the whole cluster's apps for each made an
/// offer cost queues × apps.
#[derive(Debug, Clone, Default, PartialEq)]
struct Members {
    by_queue: BTreeMap<String, BTreeSet<AppId>>,
    queue_of: BTreeMap<AppId, String>,
}

impl Members {
    fn follow(&mut self, state: &ClusterState, observation: &Observation) {
        match observation {
            Observation::AppAdded { app } => {
                // A re-added app may come in another queue.
                self.leave(app);
                if let Some(added) = state.apps.get(app) {
                    self.by_queue
                        .entry(added.queue.clone())
                        .or_default()
                        .insert(app.clone());
                    self.queue_of.insert(app.clone(), added.queue.clone());
                }
            }
            Observation::AppRemoved { app } => self.leave(app),
            _ => {}
        }
    }

    fn leave(&mut self, app: &AppId) {
        let Some(queue) = self.queue_of.remove(app) else {
            return;
        };
        if let Some(listed) = self.by_queue.get_mut(&queue) {
            listed.remove(app);
            if listed.is_empty() {
                self.by_queue.remove(&queue);
            }
        }
    }

    /// The apps of `queue`, in id order.
    fn of<'s>(
        &'s self,
        queue: &str,
        state: &'s ClusterState,
    ) -> impl Iterator<Item = (&'s AppId, &'s App)> {
        self.by_queue
            .get(queue)
            .into_iter()
            .flatten()
            .filter_map(|id| Some((id, state.apps.get(id)?)))
    }
}

/// Every map task of the job is done (it asked for some, none is pending or running).
fn maps_done(app: &App) -> bool {
    app.job.known_maps(app.pending(TaskKind::Map)) > 0
        && app.pending(TaskKind::Map) == 0
        && app.job.running_maps == 0
}

/// Every reduce task the job has, as far as its counters and asks tell, is done.
fn reduces_done(app: &App) -> bool {
    maps_done(app)
        && app.pending(TaskKind::Reduce) == 0
        && app.job.running_reduces == 0
        && app.job.finished_reduces >= app.job.reduces_total
}

/// Mean map and reduce task time (ms) of a job: its own finished tasks, else its name's
/// learned history, else the defaults.
fn task_times(state: &ClusterState, app: &App, params: &Params) -> (f64, f64) {
    let (learned_map, learned_reduce) = state.history.task_times(&app.name);
    (
        (app.job.map_times.mean_ms())
            .or(learned_map)
            .unwrap_or(params.default_map_ms),
        (app.job.reduce_times.mean_ms())
            .or(learned_reduce)
            .unwrap_or(params.default_reduce_ms),
    )
}

/// Map tasks of the job not yet finished (`n'_m`).
fn maps_left(app: &App) -> u32 {
    app.pending(TaskKind::Map) + app.job.running_maps
}

fn reduces_left(app: &App) -> u32 {
    app.job
        .known_reduces(app.pending(TaskKind::Reduce))
        .saturating_sub(app.job.finished_reduces)
}

impl Fresh {
    /// The admission sets of `queue`, as of its last offer.
    pub fn phases(&self, queue: &str) -> Option<&Phases> {
        self.queues.get(queue)
    }

    /// `r_i` of a job at `now_ms`, if FRESH has admitted it.
    pub fn resource_use(&self, app: &AppId, now_ms: u64) -> Option<f64> {
        self.jobs.get(app)?.resource_use(now_ms)
    }

    /// Forgets the kept turns that `observation` may change. Every observed change concerns one
    /// app, which changes its queue's turn (and, re-added, the turn of the queue it left). Every
    /// turn is forgotten on an app's departure (it teaches the history all queues read) and on
    /// a change that came without an observation.
    fn forget_changed_turns(&mut self, state: &ClusterState, observation: &Observation) {
        let containers = state.containers.len();
        let accounted = match observation {
            Observation::TaskStarted { .. } => containers == self.containers_seen + 1,
            Observation::TaskFinished { .. } => containers + 1 == self.containers_seen,
            Observation::AppRemoved { .. } => false,
            _ => containers == self.containers_seen,
        };
        self.containers_seen = containers;
        if !accounted {
            self.turns.clear();
            return;
        }
        // Every policy observes every event; when no queue names FRESH, nothing is kept.
        if self.turns.is_empty() {
            return;
        }
        let app = match observation {
            Observation::AppAdded { app }
            | Observation::AsksChanged { app }
            | Observation::TaskStarted { app, .. }
            | Observation::TaskFinished { app, .. }
            | Observation::JobStats { app } => app,
            _ => return,
        };
        if let Some(queue) = self.members.queue_of.get(app) {
            self.turns.remove(queue);
        }
        if let Some(known) = state.apps.get(app) {
            self.turns.remove(&known.queue);
        }
    }

    /// The queue's turn as of now: admission, Algorithms 2 and 3, and which candidates each
    /// phase's admitted jobs are.
    fn take_turn(&mut self, turn: &Turn, params: &Params) -> QueueTurn {
        let state = turn.context.state;
        let next_map_work = self.admit(turn.queue, state, params, turn.offer.now_ms);
        let phases = &self.queues[&**turn.queue];
        let maps_first = self.prefers_maps(turn.queue, phases, state, params, next_map_work);
        let admitted = |ids: &[AppId], kind: TaskKind| {
            turn.candidates
                .iter()
                .enumerate()
                .filter(|(_, c)| ids.contains(c.id) && c.app.pending(kind) > 0)
                .map(|(at, c)| {
                    let record = self.jobs.get(c.id).copied().unwrap_or_default();
                    (at, c.id.clone(), record)
                })
                .collect()
        };
        QueueTurn {
            params: params.clone(),
            maps_first,
            maps: admitted(&phases.mapping, TaskKind::Map),
            reduces: admitted(&phases.reducing, TaskKind::Reduce),
            held: None,
        }
    }

    fn profile(state: &ClusterState, app: &App, params: &Params) -> JobProfile {
        let (map_time, reduce_time) = task_times(state, app, params);
        JobProfile {
            maps: app.job.known_maps(app.pending(TaskKind::Map)),
            reduces: app.job.known_reduces(app.pending(TaskKind::Reduce)),
            map_time,
            reduce_time,
        }
    }

    fn follow(&mut self, context: &Context, observation: &Observation) {
        match observation {
            Observation::TaskStarted {
                app,
                kind: TaskKind::Map | TaskKind::Reduce,
                time_ms,
                ..
            } => {
                if let Some(record) = self.steered_record(context, app) {
                    record.running += 1;
                    record.running_start_sum_ms += time_ms;
                }
            }
            Observation::TaskFinished {
                app,
                kind,
                start_ms,
                finish_ms,
                ..
            } => {
                if !matches!(kind, TaskKind::Map | TaskKind::Reduce) {
                    return;
                }
                let Some(record) = self.steered_record(context, app) else {
                    return;
                };
                record.finished_busy_ms += finish_ms.saturating_sub(*start_ms);
                // A task started before FRESH followed the job was never counted as running.
                if record.running > 0 {
                    record.running -= 1;
                    record.running_start_sum_ms =
                        record.running_start_sum_ms.saturating_sub(*start_ms);
                }
                if *kind == TaskKind::Reduce {
                    self.reduce_finished(context, app, *finish_ms);
                }
            }
            Observation::AppRemoved { app } => {
                self.jobs.remove(app);
            }
            _ => {}
        }
    }

    /// The record of a job of a queue under FRESH, created on first sight.
    fn steered_record(&mut self, context: &Context, id: &AppId) -> Option<&mut JobRecord> {
        let app = context.state.apps.get(id)?;
        context.steered(&app.queue)?;
        Some(self.jobs.entry(id.clone()).or_default())
    }

    fn reduce_finished(&mut self, context: &Context, id: &AppId, finish_ms: u64) {
        let Some(app) = context.state.apps.get(id) else {
            return;
        };
        let Some(values) = context.steered(&app.queue) else {
            return;
        };
        let window = values.typed(Params::of).reduce_interval_window;
        let finishes = &mut self
            .queues
            .entry(app.queue.clone())
            .or_default()
            .reduce_finishes;
        finishes.push_back(finish_ms);
        while finishes.len() > window + 1 {
            finishes.pop_front();
        }
    }

    /// Brings a queue's admission sets up to date with its jobs: jobs that left a phase leave
    /// its set, R fills from R', M from the waiting jobs in Johnson's order. Returns the map
    /// work of the job that would be admitted next (0 if none waits).
    fn admit(&mut self, queue: &str, state: &ClusterState, params: &Params, now_ms: u64) -> f64 {
        let members: Vec<(&AppId, &App)> = self
            .members
            .of(queue, state)
            .filter(|(_, app)| app.is_mapreduce)
            .collect();
        let app = |id: &AppId| {
            state
                .apps
                .get(id)
                .filter(|a| a.queue == queue && a.is_mapreduce)
        };
        if !self.queues.contains_key(queue) {
            self.queues.insert(queue.to_string(), Phases::default());
        }
        let phases = self.queues.get_mut(queue).expect("inserted above");
        if members.is_empty() {
            phases.batch.clear();
        }
        phases
            .batch
            .extend(members.iter().map(|(id, _)| (*id).clone()));
        let k = params.jobs_per_phase.of(phases.batch.len());

        let mut still_mapping = Vec::with_capacity(phases.mapping.len());
        for id in std::mem::take(&mut phases.mapping) {
            match app(&id) {
                Some(a) if maps_done(a) => phases.waiting.push_back(id),
                Some(_) => still_mapping.push(id),
                None => {}
            }
        }
        phases.mapping = still_mapping;
        // A job with nothing left to reduce (finished, or without reduces) leaves R and R'.
        let reducing = |id: &AppId| app(id).is_some_and(|a| !reduces_done(a));
        phases.reducing.retain(reducing);
        phases.waiting.retain(reducing);

        // Jobs FRESH has not placed yet, by arrival: done with their maps (a job FRESH met
        // late), or waiting to start them once their ApplicationMaster runs.
        let mut queued: Vec<(&AppId, &App)> = Vec::new();
        let mut arrivals: Vec<&(&AppId, &App)> = members
            .iter()
            .filter(|(id, a)| {
                !phases.holds(id) && !a.awaits_application_master() && !reduces_done(a)
            })
            .collect();
        arrivals.sort_by_key(|(id, a)| (a.submit_ms, (*id).clone()));
        for &(id, a) in arrivals {
            if maps_done(a) {
                phases.waiting.push_back(id.clone());
            } else {
                queued.push((id, a));
            }
        }

        while phases.reducing.len() < k {
            let Some(id) = phases.waiting.pop_front() else {
                break;
            };
            phases.reducing.push(id);
        }

        let stages: Vec<(f64, f64)> = queued
            .iter()
            .map(|(_, a)| {
                let profile = Fresh::profile(state, a, params);
                (profile.map_work(), profile.reduce_work())
            })
            .collect();
        let mut next_map_work = 0.0;
        phases.started_waiting = 0;
        for (position, i) in johnson_order(&stages).into_iter().enumerate() {
            if phases.mapping.len() >= k {
                phases.started_waiting = queued.len() - position;
                next_map_work = stages[i].0;
                break;
            }
            let id = queued[i].0;
            phases.mapping.push(id.clone());
            self.jobs.entry(id.clone()).or_default().started_ms = Some(now_ms);
        }
        next_map_work
    }

    /// The starts `held_starts` holds back, from the queue's admission sets as they are.
    fn held_now(&self, turn: &Turn) -> Vec<AppId> {
        let Some(phases) = self.queues.get(&**turn.queue) else {
            return Vec::new();
        };
        let params = turn.params.typed(Params::of);
        let k = params.jobs_per_phase.of(phases.batch.len());
        let may_start = k
            .saturating_sub(phases.mapping.len())
            .saturating_add(params.starts_ahead)
            .saturating_sub(phases.started_waiting);
        let mut starting: Vec<(&AppId, &App)> = self
            .members
            .of(turn.queue, turn.context.state)
            .filter(|(_, a)| a.is_mapreduce && a.awaits_application_master())
            .collect();
        starting.sort_by_key(|(id, a)| (a.submit_ms, (*id).clone()));
        starting
            .into_iter()
            .skip(may_start)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Algorithms 2 and 3 for the queue: whether the offered container should run a map.
    fn prefers_maps(
        &self,
        queue: &str,
        phases: &Phases,
        state: &ClusterState,
        params: &Params,
        next_map_work: f64,
    ) -> bool {
        let app = |id: &AppId| state.apps.get(id);
        let mut map_work_left = 0.0;
        let mut lightest: Option<Lightest> = None;
        for id in &phases.mapping {
            let Some(a) = app(id) else { continue };
            let (map_ms, reduce_ms) = task_times(state, a, params);
            let left = maps_left(a) as f64 * map_ms;
            map_work_left += left;
            if lightest.is_none_or(|l| left < l.map_work_left) {
                let known = a.job.known_maps(a.pending(TaskKind::Map)).max(1);
                lightest = Some(Lightest {
                    map_work_left: left,
                    progress: a.job.finished_maps() as f64 / known as f64,
                    map_containers: a.job.running_maps as f64,
                    reduce_work: a.job.known_reduces(a.pending(TaskKind::Reduce)) as f64
                        * reduce_ms,
                });
            }
        }
        let reduce_work_left: f64 = phases
            .reducing
            .iter()
            .chain(&phases.waiting)
            .filter_map(|id| Some((id, app(id)?)))
            .map(|(_, a)| reduces_left(a) as f64 * task_times(state, a, params).1)
            .sum();
        // The queue's containers: what its jobs run now, and the one offered.
        let (mut maps, mut reduces) = (0.0, 0.0);
        for (_, a) in self.members.of(queue, state) {
            maps += a.job.running_maps as f64;
            reduces += a.job.running_reduces as f64;
        }
        let inputs = ShareInputs {
            map_work_left,
            reduce_work_left,
            lightest,
            next_map_work,
            k: phases.mapping.len().max(1) as f64,
            reduce_interval: phases.reduce_interval(),
            containers: maps + reduces + 1.0,
            map_containers: maps,
            lookahead_progress: params.lookahead_progress,
            switch_gap: params.switch_gap,
        };
        expected_map_containers(&inputs).is_none_or(|expected| expected > maps)
    }
}

impl Policy for Fresh {
    fn declaration(&self) -> Declaration {
        Declaration {
            name: "fresh",
            queue_params: QUEUE_PARAMS,
            cluster_params: &[],
            check: no_check,
            steers: true,
            reads_netsat: false,
            starvation_guard_ms: None,
        }
    }

    fn observe(&mut self, context: &Context, observation: &Observation) {
        self.forget_changed_turns(context.state, observation);
        self.members.follow(context.state, observation);
        self.follow(context, observation);
    }

    fn begin_offer(&mut self, context: &Context, _offer: &Offer) {
        let containers = context.state.containers.len();
        if containers != self.containers_seen {
            self.containers_seen = containers;
            self.turns.clear();
        }
    }

    /// Jobs not admitted get no ApplicationMaster either (Hadoop 1 had no per-job container,
    /// so the paper's waiting jobs cost nothing): the AMs that may start are those of the jobs
    /// M has room for plus `startsAhead`, less the jobs already started and waiting; the
    /// others wait, by arrival. No job's task counts are known before its AM asks for its
    /// tasks (the history keeps task times, not counts), so held AMs start in arrival order
    /// whatever their name's history, and Johnson's order chooses among the started jobs.
    fn held_starts(&mut self, turn: &Turn) -> Vec<AppId> {
        if let Some(held) = self
            .turns
            .get(&**turn.queue)
            .and_then(|kept| kept.held.as_ref())
        {
            return held.clone();
        }
        let held = self.held_now(turn);
        if let Some(kept) = self.turns.get_mut(&**turn.queue) {
            kept.held = Some(held.clone());
        }
        held
    }

    fn rank(&mut self, turn: &Turn, entries: &mut Vec<PlanEntry>) {
        let params = turn.params.typed(Params::of);
        let now_ms = turn.offer.now_ms;
        if self
            .turns
            .get(&**turn.queue)
            .is_none_or(|kept| !kept.fits(turn, params))
        {
            let taken = self.take_turn(turn, params);
            self.turns.insert(turn.queue.to_string(), taken);
        }
        let kept = &self.turns[&**turn.queue];
        let maps_first = kept.maps_first;
        let by_use = |admitted: &[(usize, AppId, JobRecord)]| {
            let mut jobs: Vec<(f64, &Candidate)> = admitted
                .iter()
                .map(|(at, _, record)| {
                    let candidate = &turn.candidates[*at];
                    (record.resource_use(now_ms).unwrap_or(0.0), candidate)
                })
                .collect();
            // Stable: equal uses keep the arrival order.
            jobs.sort_by(|a, b| a.0.total_cmp(&b.0));
            jobs
        };
        let maps = by_use(&kept.maps);
        let reduces = by_use(&kept.reduces);
        let (first, then, reasons) = if maps_first {
            (
                (maps, TaskKind::Map),
                (reduces, TaskKind::Reduce),
                ("fresh:map-share", "fresh:no-map-pending"),
            )
        } else {
            (
                (reduces, TaskKind::Reduce),
                (maps, TaskKind::Map),
                ("fresh:reduce-share", "fresh:no-reduce-pending"),
            )
        };
        for ((jobs, kind), reason) in [(first, reasons.0), (then, reasons.1)] {
            for (_, candidate) in jobs {
                entries.extend(
                    candidate
                        .app
                        .asks
                        .values()
                        .filter(|ask| TaskKind::of_mapreduce_priority(ask.priority) == kind)
                        .map(|ask| PlanEntry {
                            app: candidate.id.clone(),
                            priority: ask.priority,
                            locality: Locality::OffSwitch,
                            reason: reason.into(),
                        }),
                );
            }
        }
    }
}
