//! How the simulator talks to the Rackwise core, as the RM shim does: the engine's
//! configuration, the events and changed ask rows sent with each offer, and the plan that
//! comes back, reduced to what the fair-scheduler loop needs.
//!
//! All ask-table code is here: marking a job's asks or counters changed (`mark_asks`,
//! `mark_stats`), the table the shim would report (`ask_table`), the per-name counts the map
//! ask carries (`Split`), and sending the changed rows, or the moves of the map row's
//! locations, with an offer (`ask_core`). How asks reach the core is therefore decided in this one file.

use super::{queue_user, user_queue, JobPhase, Sim, PRIORITY_AM, PRIORITY_MAP, PRIORITY_REDUCE};
use crate::cluster::Cluster;
use crate::dp_workload::UserAccount;
use rackwise_core::mapreduce;
use rackwise_core::policy::dp::Dp;
use rackwise_core::policy::shufflewatcher::ShuffleWatcher;
use rackwise_core::policy::Registry;
use rackwise_core::protocol::{
    AppId, Ask, AskMove, EngineConfig, Event, Locality, NodeOffer, OfferRequest, Priority,
    QueueSettings,
};
use rackwise_core::settings::unknown_settings;
use rackwise_core::{CoreError, Engine};
use std::collections::BTreeMap;
use std::time::Instant;

/// One core call in this many is timed for [`RunCounters::core_time`](super::RunCounters).
const CORE_TIMING_STRIDE: u64 = 16;

/// The core's setting that picks NetSat's source: `model` (its default, what a YARN RM has) or
/// `feed` (rack loads measured by a host agent, which the simulator then sends).
pub const NETSAT_SOURCE_KEY: &str = "yarn.scheduler.rackwise.netsat.source";

pub(super) fn netsat_feed(extra: &BTreeMap<String, String>) -> bool {
    extra.get(NETSAT_SOURCE_KEY).map(String::as_str) == Some("feed")
}

/// How a run's output names NetSat's source: a `feed` run had measurements no stock YARN RM
/// has, and says so.
pub fn netsat_label(extra: &BTreeMap<String, String>) -> &'static str {
    if netsat_feed(extra) {
        "feed (with a host agent)"
    } else {
        "model"
    }
}

/// The engine configuration the simulator hands the core: one queue `root` with the policy and
/// `queue_extra`, inherited by every per-user queue `root.u<N>`; the rack link capacity and
/// block size of the cluster. NetSat keeps the core's default source (`model`) unless `extra`
/// sets `netsat.source`.
// `..Default::default()` on the protocol structs: other engineers add fields to them, and this
// keeps the simulator compiling when they do.
#[allow(clippy::needless_update)]
pub fn core_config(
    policy: &str,
    cluster: &Cluster,
    extra: &BTreeMap<String, String>,
    queue_extra: &BTreeMap<String, String>,
) -> EngineConfig {
    let mut settings = BTreeMap::new();
    settings.insert(
        "yarn.scheduler.rackwise.netsat.rack-uplink-mbps".to_string(),
        format!(
            "{}",
            cluster.rack_uplink_mbps.min(cluster.rack_downlink_mbps)
        ),
    );
    settings.insert(
        "yarn.scheduler.rackwise.predictor.default-map-input-mb".to_string(),
        format!("{}", cluster.block_mib),
    );
    for (k, v) in extra {
        settings.insert(k.clone(), v.clone());
    }
    EngineConfig {
        settings,
        queues: vec![QueueSettings {
            queue: "root".to_string(),
            rackwise: Some(
                queue_extra
                    .clone()
                    .into_iter()
                    .chain([("policy".to_string(), policy.to_string())])
                    .collect(),
            ),
            ..Default::default()
        }],
        source: "simulated fair-scheduler.xml".to_string(),
        ..Default::default()
    }
}

/// Builds the core engine for a policy name; the core's own configuration error otherwise.
pub fn core_engine(
    policy: &str,
    cluster: &Cluster,
    extra: &BTreeMap<String, String>,
    queue_extra: &BTreeMap<String, String>,
) -> Result<Engine, CoreError> {
    Engine::new(&core_config(policy, cluster, extra, queue_extra))
}

/// Refuses `--core-setting` keys the core would not read. The core only warns about them, as
/// the RM passes it every `yarn.scheduler.rackwise.*` key of yarn-site; here each key was
/// named on purpose, and a run that silently ignored one would be labelled with a setting it
/// never had.
pub fn check_core_settings(extra: &BTreeMap<String, String>) -> Result<(), String> {
    let unknown = unknown_settings(extra, Registry::builtin().declarations());
    if unknown.is_empty() {
        return Ok(());
    }
    Err(unknown
        .iter()
        .map(|u| {
            format!(
                "--core-setting {}={}: not a key the Rackwise core reads{}",
                u.key,
                u.value,
                u.hint()
            )
        })
        .collect::<Vec<_>>()
        .join("; "))
}

