//! What a run measured, and how the headline figures are derived from it.

use crate::cluster::Cluster;
use crate::dp_metrics::{self, DpMetrics, ObservedClose};
use crate::oracle::CrossRackBounds;
use crate::sim::{CONGESTION_THRESHOLD, SAMPLE_MS};
use crate::workload::{JobSpec, ShuffleClass};
use rackwise_core::protocol::{Locality, MarketInterval};
use serde::Serialize;
use std::collections::BTreeMap;

/// Turnaround statistics of a set of jobs, seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Turnaround {
    pub jobs: usize,
    pub mean_s: f64,
    pub median_s: f64,
    pub p95_s: f64,
}

impl Turnaround {
    pub(crate) fn of(mut values: Vec<f64>) -> Turnaround {
        if values.is_empty() {
            return Turnaround::default();
        }
        values.sort_by(f64::total_cmp);
        Turnaround {
            jobs: values.len(),
            mean_s: round3(values.iter().sum::<f64>() / values.len() as f64),
            median_s: round3(percentile(&values, 0.5)),
            p95_s: round3(percentile(&values, 0.95)),
        }
    }
}

/// Linear interpolation between closest ranks (as the traces README computes percentiles).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Millisecond-level noise is not information; rounding keeps the JSON readable.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The per-policy figures of `compare`'s JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PolicyMetrics {
    pub jobs: usize,
    pub throughput_jobs_per_hour: f64,
    /// The NAS paper's throughput: every job divided by the time to run them all (§IV-B, "the
    /// number of jobs (i.e., 24442) divided by the total time to run all the jobs"), i.e.
    /// `jobs / makespan`. Unlike the steady-state figure it counts the drain after the last
    /// arrival, so policies differ on it even when the cluster keeps up with arrivals.
    pub throughput_all_jobs_per_hour: f64,
    pub mean_turnaround_s: f64,
    pub median_turnaround_s: f64,
    pub p95_turnaround_s: f64,
    pub turnaround_by_class: BTreeMap<String, Turnaround>,
    pub cross_rack_bytes: u64,
    pub cross_rack_shuffle_bytes: u64,
    pub cross_rack_remote_map_bytes: u64,
    pub cross_rack_output_bytes: u64,
    pub congestion_events: u64,
    pub congested_rack_samples: u64,
    pub jain_fairness: f64,
    /// Jain's index of the finished jobs' overall resource use (FRESH's overall fairness).
    pub overall_fairness: f64,
    pub makespan_s: f64,
    pub container_utilization: f64,
    /// Share of placed maps by locality; `node_local` is the node-local fraction.
    pub map_locality: BTreeMap<String, f64>,
    /// Jobs submitted (finished or not).
    pub arrivals: usize,
    /// Seconds from the first to the last arrival.
    pub arrival_window_s: f64,
    /// Arrivals per hour over the same middle 80 % as the steady-state throughput (the 10th to
    /// the 90th percentile of arrival times), so the two compare like for like.
    pub offered_jobs_per_hour: f64,
    /// `throughput_jobs_per_hour / offered_jobs_per_hour`: 1 when the cluster keeps up.
    pub throughput_share_of_offered: f64,
    /// Jobs finished by the last arrival, per hour of the arrival window.
    pub window_jobs_per_hour: f64,
    /// Jobs finished by the last arrival, as a share of all arrivals (jobs still running at the
    /// last arrival count against it even on an idle cluster: see docs/simulator.md).
    pub window_completed_share: f64,
    /// Node heartbeats offered to the scheduler, and those that placed no container although
    /// work was pending (the simulator offers only then).
    pub offers: u64,
    pub offers_placing_nothing: u64,
    /// Container-seconds left unused by the offers that placed nothing: each leaves its
    /// node's free containers idle until the node's next heartbeat although work was pending,
    /// the capacity a policy's holds (or delay's locality wait) cost.
    pub idle_container_s_placing_nothing: f64,
    /// Vetoes the core's starvation guard lifted, summed over offers (one per app per offer,
    /// from the core's `Diagnostics::starved`); 0 for the baselines.
    pub guard_lifts: u64,
    /// Where the jobs' map output landed relative to the racks SAMP preferred for them; only
    /// ShuffleWatcher names preferred racks, so `None` for every other policy.
    pub preferred_racks: Option<PreferredRacks>,
    /// The finished jobs' cross-rack shuffle as placed and under the oracles of
    /// `crate::oracle`, bytes (docs/simulator.md, "Cross-rack shuffle: oracle bounds").
    pub cross_rack_shuffle_bounds: CrossRackBounds,
    /// Per user of a Dynamic Priority market: container share against target, credits spent,
    /// turnaround (`crate::dp_metrics`); left out when no market closed an interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dp: Option<DpMetrics>,
}

