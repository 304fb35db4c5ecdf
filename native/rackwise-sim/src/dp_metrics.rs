//! What a Dynamic Priority run measures per user (budget queue): its share of the market's
//! containers at every interval close against the share the market gave it, the credits it
//! spent, and its jobs' turnaround.
//!
//! The container share at a close is the queue's units held over all units the market's
//! queues hold (a snapshot, as the core charges). Its *target* is the share that was in force
//! during the interval just closed (the previous close's share). The means compare the two
//! over the **saturated** intervals only: those in which every queue of the market had a
//! positive share in force (all were eligible: active, spending, able to pay), every one of
//! them still asked for containers at the close (its demand exceeded what it got), and the
//! cluster was at least `SATURATED_BUSY` busy. Outside them a share is not a claim on anything
//! (capacity a user does not ask for is lent to the others), so comparing there would measure
//! demand, not the market.

use crate::metrics::Turnaround;
use crate::sim::user_queue;
use crate::workload::JobSpec;
use rackwise_core::protocol::MarketInterval;
use serde::Serialize;
use std::collections::BTreeMap;

/// Cluster busy fraction from which an interval counts as saturated.
pub const SATURATED_BUSY: f64 = 0.95;

/// One close as the simulator saw it.
#[derive(Debug, Clone)]
pub struct ObservedClose {
    pub interval: MarketInterval,
    /// Running containers ÷ the cluster's containers at the close.
    pub busy: f64,
    /// The queues that asked for containers at the close.
    pub asking: Vec<String>,
}

/// A Dynamic Priority run's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DpMetrics {
    /// Intervals closed, and those of them saturated (see the module's documentation).
    pub intervals: usize,
    pub saturated_intervals: usize,
    /// By queue (`root.u<k>`).
    pub users: BTreeMap<String, DpUserMetrics>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DpUserMetrics {
    /// Mean over the saturated intervals of the share in force (the spending ratio).
    pub target_share: f64,
    /// Mean over the same intervals of the queue's share of the held units at the close.
    pub mean_share: f64,
    /// `|mean_share − target_share| / target_share` (0 when the target is 0).
    pub relative_error: f64,
    /// Credits charged over the run, and the balance at the last close.
    pub spent: f64,
    pub final_budget: f64,
    pub turnaround: Turnaround,
    /// Per close: `[end s, container share, share in force, spending rate, balance]`.
    pub series: Vec<[f64; 5]>,
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The run's DP figures from its closes, `None` when no market closed an interval.
pub fn summarize(
    closes: &[ObservedClose],
    specs: &[JobSpec],
    finish_ms: &[Option<u64>],
) -> Option<DpMetrics> {
    if closes.is_empty() {
        return None;
    }
    let mut in_force: BTreeMap<&str, f64> = BTreeMap::new();
    let mut users: BTreeMap<String, DpUserMetrics> = BTreeMap::new();
    // Per queue: (Σ share, Σ target) over saturated intervals.
    let mut sums: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    let mut saturated_intervals = 0;
    for close in closes {
        let lines = &close.interval.queues;
        let held: f64 = lines.iter().map(|line| line.used).sum();
        let saturated = close.busy >= SATURATED_BUSY
            && held > 0.0
            && lines.iter().all(|line| {
                in_force.get(line.queue.as_str()).is_some_and(|s| *s > 0.0)
                    && close.asking.contains(&line.queue)
            });
        if saturated {
            saturated_intervals += 1;
        }
        for line in lines {
            let share = if held > 0.0 { line.used / held } else { 0.0 };
            let target = in_force.get(line.queue.as_str()).copied().unwrap_or(0.0);
            let user = users.entry(line.queue.clone()).or_default();
            user.spent += line.charge;
            user.final_budget = line.budget;
            user.series.push([
                close.interval.end_ms as f64 / 1000.0,
                round4(share),
                round4(target),
                line.spending,
                round4(line.budget),
            ]);
            if saturated {
                let sum = sums.entry(line.queue.as_str()).or_default();
                sum.0 += share;
                sum.1 += target;
            }
        }
        for line in lines {
            in_force.insert(line.queue.as_str(), line.share);
        }
    }
    for (queue, user) in users.iter_mut() {
        let (share, target) = sums.get(queue.as_str()).copied().unwrap_or_default();
        if saturated_intervals > 0 {
            user.mean_share = round4(share / saturated_intervals as f64);
            user.target_share = round4(target / saturated_intervals as f64);
        }
        user.relative_error = if target > 0.0 {
            round4((share - target).abs() / target)
        } else {
            0.0
        };
        user.spent = round4(user.spent);
        user.turnaround = Turnaround::of(
            specs
                .iter()
                .zip(finish_ms)
                .filter(|(spec, _)| user_queue(spec.user) == *queue)
                .filter_map(|(spec, finish)| finish.map(|f| (f - spec.submit_ms) as f64 / 1000.0))
                .collect(),
        );
    }
    Some(DpMetrics {
        intervals: closes.len(),
        saturated_intervals,
        users,
    })
}
