//! Dynamic Priority (Sandholm & Lai, JSSPP 2010): a market for a parent queue's capacity.
//!
//! A parent queue with `<rackwise><policy>dp</policy>` is a market and each of its children
//! (one per user) a budget queue with a budget `b` (credits) and a spending rate `s` (credits
//! per resource unit per allocation interval). At the close of every interval the market
//!
//! 1. charges each child `s × (units it holds within its share)`, at most its budget, so that a
//!    budget never goes below 0 and capacity a child gets beyond its share (FairScheduler's
//!    work conservation) is free;
//! 2. finds the children that are *eligible*: active (holding units or asking for containers),
//!    spending more than 0, and able to pay another interval at their current charged usage
//!    (at least one unit);
//! 3. sets the price `P = Σ s` over the eligible children and each eligible child's share to
//!    `s / P`; every other child's share is 0. One eligibility rule serves price and share, so
//!    the shares sum to 1 whenever anyone is eligible.
//!
//! The shares are the children's FairScheduler weights: FairScheduler's fair shares, work
//! conservation and fair-share preemption enforce them. A child with weight 0 runs only on
//! capacity nobody with a positive share wants. Usage is the snapshot at the close, as the
//! contrib scheduler of Hadoop 0.21 measured it; `now` comes from the offer, so a market is a
//! deterministic function of the offers it saw.

use crate::policy::{Context, Policy, Turn};
use crate::protocol::{MarketInterval, PlanEntry, QueueAccount, QueueWeight, Resources};
use crate::settings::{params::no_check, Declaration, Param, ParamValues};
use crate::state::{ClusterState, Observation};
use std::collections::BTreeMap;

const INTERVAL_MS: &str = "intervalMs";
const BUDGET: &str = "budget";
const SPENDING: &str = "spending";
const UNIT_MEMORY_MB: &str = "unitMemoryMb";
const UNIT_VCORES: &str = "unitVcores";

/// The `<rackwise>` elements of a `dp` parent queue.
const QUEUE_PARAMS: &[Param] = &[
    Param::whole(
        INTERVAL_MS,
        20_000.0,
        1_000.0,
        3_600_000.0,
        "length of an allocation interval: shares are recomputed and usage charged at its close",
    ),
    Param::number(
        BUDGET,
        0.0,
        (0.0, false),
        1.0e15,
        "credits a user queue starts with when it first appears (an admin or the ledger sets more)",
    ),
    Param::number(
        SPENDING,
        1.0,
        (0.0, false),
        1.0e12,
        "spending rate a user queue starts with: credits per resource unit per interval",
    ),
    Param::whole(
        UNIT_MEMORY_MB,
        0.0,
        0.0,
        1.0e9,
        "memory of one priced resource unit; 0 = the scheduler's minimum allocation",
    ),
    Param::whole(
        UNIT_VCORES,
        0.0,
        0.0,
        1.0e6,
        "virtual cores of one priced resource unit; 0 = the scheduler's minimum allocation",
    ),
];

/// A market's parameters, read from its declared values.
#[derive(Debug, Clone, PartialEq)]
struct Params {
    interval_ms: u64,
    initial_budget: f64,
    initial_spending: f64,
    /// 0 in a dimension: the scheduler's minimum allocation.
    unit: Resources,
}

impl Params {
    fn of(values: &ParamValues) -> Params {
        Params {
            interval_ms: values.number(INTERVAL_MS) as u64,
            initial_budget: values.number(BUDGET),
            initial_spending: values.number(SPENDING),
            unit: Resources {
                memory_mb: values.number(UNIT_MEMORY_MB) as u64,
                vcores: values.number(UNIT_VCORES) as u32,
            },
        }
    }
}

/// The resource unit containers are priced in: the configured one, each dimension left at 0
/// taken from the scheduler's minimum allocation.
fn resource_unit(configured: Resources, minimum_allocation: Resources) -> Resources {
    Resources {
        memory_mb: if configured.memory_mb > 0 {
            configured.memory_mb
        } else {
            minimum_allocation.memory_mb
        },
        vcores: if configured.vcores > 0 {
            configured.vcores
        } else {
            minimum_allocation.vcores
        },
    }
}