/// Map output on the job's preferred racks, measured when its last map finished.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PreferredRacks {
    /// Jobs with a shuffle for which SAMP chose racks.
    pub jobs: usize,
    /// Mean over those jobs of the share of each job's map output on its preferred racks.
    pub mean_job_share: f64,
    /// All their map output bytes on preferred racks ÷ all their map output bytes.
    pub byte_share: f64,
}

/// Accumulates a run's observations.
#[derive(Debug, Clone)]
pub struct Collector {
    pub first_submit_ms: Option<u64>,
    pub finish_ms: Vec<Option<u64>>,
    /// Container-time of each finished job (ms).
    pub busy_ms: Vec<u64>,
    /// Cross-rack bytes per simulated minute: (shuffle, remote map, output replication).
    pub timeline: Vec<(f64, f64, f64)>,
    cross: (f64, f64, f64),
    congested: Vec<bool>,
    congestion_events: u64,
    congested_samples: u64,
    jain_sum: f64,
    jain_samples: u64,
    utilization_sum: f64,
    utilization_samples: u64,
    locality: [u64; 3],
    offers: u64,
    offers_placing_nothing: u64,
    idle_container_ms_placing_nothing: u64,
    guard_lifts: u64,
    /// Per job with a SAMP choice: (map output bytes on its preferred racks, all of them).
    preferred_output: Vec<(f64, f64)>,
    shuffle_bounds: CrossRackBounds,
    dp_closes: Vec<ObservedClose>,
}

impl Collector {
    pub fn new(cluster: &Cluster, specs: &[JobSpec], _users: usize) -> Collector {
        Collector {
            first_submit_ms: None,
            finish_ms: vec![None; specs.len()],
            busy_ms: vec![0; specs.len()],
            timeline: Vec::new(),
            cross: (0.0, 0.0, 0.0),
            congested: vec![false; cluster.racks],
            congestion_events: 0,
            congested_samples: 0,
            jain_sum: 0.0,
            jain_samples: 0,
            utilization_sum: 0.0,
            utilization_samples: 0,
            locality: [0; 3],
            offers: 0,
            offers_placing_nothing: 0,
            idle_container_ms_placing_nothing: 0,
            guard_lifts: 0,
            preferred_output: Vec::new(),
            shuffle_bounds: CrossRackBounds::default(),
            dp_closes: Vec::new(),
        }
    }

    pub fn cross_rack(&mut self, minute: usize, shuffle: f64, remote_map: f64, output: f64) {
        if self.timeline.len() <= minute {
            self.timeline.resize(minute + 1, (0.0, 0.0, 0.0));
        }
        let slot = &mut self.timeline[minute];
        slot.0 += shuffle;
        slot.1 += remote_map;
        slot.2 += output;
        self.cross.0 += shuffle;
        self.cross.1 += remote_map;
        self.cross.2 += output;
    }

    pub fn map_placed(&mut self, locality: Locality) {
        let i = match locality {
            Locality::NodeLocal => 0,
            Locality::RackLocal => 1,
            Locality::OffSwitch => 2,
        };
        self.locality[i] += 1;
    }

    /// One offer ended; `placed` containers were allocated on it, which had `free` free
    /// containers that stay as they are until its next heartbeat, `heartbeat_ms` later.
    pub fn offer_done(&mut self, placed: u64, free: u32, heartbeat_ms: u64) {
        self.offers += 1;
        if placed == 0 {
            self.offers_placing_nothing += 1;
            self.idle_container_ms_placing_nothing += u64::from(free) * heartbeat_ms;
        }
    }

    /// The core's starvation guard lifted the vetoes of `apps` apps in one offer.
    pub fn guard_lifted(&mut self, apps: usize) {
        self.guard_lifts += apps as u64;
    }

    /// A job's maps are all done: `preferred` of its `total` map output bytes sit on the racks
    /// its policy preferred.
    pub fn preferred_output(&mut self, preferred: f64, total: f64) {
        self.preferred_output.push((preferred, total));
    }

