//! `rackwise-sim sweep`: every (policy, offered load, seed) run, summarised per policy and load
//! as the mean and the min–max spread over seeds, each policy's maximum sustainable load, and
//! the best stock baseline per metric with every core policy's ratio to it. The definitions
//! are in docs/simulator.md ("Sweeps").

use crate::metrics::PolicyMetrics;
use crate::sim::Policy;
use serde::Serialize;
use std::collections::BTreeMap;

/// A load is sustainable while the steady throughput is at least this share of the offered rate…
pub const SUSTAINABLE_THROUGHPUT_SHARE: f64 = 0.95;
/// …and the p95 turnaround at most this multiple of its value at the lowest load swept: the
/// policy's own, or the best stock baseline's for a limit common to every policy.
pub const SUSTAINABLE_P95_GROWTH: f64 = 3.0;

/// One figure the sweep summarises, and which way is better.
pub struct Metric {
    pub name: &'static str,
    /// Column heading with its unit.
    pub heading: &'static str,
    pub higher_is_better: bool,
    pub of: fn(&PolicyMetrics) -> f64,
}

const GIB: f64 = (1u64 << 30) as f64;

/// Every summarised metric, in table order.
pub const METRICS: &[Metric] = &[
    Metric {
        name: "throughput_jobs_per_hour",
        heading: "jobs/h",
        higher_is_better: true,
        of: |m| m.throughput_jobs_per_hour,
    },
    Metric {
        name: "throughput_share_of_offered",
        heading: "% offered",
        higher_is_better: true,
        of: |m| m.throughput_share_of_offered * 100.0,
    },
    Metric {
        name: "p95_turnaround_s",
        heading: "p95 s",
        higher_is_better: false,
        of: |m| m.p95_turnaround_s,
    },
    Metric {
        name: "makespan_s",
        heading: "makespan s",
        higher_is_better: false,
        of: |m| m.makespan_s,
    },
    Metric {
        name: "cross_rack_shuffle_gib",
        heading: "xr-shfl GiB",
        higher_is_better: false,
        of: |m| m.cross_rack_shuffle_bytes as f64 / GIB,
    },
    Metric {
        name: "node_local_fraction",
        heading: "node-local",
        higher_is_better: true,
        of: |m| m.map_locality.get("node_local").copied().unwrap_or(0.0),
    },
];

/// Mean and range of one metric over seeds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
        Spread {
            mean,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// One finished run of the grid.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub policy: String,
    pub load: f64,
    pub seed: u64,
    pub metrics: PolicyMetrics,
}

/// A policy at one load, over seeds.
#[derive(Debug, Clone, Serialize)]
pub struct LoadSummary {
    pub load: f64,
    pub seeds: usize,
    /// By metric name (`METRICS`).
    pub metrics: BTreeMap<&'static str, Spread>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PolicySummary {
    pub policy: String,
    pub baseline: bool,
    pub loads: Vec<LoadSummary>,
    /// `None` when even the lowest load swept is not sustainable.
    pub max_sustainable_load: Option<f64>,
    /// The same with one p95 limit for every policy, `SUSTAINABLE_P95_GROWTH` × the best stock
    /// baseline's p95 at the lowest load: under a policy's own limit, serving a light load
    /// faster tightens it. `None` also when the sweep has no baseline.
    pub max_sustainable_load_common_limit: Option<f64>,
}

/// The best baseline for one metric at one load (or for the maximum sustainable load), and
/// each core policy's ratio to it (core ÷ best stock, on seed means).
#[derive(Debug, Clone, Serialize)]
pub struct BestStock {
    pub metric: &'static str,
    /// `None` for the maximum sustainable load.
    pub load: Option<f64>,
    pub policy: String,
    pub value: f64,
    pub ratios: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub policies: Vec<PolicySummary>,
    pub best_stock: Vec<BestStock>,
    /// The p95 limit of `max_sustainable_load_common_limit`, seconds; `None` without a baseline.
    pub common_p95_limit_s: Option<f64>,
}