/// A map ask's location table (hosts or racks) with the changes the core has not seen yet.
pub(super) struct Split<'a, K> {
    pub(super) counts: &'a mut BTreeMap<K, u32>,
    /// Where each change goes while the core holds the table as last sent; `None` while it
    /// does not (the next send is the whole table).
    pub(super) moved: Option<&'a mut Vec<(K, i32)>>,
}

impl<'a, K: Ord + Clone> Split<'a, K> {
    /// `counts` with its changes recorded in `moved` while the core holds the table
    /// (`tracked`), not recorded otherwise.
    pub(super) fn new(
        counts: &'a mut BTreeMap<K, u32>,
        moved: &'a mut Vec<(K, i32)>,
        tracked: bool,
    ) -> Self {
        Split {
            counts,
            moved: tracked.then_some(moved),
        }
    }

    /// Takes one split off `name`'s count, dropping the name at zero as the shim's tables list
    /// only counts above zero.
    pub(super) fn take(&mut self, name: &K) {
        if let Some(c) = self.counts.get_mut(name) {
            *c -= 1;
            if *c == 0 {
                self.counts.remove(name);
            }
            if let Some(moved) = self.moved.as_mut() {
                moved.push((name.clone(), -1));
            }
        }
    }

    /// Adds one split to `name`'s count.
    pub(super) fn give(&mut self, name: &K) {
        *self.counts.entry(name.clone()).or_insert(0) += 1;
        if let Some(moved) = self.moved.as_mut() {
            moved.push((name.clone(), 1));
        }
    }
}

fn parse_app(app: &AppId) -> Option<u32> {
    app.0.strip_prefix("app_").and_then(|n| n.parse().ok())
}

#[derive(Debug, Clone, Copy)]
pub(super) struct PlanEntryLite {
    pub(super) job: u32,
    pub(super) priority: i32,
    pub(super) locality: Locality,
    pub(super) failed: bool,
}

/// The core's plan for one offer, indexed by user queue.
#[derive(Debug, Default)]
pub(super) struct OfferPlan {
    pub(super) entries: Vec<PlanEntryLite>,
    /// Each user queue's range of `entries` and whether FairScheduler orders its apps
    /// (`QueuePlan::scheduler_orders_apps`), in plan order, searched linearly: a plan has a few
    /// queues, and a map would cost an allocation on every offer.
    queues: Vec<(u32, usize, usize, bool)>,
}

impl OfferPlan {
    /// The last range of the user's, as a map would have kept.
    fn queue(&self, user: u32) -> Option<&(u32, usize, usize, bool)> {
        self.queues.iter().rev().find(|(queue, ..)| *queue == user)
    }

    /// Whether FairScheduler's order between the user queue's apps decides which app places.
    pub(super) fn scheduler_orders_apps(&self, user: u32) -> bool {
        self.queue(user).is_some_and(|&(.., ordered)| ordered)
    }

    /// `OfferPlan.head`: the first entry of the queue (of `job`'s own when given: where
    /// FairScheduler orders the queue's apps) not failed in this offer that its app can still
    /// satisfy here.
    pub(super) fn head(
        &self,
        user: u32,
        job: Option<u32>,
        satisfiable: impl Fn(&PlanEntryLite) -> bool,
    ) -> Option<(usize, PlanEntryLite)> {
        let &(_, start, end, _) = self.queue(user)?;
        mapreduce::first_satisfiable(self.entries[start..end].iter().copied(), |_, e| {
            job.is_none_or(|job| e.job == job) && !e.failed && satisfiable(e)
        })
        .map(|(i, e)| (start + i, e))
    }
}