    /// A job with reduces finished; `bounds` are its cross-rack shuffle figures.
    pub fn cross_rack_bounds(&mut self, bounds: &CrossRackBounds) {
        self.shuffle_bounds.add(bounds);
    }

    /// A Dynamic Priority market closed `interval` with the cluster `busy` (a fraction) and
    /// the queues `asking` asking for containers.
    pub fn dp_close(&mut self, interval: MarketInterval, busy: f64, asking: Vec<String>) {
        self.dp_closes.push(ObservedClose {
            interval,
            busy,
            asking,
        });
    }

    pub fn job_done(&mut self, job: usize, now_ms: u64, busy_ms: u64) {
        self.finish_ms[job] = Some(now_ms);
        self.busy_ms[job] = busy_ms;
    }

    /// FRESH's overall fairness at the end of the run: Jain's index over the finished jobs of
    /// each one's container-time per unit of its time in the system (`finish − submit`).
    fn overall_fairness(&self, specs: &[JobSpec]) -> f64 {
        let uses: Vec<f64> = specs
            .iter()
            .zip(&self.finish_ms)
            .zip(&self.busy_ms)
            .filter_map(|((spec, finish), busy)| {
                let finish = (*finish)?;
                Some(rackwise_core::policy::fresh::fairness::resource_use(
                    *busy,
                    spec.submit_ms,
                    finish,
                ))
            })
            .collect();
        round3(rackwise_core::policy::fresh::fairness::jain(&uses).unwrap_or(1.0))
    }

    /// One sample period: rack link utilizations, running containers of each user with
    /// pending demand, and the busy fraction of all containers.
    pub fn sample(&mut self, rack_utilization: &[f64], demanding_running: &[f64], busy: f64) {
        for (r, u) in rack_utilization.iter().enumerate() {
            let over = *u > CONGESTION_THRESHOLD;
            if over {
                self.congested_samples += 1;
                if !self.congested[r] {
                    self.congestion_events += 1;
                }
            }
            self.congested[r] = over;
        }
        let sum: f64 = demanding_running.iter().sum();
        let squares: f64 = demanding_running.iter().map(|x| x * x).sum();
        if demanding_running.len() > 1 && squares > 0.0 {
            self.jain_sum += sum * sum / (demanding_running.len() as f64 * squares);
            self.jain_samples += 1;
        }
        self.utilization_sum += busy;
        self.utilization_samples += 1;
    }

    /// Turnaround (finish − submit) of every finished job, seconds, in job order.
    pub fn turnarounds(&self, specs: &[JobSpec]) -> Vec<(ShuffleClass, f64)> {
        specs
            .iter()
            .zip(&self.finish_ms)
            .filter_map(|(spec, f)| f.map(|f| (spec.class, (f - spec.submit_ms) as f64 / 1000.0)))
            .collect()
    }