/// Summarises finished runs; `policies` and `loads` give the order.
pub fn summarise(runs: &[Run], policies: &[String], loads: &[f64]) -> Summary {
    let mut loads = loads.to_vec();
    loads.sort_by(f64::total_cmp);
    let per_policy: Vec<(&String, bool, Vec<LoadSummary>)> = policies
        .iter()
        .map(|policy| {
            let per_load: Vec<LoadSummary> = loads
                .iter()
                .map(|&load| {
                    let of_load: Vec<&PolicyMetrics> = runs
                        .iter()
                        .filter(|r| &r.policy == policy && r.load == load)
                        .map(|r| &r.metrics)
                        .collect();
                    LoadSummary {
                        load,
                        seeds: of_load.len(),
                        metrics: METRICS
                            .iter()
                            .map(|m| {
                                let values: Vec<f64> = of_load.iter().map(|r| (m.of)(r)).collect();
                                (m.name, Spread::of(&values))
                            })
                            .collect(),
                    }
                })
                .collect();
            (policy, Policy::parse(policy).is_baseline(), per_load)
        })
        .collect();
    let common_p95_limit_s = per_policy
        .iter()
        .filter(|(_, baseline, _)| *baseline)
        .filter_map(|(_, _, per_load)| lowest_load_p95(per_load))
        .reduce(f64::min)
        .map(p95_limit);
    let summaries: Vec<PolicySummary> = per_policy
        .into_iter()
        .map(|(policy, baseline, per_load)| PolicySummary {
            policy: policy.clone(),
            baseline,
            max_sustainable_load: lowest_load_p95(&per_load)
                .and_then(|own| sustainable_up_to(&per_load, p95_limit(own))),
            max_sustainable_load_common_limit: common_p95_limit_s
                .and_then(|common| sustainable_up_to(&per_load, common)),
            loads: per_load,
        })
        .collect();
    let best_stock = best_stock(&summaries, &loads);
    Summary {
        policies: summaries,
        best_stock,
        common_p95_limit_s,
    }
}

/// The seed-mean p95 turnaround at the lowest load swept.
fn lowest_load_p95(per_load: &[LoadSummary]) -> Option<f64> {
    Some(per_load.first()?.metrics["p95_turnaround_s"].mean)
}

/// The highest load up to which every swept load (ascending) keeps the seed-mean throughput at
/// ≥ 95 % of the offered rate and the seed-mean p95 turnaround at ≤ `p95_limit_s` (`p95_limit`
/// of a policy's own p95 at the lowest load, or of the best stock baseline's). A load that
/// passes above one that failed does not count: a sustainable rate is one the cluster holds at
/// every lighter load too.
pub fn sustainable_up_to(per_load: &[LoadSummary], p95_limit_s: f64) -> Option<f64> {
    per_load
        .iter()
        .take_while(|l| {
            l.metrics["throughput_share_of_offered"].mean >= SUSTAINABLE_THROUGHPUT_SHARE * 100.0
                && l.metrics["p95_turnaround_s"].mean <= p95_limit_s
        })
        .last()
        .map(|l| l.load)
}

/// The highest p95 turnaround a sustainable load may have, given the p95 it is measured against.
fn p95_limit(reference_p95: f64) -> f64 {
    SUSTAINABLE_P95_GROWTH * reference_p95
}

fn better(metric: &Metric, a: f64, b: f64) -> bool {
    if metric.higher_is_better {
        a > b
    } else {
        a < b
    }
}

/// One of a policy's maximum sustainable loads (at its own limit or at the common one).
type SustainableLoad = fn(&PolicySummary) -> Option<f64>;