impl Sim<'_> {
    pub(super) fn mark_asks(&mut self, j: u32) {
        if self.engine.is_some()
            && !self.jobs[j as usize].asks_dirty
            && !self.jobs[j as usize].stats_dirty
        {
            self.dirty_jobs.push(j);
        }
        self.jobs[j as usize].asks_dirty = true;
    }

    pub(super) fn mark_stats(&mut self, j: u32) {
        if self.engine.is_some()
            && !self.jobs[j as usize].asks_dirty
            && !self.jobs[j as usize].stats_dirty
        {
            self.dirty_jobs.push(j);
        }
        self.jobs[j as usize].stats_dirty = true;
    }

    /// `RackwiseAppAttempt.satisfiable`: the app still has an ask at that priority at that
    /// locality on this node.
    pub(super) fn satisfiable(&self, entry: &PlanEntryLite, node: u32, rack: u32) -> bool {
        mapreduce::satisfiable(self.best_locality(entry, node, rack), entry.locality)
    }

    /// The closest locality at which the entry's app has an ask at the entry's priority on this
    /// node; `None` without one.
    fn best_locality(&self, entry: &PlanEntryLite, node: u32, rack: u32) -> Option<Locality> {
        let job = self.jobs.get(entry.job as usize)?;
        if job.phase == JobPhase::Done {
            return None;
        }
        let any = |pending: bool| pending.then_some(Locality::OffSwitch);
        match entry.priority {
            PRIORITY_AM => any(job.am_pending && self.am_share_allows(job.user)),
            PRIORITY_REDUCE => any(job.pending_reduces > 0),
            PRIORITY_MAP => {
                if job.host_count.get(&node).is_some_and(|c| *c > 0) {
                    Some(Locality::NodeLocal)
                } else if job.rack_count.get(&rack).is_some_and(|c| *c > 0) {
                    Some(Locality::RackLocal)
                } else {
                    any(job.pending_maps > 0)
                }
            }
            _ => None,
        }
    }

    /// One call of the core: the events since the last offer, the changed ask rows and job
    /// counters (as `attemptScheduling` sends them), then the node.
    pub(super) fn ask_core(&mut self, node: u32) -> OfferPlan {
        self.send_due_spending_changes();
        let mut events = std::mem::take(&mut self.core_events);
        for (rack, load) in self.rack_loads.iter_mut().enumerate() {
            if let Some((utilization, time_ms)) = load.take() {
                events.push(Event::RackLoad {
                    rack: self.rack_names[rack].clone(),
                    utilization,
                    time_ms,
                });
            }
        }
        let dirty = std::mem::take(&mut self.dirty_jobs);
        for &j in &dirty {
            if self.jobs[j as usize].stats_dirty {
                self.jobs[j as usize].stats_dirty = false;
                if self.jobs[j as usize].phase != JobPhase::Done {
                    events.push(self.job_stats(j));
                }
            }
        }
        for &j in &dirty {
            if self.jobs[j as usize].asks_dirty {
                self.jobs[j as usize].asks_dirty = false;
                if self.jobs[j as usize].phase != JobPhase::Done {
                    let (rows, moves) = self.changed_ask_rows(j);
                    if !rows.is_empty() || !moves.is_empty() {
                        events.push(Event::AsksMoved {
                            app: self.app_ids[j as usize].clone(),
                            rows,
                            moves,
                        });
                    }
                }
            }
        }
        let request = OfferRequest {
            now_ms: self.now,
            events,
            node: NodeOffer {
                node: self.node_ids[node as usize].clone(),
                unallocated: self.node_resources(self.nodes[node as usize].free),
                utilization: None,
            },
        };
        // By value: the core keeps the ask tables instead of cloning them (the shim's JNI layer
        // decodes into owned values too).
        // Reading the clock twice per offer cost about 4 % of a run with tens of millions of
        // offers, so every `CORE_TIMING_STRIDE`-th call is timed and stands for the others.
        let started = (self.counters.offers % CORE_TIMING_STRIDE == 0).then(Instant::now);
        let response = self
            .engine
            .as_mut()
            .expect("core policy has an engine")
            .offer(request);
        if let Some(started) = started {
            self.counters.core_time += started.elapsed() * CORE_TIMING_STRIDE as u32;
        }
        self.collector
            .guard_lifted(response.diagnostics.starved.len());
        for weight in &response.queue_weights {
            if let Some(user) = queue_user(&weight.queue) {
                self.set_weight(user, weight.weight);
            }
        }
        let total = self.nodes.len() as u64 * self.cluster.containers_per_node as u64;
        let busy = self.running_containers as f64 / total as f64;
        for interval in response.intervals {
            let asking = (0..self.user_pending.len())
                .filter(|&u| self.user_pending[u] > 0)
                .map(user_queue)
                .collect();
            self.collector.dp_close(interval, busy, asking);
        }
        let mut plan = OfferPlan::default();
        for queue in &response.plan.queues {
            let Some(user) = queue_user(&queue.queue) else {
                continue;
            };
            for app in &queue.steered {
                if let Some(j) = parse_app(app) {
                    if let Some(job) = self.jobs.get_mut(j as usize) {
                        job.steered_stamp = self.offer_seq;
                    }
                }
            }
            let start = plan.entries.len();
            for entry in &queue.entries {
                if let Some(j) = parse_app(&entry.app) {
                    plan.entries.push(PlanEntryLite {
                        job: j,
                        priority: entry.priority.0,
                        locality: entry.locality,
                        failed: false,
                    });
                }
            }
            plan.queues
                .push((user, start, plan.entries.len(), queue.scheduler_orders_apps));
        }
        plan
    }

    /// Hands the core every user's Dynamic Priority account (budget and first spending rate),
    /// as the shim does from its ledger at start, and keeps the later spending changes.
    pub(super) fn open_accounts(&mut self, accounts: &[UserAccount]) {
        for (user, account) in accounts.iter().enumerate() {
            let mut schedule = account.spending.iter();
            if let Some(&(_, spending)) = schedule.next() {
                self.core_events.push(Event::Account {
                    queue: user_queue(user),
                    budget: account.budget,
                    spending,
                });
            }
            self.spending_changes
                .extend(schedule.map(|&(at_ms, rate)| (at_ms, user as u32, rate)));
        }
        self.spending_changes
            .sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    }

    /// A user's spending change that is due reaches the core as an admin's change would: an
    /// `Account` event with the balance the core holds now and the new rate.
    fn send_due_spending_changes(&mut self) {
        while let Some(&(at_ms, user, spending)) = self.spending_changes.last() {
            if at_ms > self.now {
                break;
            }
            self.spending_changes.pop();
            let queue = user_queue(user as usize);
            let budget = self
                .engine
                .as_ref()
                .and_then(|engine| engine.policy::<Dp>())
                .and_then(|dp| dp.account(&queue))
                .map_or(self.initial_budgets[user as usize], |account| {
                    account.budget
                });
            self.core_events.push(Event::Account {
                queue,
                budget,
                spending,
            });
        }
    }

    /// Records, once a job's maps are all done, how much of its map output sits on the racks
    /// SAMP preferred for it (only ShuffleWatcher prefers racks; other policies, and jobs SAMP
    /// gave every rack, record nothing).
    pub(super) fn record_preferred_output(&mut self, j: u32) {
        let Some(engine) = &self.engine else { return };
        let Some(samp) = engine
            .policy::<ShuffleWatcher>()
            .and_then(|sw| sw.job(&self.app_ids[j as usize]))
            .and_then(|placement| placement.samp.as_ref())
            .filter(|samp| !samp.preferred.is_empty())
        else {
            return;
        };
        let output = &self.jobs[j as usize].output_by_rack;
        let preferred: f64 = output
            .iter()
            .zip(&self.rack_names)
            .filter(|(_, rack)| samp.preferred.contains(*rack))
            .map(|(bytes, _)| bytes)
            .sum();
        self.collector
            .preferred_output(preferred, output.iter().sum());
    }

    fn job_stats(&self, j: u32) -> Event {
        let job = &self.jobs[j as usize];
        Event::JobStats {
            app: self.app_ids[j as usize].clone(),
            maps_total: job.maps_total,
            maps_completed: job.maps_done,
            reduces_total: job.reduces_total,
            map_input_bytes: (job.input_per_map * job.maps_done as f64) as u64,
            map_output_bytes: (job.shuffle_per_map * job.maps_done as f64) as u64,
        }
    }

    /// The job's ask rows that changed since they were last sent, in the order AM, reduce,
    /// map, and the moves of the map row's locations. A map row with maps pending is always
    /// sent: its locations move with every allocation even where its count would not tell.
    /// While the core holds the map row as last sent, it gets the row's moves since then
    /// instead of the whole tables.
    fn changed_ask_rows(&mut self, j: u32) -> (Vec<Ask>, Vec<AskMove>) {
        let resources = self.node_resources(1);
        let job = &mut self.jobs[j as usize];
        let current = [job.am_pending as u32, job.pending_reduces, job.pending_maps];
        let mut rows = Vec::new();
        let mut moves = Vec::new();
        for (row, priority) in [PRIORITY_AM, PRIORITY_REDUCE, PRIORITY_MAP]
            .into_iter()
            .enumerate()
        {
            let any = current[row];
            let is_map_row = priority == PRIORITY_MAP;
            if any == job.reported_any[row] && !(is_map_row && any > 0) {
                continue;
            }
            job.reported_any[row] = any;
            let located = is_map_row && any > 0;
            if located && job.core_holds_map_row {
                moves.push(AskMove {
                    priority: Priority(priority),
                    any,
                    hosts: std::mem::take(&mut job.hosts_moved),
                    racks: std::mem::take(&mut job.racks_moved),
                });
                continue;
            }
            if is_map_row {
                job.core_holds_map_row = located;
                job.hosts_moved.clear();
                job.racks_moved.clear();
            }
            rows.push(Ask {
                priority: Priority(priority),
                any,
                resources,
                racks: if located {
                    job.ask_racks.clone()
                } else {
                    BTreeMap::new()
                },
                hosts: if located {
                    job.ask_hosts.clone()
                } else {
                    BTreeMap::new()
                },
            });
        }
        (rows, moves)
    }
}