    pub fn finish(&self, specs: &[JobSpec]) -> PolicyMetrics {
        let turnarounds = self.turnarounds(specs);
        let all = Turnaround::of(turnarounds.iter().map(|(_, t)| *t).collect());
        let mut by_class = BTreeMap::new();
        for class in ShuffleClass::ALL {
            let values: Vec<f64> = turnarounds
                .iter()
                .filter(|(c, _)| *c == class)
                .map(|(_, t)| *t)
                .collect();
            by_class.insert(class.name().to_string(), Turnaround::of(values));
        }
        let mut finishes: Vec<u64> = self.finish_ms.iter().flatten().copied().collect();
        finishes.sort_unstable();
        let first = self.first_submit_ms.unwrap_or(0);
        let makespan_s = finishes.last().map_or(0.0, |l| (l - first) as f64 / 1000.0);
        let all_jobs = if makespan_s > 0.0 {
            finishes.len() as f64 / (makespan_s / 3600.0)
        } else {
            0.0
        };
        let throughput = steady_rate_per_hour(&finishes).unwrap_or(all_jobs);
        let mut arrivals: Vec<u64> = specs.iter().map(|s| s.submit_ms).collect();
        arrivals.sort_unstable();
        let (first_arrival, last_arrival) = (
            arrivals.first().copied().unwrap_or(0),
            arrivals.last().copied().unwrap_or(0),
        );
        let window_h = (last_arrival - first_arrival) as f64 / 3_600_000.0;
        let offered = steady_rate_per_hour(&arrivals).unwrap_or(if window_h > 0.0 {
            arrivals.len() as f64 / window_h
        } else {
            0.0
        });
        let finished_in_window = finishes.partition_point(|&f| f <= last_arrival);
        let preferred_racks = (!self.preferred_output.is_empty()).then(|| {
            let shares: Vec<f64> = self
                .preferred_output
                .iter()
                .map(|(on, all)| if *all > 0.0 { on / all } else { 1.0 })
                .collect();
            let on: f64 = self.preferred_output.iter().map(|(on, _)| on).sum();
            let all: f64 = self.preferred_output.iter().map(|(_, all)| all).sum();
            PreferredRacks {
                jobs: shares.len(),
                mean_job_share: round3(shares.iter().sum::<f64>() / shares.len() as f64),
                byte_share: if all > 0.0 { round3(on / all) } else { 1.0 },
            }
        });
        let placed: u64 = self.locality.iter().sum();
        let share = |i: usize| {
            if placed == 0 {
                0.0
            } else {
                round3(self.locality[i] as f64 / placed as f64)
            }
        };
        PolicyMetrics {
            jobs: finishes.len(),
            throughput_jobs_per_hour: round3(throughput),
            throughput_all_jobs_per_hour: round3(all_jobs),
            mean_turnaround_s: all.mean_s,
            median_turnaround_s: all.median_s,
            p95_turnaround_s: all.p95_s,
            turnaround_by_class: by_class,
            cross_rack_bytes: (self.cross.0 + self.cross.1 + self.cross.2).round() as u64,
            cross_rack_shuffle_bytes: self.cross.0.round() as u64,
            cross_rack_remote_map_bytes: self.cross.1.round() as u64,
            cross_rack_output_bytes: self.cross.2.round() as u64,
            congestion_events: self.congestion_events,
            congested_rack_samples: self.congested_samples,
            jain_fairness: if self.jain_samples == 0 {
                1.0
            } else {
                round3(self.jain_sum / self.jain_samples as f64)
            },
            overall_fairness: self.overall_fairness(specs),
            makespan_s: round3(makespan_s),
            container_utilization: if self.utilization_samples == 0 {
                0.0
            } else {
                round3(self.utilization_sum / self.utilization_samples as f64)
            },
            map_locality: BTreeMap::from([
                ("node_local".to_string(), share(0)),
                ("rack_local".to_string(), share(1)),
                ("off_switch".to_string(), share(2)),
            ]),
            arrivals: arrivals.len(),
            arrival_window_s: round3(window_h * 3600.0),
            offered_jobs_per_hour: round3(offered),
            throughput_share_of_offered: if offered > 0.0 {
                round3(throughput / offered)
            } else {
                0.0
            },
            window_jobs_per_hour: if window_h > 0.0 {
                round3(finished_in_window as f64 / window_h)
            } else {
                0.0
            },
            window_completed_share: if arrivals.is_empty() {
                0.0
            } else {
                round3(finished_in_window as f64 / arrivals.len() as f64)
            },
            offers: self.offers,
            offers_placing_nothing: self.offers_placing_nothing,
            idle_container_s_placing_nothing: round3(
                self.idle_container_ms_placing_nothing as f64 / 1000.0,
            ),
            guard_lifts: self.guard_lifts,
            preferred_racks,
            cross_rack_shuffle_bounds: self.shuffle_bounds.rounded(),
            dp: dp_metrics::summarize(&self.dp_closes, specs, &self.finish_ms),
        }
    }
}

/// Events per hour between the 10th and the 90th percentile of `sorted` times (ms), so a ramp-up
/// and a drain are left out; `None` with fewer than 10 events or no time between them.
fn steady_rate_per_hour(sorted: &[u64]) -> Option<f64> {
    if sorted.len() < 10 {
        return None;
    }
    let (lo, hi) = (sorted.len() / 10, sorted.len() * 9 / 10);
    let span_ms = sorted[hi] - sorted[lo];
    (span_ms > 0).then(|| (hi - lo) as f64 / (span_ms as f64 / 3_600_000.0))
}

/// Seconds of one sample period, for documentation of the congestion count.
pub const SAMPLE_SECONDS: f64 = SAMPLE_MS as f64 / 1000.0;