/// Each dimension of `resources` in units (`None` for a dimension the unit leaves at 0).
fn unit_ratios(resources: Resources, unit: Resources) -> impl Iterator<Item = f64> {
    let memory = (unit.memory_mb > 0).then(|| resources.memory_mb as f64 / unit.memory_mb as f64);
    let vcores = (unit.vcores > 0).then(|| f64::from(resources.vcores) / f64::from(unit.vcores));
    memory.into_iter().chain(vcores)
}

/// The units a container takes: its largest dimension in units (a container twice the unit's
/// memory costs two), or 1 when the unit is all zero (a container is a unit, the paper's slot).
pub fn container_units(resources: Resources, unit: Resources) -> f64 {
    unit_ratios(resources, unit).reduce(f64::max).unwrap_or(1.0)
}

/// The units a capacity holds: its scarcest dimension in units (what fits), or `None` when
/// the unit is all zero and so the capacity is counted in containers, which the nodes' size
/// alone does not tell.
fn capacity_units(resources: Resources, unit: Resources) -> Option<f64> {
    unit_ratios(resources, unit).reduce(f64::min)
}

/// A budget queue's account.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Account {
    /// Credits left; never below 0.
    pub budget: f64,
    /// Credits per resource unit per interval.
    pub spending: f64,
    /// The share in force until the next close (0 until the queue is eligible).
    pub share: f64,
}

/// What a budget queue holds and asks for at an interval's close.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// Resource units of its running containers.
    pub units: f64,
    /// Containers it asks for.
    pub pending: u64,
}

/// Closes one interval of a market: charges every account for its usage within its share of
/// `capacity_units`, then sets the shares for the next interval. Returns the price and each
/// account's line (in `accounts`' order). A queue missing from `usage` held and asked nothing.
pub fn settle(
    accounts: &mut BTreeMap<String, Account>,
    usage: &BTreeMap<String, Usage>,
    capacity_units: f64,
) -> (f64, Vec<QueueAccount>) {
    let mut lines = Vec::with_capacity(accounts.len());
    let mut eligible = Vec::with_capacity(accounts.len());
    for (queue, account) in accounts.iter_mut() {
        let used = usage.get(queue).copied().unwrap_or_default();
        let charged_units = used.units.min(account.share * capacity_units);
        let charge = (account.spending * charged_units).min(account.budget);
        account.budget -= charge;
        let active = used.units > 0.0 || used.pending > 0;
        let can_pay = account.budget >= account.spending * charged_units.max(1.0);
        eligible.push(active && account.spending > 0.0 && can_pay);
        lines.push(QueueAccount {
            queue: queue.clone(),
            budget: account.budget,
            spending: account.spending,
            used: used.units,
            charged_units,
            charge,
            share: 0.0,
        });
    }
    let price: f64 = accounts
        .values()
        .zip(&eligible)
        .filter(|(_, eligible)| **eligible)
        .map(|(account, _)| account.spending)
        .sum();
    for ((account, line), eligible) in accounts.values_mut().zip(&mut lines).zip(&eligible) {
        account.share = if *eligible && price > 0.0 {
            account.spending / price
        } else {
            0.0
        };
        line.share = account.share;
    }
    (price, lines)
}

/// One market's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Clock {
    /// When the interval in progress closes.
    closes_ms: u64,
    /// The number of the last close (0: the opening).
    sequence: u64,
    price: f64,
}

/// The Dynamic Priority policy's memory: every budget queue's account, and each market's clock.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dp {
    /// By full queue name; a queue's market is its parent.
    accounts: BTreeMap<String, Account>,
    markets: BTreeMap<String, Clock>,
    /// Intervals closed since the engine last asked.
    closed: Vec<MarketInterval>,
}

impl Dp {
    /// The account of a budget queue, if it has one.
    pub fn account(&self, queue: &str) -> Option<&Account> {
        self.accounts.get(queue)
    }

    /// A market's current price (`None` before its opening).
    pub fn price(&self, market: &str) -> Option<f64> {
        self.markets.get(market).map(|clock| clock.price)
    }