fn best_stock(summaries: &[PolicySummary], loads: &[f64]) -> Vec<BestStock> {
    let (stock, core): (Vec<&PolicySummary>, Vec<&PolicySummary>) =
        summaries.iter().partition(|s| s.baseline);
    if stock.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, &load) in loads.iter().enumerate() {
        for m in METRICS {
            let mean = |s: &PolicySummary| s.loads[i].metrics[m.name].mean;
            let best = stock
                .iter()
                .copied()
                .reduce(|a, b| if better(m, mean(b), mean(a)) { b } else { a })
                .expect("stock is not empty");
            out.push(BestStock {
                metric: m.name,
                load: Some(load),
                policy: best.policy.clone(),
                value: mean(best),
                ratios: core
                    .iter()
                    .map(|c| (c.policy.clone(), ratio(mean(c), mean(best))))
                    .collect(),
            });
        }
    }
    let sustainable_loads: [(&'static str, SustainableLoad); 2] = [
        ("max_sustainable_load", |s| s.max_sustainable_load),
        ("max_sustainable_load_common_limit", |s| {
            s.max_sustainable_load_common_limit
        }),
    ];
    for (metric, of) in sustainable_loads {
        let sustainable = |s: &PolicySummary| of(s).unwrap_or(0.0);
        let best = stock
            .iter()
            .copied()
            .reduce(|a, b| {
                if sustainable(b) > sustainable(a) {
                    b
                } else {
                    a
                }
            })
            .expect("stock is not empty");
        out.push(BestStock {
            metric,
            load: None,
            policy: best.policy.clone(),
            value: sustainable(best),
            ratios: core
                .iter()
                .map(|c| (c.policy.clone(), ratio(sustainable(c), sustainable(best))))
                .collect(),
        });
    }
    out
}

fn ratio(value: f64, reference: f64) -> f64 {
    if reference == 0.0 {
        f64::NAN
    } else {
        value / reference
    }
}

/// Prints the summary as text tables.
pub fn print_table(summary: &Summary) {
    let mut heading = format!("{:<16} {:>6}", "policy", "load");
    for m in METRICS {
        heading.push_str(&format!(" {:>24}", m.heading));
    }
    println!("mean [min–max] over seeds");
    println!("{heading}");
    for p in &summary.policies {
        for l in &p.loads {
            let mut row = format!("{:<16} {:>6} ", p.policy, format_load(l.load));
            for m in METRICS {
                let s = l.metrics[m.name];
                row.push_str(&format!(
                    " {:>24}",
                    format!("{} [{}–{}]", figure(s.mean), figure(s.min), figure(s.max))
                ));
            }
            println!("{row}");
        }
    }
    println!();
    println!(
        "max sustainable load (highest X with seed-mean throughput ≥ {:.0} % of offered and p95 ≤ {}× \
         its lowest-load value, at X and every lower load):",
        SUSTAINABLE_THROUGHPUT_SHARE * 100.0,
        SUSTAINABLE_P95_GROWTH
    );
    let none = || "none (not even the lowest load)".to_string();
    let common_limit = summary
        .common_p95_limit_s
        .map_or_else(String::new, |limit| format!(" ({} s)", figure(limit)));
    for p in &summary.policies {
        println!(
            "  {:<16} {:<32} at the best stock's limit{common_limit}: {}",
            p.policy,
            p.max_sustainable_load.map_or_else(none, format_load),
            p.max_sustainable_load_common_limit
                .map_or_else(none, format_load)
        );
    }
    if summary.best_stock.is_empty() {
        return;
    }
    println!();
    println!(
        "best stock (best baseline per metric and load, seed means) and each core policy ÷ it:"
    );
    for b in &summary.best_stock {
        let ratios: Vec<String> = b
            .ratios
            .iter()
            .map(|(p, r)| format!("{p} ×{r:.2}"))
            .collect();
        let (at, value) = match b.load {
            Some(load) => (format!("load {}", format_load(load)), figure(b.value)),
            None => ("any load".to_string(), format_load(b.value)),
        };
        println!(
            "  {at:<10} {:<34} best stock {} = {value}; {}",
            b.metric,
            b.policy,
            ratios.join(", ")
        );
    }
}

/// Loads print as given (1, 2.5), not as 1.000; rounded to millionths, so that an axis tick
/// computed as 1.7999999999999998 prints as 1.8.
pub fn format_load(load: f64) -> String {
    format!("{}", (load * 1e6).round() / 1e6)
}