    /// The budget queue of `market` that `queue` is in (the child on its path), if any.
    fn child_of<'q>(market: &str, queue: &'q str) -> Option<&'q str> {
        let rest = queue.strip_prefix(market)?.strip_prefix('.')?;
        let child_len = market.len() + 1 + rest.find('.').unwrap_or(rest.len());
        Some(&queue[..child_len])
    }

    /// Every child of `market` that holds or asks for something, with its usage in `unit`s.
    fn usage(state: &ClusterState, market: &str, unit: Resources) -> BTreeMap<String, Usage> {
        let mut usage: BTreeMap<String, Usage> = BTreeMap::new();
        for app in state.apps.values() {
            if let Some(child) = Dp::child_of(market, &app.queue) {
                let pending: u64 = app.asks.values().map(|ask| u64::from(ask.any)).sum();
                usage.entry(child.to_string()).or_default().pending += pending;
            }
        }
        for container in state.containers.values() {
            let Some(app) = state.apps.get(&container.app) else {
                continue;
            };
            if let Some(child) = Dp::child_of(market, &app.queue) {
                usage.entry(child.to_string()).or_default().units +=
                    container_units(container.resources, unit);
            }
        }
        usage
    }

    /// Opens `market` at its first offer, or closes its interval in progress when due; the
    /// interval opened or closed, if any (its lines carry the new shares).
    fn tick(
        &mut self,
        context: &Context,
        market: &str,
        params: &Params,
        now_ms: u64,
    ) -> Option<MarketInterval> {
        let clock = self.markets.get(market).copied();
        if clock.is_some_and(|clock| now_ms < clock.closes_ms) {
            return None;
        }
        let unit = resource_unit(params.unit, context.settings.minimum_allocation);
        let usage = Dp::usage(context.state, market, unit);
        // A child gets its account when it first holds or asks for something.
        for child in usage.keys() {
            self.accounts.entry(child.clone()).or_insert(Account {
                budget: params.initial_budget,
                spending: params.initial_spending,
                share: 0.0,
            });
        }
        let cluster: Resources =
            context
                .state
                .nodes
                .values()
                .fold(Resources::default(), |total, node| Resources {
                    memory_mb: total.memory_mb + node.capacity.memory_mb,
                    vcores: total.vcores + node.capacity.vcores,
                });
        // With no unit a container is one unit, and the capacity is what runs: the nodes' size
        // cannot tell how many containers fit.
        let containers = context.state.containers.len() as f64;
        let capacity = capacity_units(cluster, unit).unwrap_or(containers);
        let mut accounts: BTreeMap<String, Account> = self
            .accounts
            .iter()
            .filter(|(queue, _)| Dp::child_of(market, queue) == Some(queue.as_str()))
            .map(|(queue, account)| (queue.clone(), *account))
            .collect();
        if clock.is_none() {
            // The opening charges nothing: no share was in force.
            for account in accounts.values_mut() {
                account.share = 0.0;
            }
        }
        let (price, queues) = settle(&mut accounts, &usage, capacity);
        self.accounts.extend(accounts);
        let sequence = clock.map_or(0, |clock| clock.sequence + 1);
        self.markets.insert(
            market.to_string(),
            Clock {
                closes_ms: now_ms + params.interval_ms,
                sequence,
                price,
            },
        );
        Some(MarketInterval {
            market: market.to_string(),
            sequence,
            end_ms: now_ms,
            price,
            queues,
        })
    }
}

impl Policy for Dp {
    fn declaration(&self) -> Declaration {
        Declaration {
            name: "dp",
            queue_params: QUEUE_PARAMS,
            cluster_params: &[],
            check: no_check,
            steers: false,
            reads_netsat: false,
            starvation_guard_ms: None,
        }
    }

    fn observe(&mut self, _context: &Context, observation: &Observation) {
        if let Observation::Account {
            queue,
            budget,
            spending,
        } = observation
        {
            let account = self.accounts.entry(queue.clone()).or_insert(Account {
                budget: 0.0,
                spending: 0.0,
                share: 0.0,
            });
            account.budget = *budget;
            account.spending = *spending;
        }
    }

    fn rank(&mut self, _turn: &Turn, _entries: &mut Vec<PlanEntry>) {}

    fn queue_weights(&mut self, context: &Context, now_ms: u64) -> Vec<QueueWeight> {
        let mut weights = Vec::new();
        for (market, values) in context.own_queues() {
            let params = values.typed(Params::of);
            if let Some(interval) = self.tick(context, market, params, now_ms) {
                weights.extend(interval.queues.iter().map(|line| QueueWeight {
                    queue: line.queue.clone(),
                    weight: line.share,
                }));
                // The opening charges nothing and so is no ledger entry.
                if interval.sequence > 0 {
                    self.closed.push(interval);
                }
            }
        }
        weights
    }

    fn closed_intervals(&mut self) -> Vec<MarketInterval> {
        std::mem::take(&mut self.closed)
    }
}

#[cfg(test)]
mod tests;