/// Three significant-ish digits: enough to compare, few enough to read.
fn figure(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(load: f64, share_pct: f64, p95: f64) -> LoadSummary {
        let flat = |x| Spread {
            mean: x,
            min: x,
            max: x,
        };
        LoadSummary {
            load,
            seeds: 1,
            metrics: BTreeMap::from([
                ("throughput_share_of_offered", flat(share_pct)),
                ("p95_turnaround_s", flat(p95)),
            ]),
        }
    }

    #[test]
    fn sustainable_load_is_the_last_of_the_unbroken_run_of_passing_loads() {
        // 6 fails on throughput (94 % < 95 %); 8 passes again but does not count.
        let loads = [
            at(1.0, 100.0, 50.0),
            at(4.0, 97.0, 140.0),
            at(6.0, 94.0, 100.0),
            at(8.0, 99.0, 100.0),
        ];
        assert_eq!(sustainable_up_to(&loads, p95_limit(50.0)), Some(4.0));
        // p95 above 3× the reference (150 s) fails too.
        let loads = [at(1.0, 100.0, 50.0), at(2.0, 100.0, 151.0)];
        assert_eq!(sustainable_up_to(&loads, p95_limit(50.0)), Some(1.0));
        assert_eq!(
            sustainable_up_to(&[at(1.0, 80.0, 50.0)], p95_limit(50.0)),
            None
        );
    }

    fn run(policy: &str, load: f64, share: f64, p95: f64) -> Run {
        Run {
            policy: policy.to_string(),
            load,
            seed: 1,
            metrics: PolicyMetrics {
                throughput_share_of_offered: share,
                p95_turnaround_s: p95,
                ..PolicyMetrics::default()
            },
        }
    }

    #[test]
    fn a_policy_fast_on_a_light_load_keeps_the_best_stock_limit_where_its_own_is_tighter() {
        // `delay` sets the common limit (3 × 70 s = 210 s); `fair`'s own is looser (3 × 160 s).
        // The core policy's own limit is 3 × 40 s = 120 s, which X = 6 (200 s) fails and the
        // common one passes; X = 8 fails both on throughput.
        let runs = [
            run("delay", 1.0, 1.0, 70.0),
            run("delay", 6.0, 0.94, 300.0),
            run("delay", 8.0, 0.90, 400.0),
            run("fair", 1.0, 1.0, 160.0),
            run("fair", 6.0, 0.96, 450.0),
            run("fair", 8.0, 0.90, 500.0),
            run("shufflewatcher", 1.0, 1.0, 40.0),
            run("shufflewatcher", 6.0, 0.96, 200.0),
            run("shufflewatcher", 8.0, 0.94, 250.0),
        ];
        let policies = ["delay", "fair", "shufflewatcher"].map(String::from);
        let summary = summarise(&runs, &policies, &[1.0, 6.0, 8.0]);
        let loads = |name: &str| {
            let p = summary.policies.iter().find(|p| p.policy == name).unwrap();
            (p.max_sustainable_load, p.max_sustainable_load_common_limit)
        };
        assert_eq!(loads("shufflewatcher"), (Some(1.0), Some(6.0)));
        assert_eq!(loads("delay"), (Some(1.0), Some(1.0)));
        // `fair` passes X = 6 by its own limit, not by the best stock's.
        assert_eq!(loads("fair"), (Some(6.0), Some(1.0)));
        let best = |metric: &str| {
            let b = summary
                .best_stock
                .iter()
                .find(|b| b.metric == metric)
                .unwrap();
            (b.policy.clone(), b.value, b.ratios["shufflewatcher"])
        };
        assert_eq!(
            best("max_sustainable_load"),
            ("fair".to_string(), 6.0, 1.0 / 6.0)
        );
        assert_eq!(best("max_sustainable_load_common_limit").2, 6.0);
        assert_eq!(summary.common_p95_limit_s, Some(210.0));
    }

    #[test]
    fn loads_print_as_given_without_float_noise() {
        assert_eq!(format_load(24.0), "24");
        assert_eq!(format_load(0.15), "0.15");
        assert_eq!(format_load(1.7999999999999998), "1.8");
    }

    #[test]
    fn spread_is_mean_min_and_max() {
        let s = Spread::of(&[3.0, 1.0, 8.0]);
        assert_eq!((s.mean, s.min, s.max), (4.0, 1.0, 8.0));
    }
}
