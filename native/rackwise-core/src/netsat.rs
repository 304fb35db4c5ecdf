//! NetSat: is a rack's cross-rack link saturated?
//!
//! ShuffleWatcher measures the cross-rack MapReduce traffic of each rack (shuffle fetches,
//! remote map reads, reduce output replication) against the rack's link capacity and calls the
//! rack saturated above a threshold (80 %). YARN reports no network figures to the RM, so the
//! default source is a model estimate built from what the core knows is moving:
//!
//! * a running reduce pulls its share of the job's predicted map output at `fetch-mbps`; the
//!   part held by maps on other racks crosses the reduce's rack link inbound and those racks'
//!   links outbound, in proportion to where the job's maps finished. It stops counting once
//!   its predicted input would have arrived at that rate.
//! * a map placed off-switch reads one split from another rack at `fetch-mbps` for as long as
//!   a split of the job's mean input size takes.
//!
//! With `netsat.source=feed`, measurements from an operator's feed (`rack_load` events and the
//! `cross_rack_mbps` of `host_figures` events) replace the estimate while they are fresher than
//! `netsat.feed-max-age-ms`; a rack whose figures went stale is estimated again, with a warning.

use crate::mapreduce::TaskKind;
use crate::protocol::{AppId, Locality, RackName};
use crate::settings::{LoadSource, Settings};
use crate::state::{moving_mean, App, ClusterState, MeasuredLoad};
use std::collections::{BTreeMap, BTreeSet};

/// Estimated cross-rack traffic of one rack, in Mbit/s each way.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RackTraffic {
    pub inbound_mbps: f64,
    pub outbound_mbps: f64,
}

/// The model estimate of every rack's cross-rack traffic at `now_ms`, for the racks with nodes.
///
/// Sampled every `netsat.period-ms` over every running container, so it is written for the
/// simulator's full days as much as for the RM: racks are positions in the sorted rack list, a
/// job's sources are worked out once for its run of containers (containers are ordered by id,
/// and so by app), and no rack name is cloned or searched per container and source rack.
pub fn estimate_traffic(
    state: &ClusterState,
    settings: &Settings,
    now_ms: u64,
) -> BTreeMap<RackName, RackTraffic> {
    let racks: Vec<&RackName> = state.racks().collect();
    let position = |rack: &RackName| racks.binary_search(&rack).ok();
    let mut traffic = vec![RackTraffic::default(); racks.len()];
    let fetch_mbps = settings.netsat.fetch_mbps;
    let mut job_sources: Option<(&AppId, JobSources)> = None;
    for container in state.containers.values() {
        let remote_map =
            container.kind == TaskKind::Map && container.locality == Locality::OffSwitch;
        if container.kind != TaskKind::Reduce && !remote_map {
            continue;
        }
        if job_sources
            .as_ref()
            .is_none_or(|(app, _)| *app != &container.app)
        {
            job_sources = state
                .apps
                .get(&container.app)
                .map(|app| (&container.app, JobSources::of(app, settings, &position)));
        }
        let Some((_, sources)) = &job_sources else {
            continue;
        };
        let bytes = if remote_map {
            sources.split_bytes
        } else {
            sources.reduce_bytes
        };
        let elapsed_ms = now_ms.saturating_sub(container.start_ms) as f64;
        if elapsed_ms >= transfer_ms(bytes, fetch_mbps) {
            continue;
        }
        let here = position(&container.rack);
        let mut inbound = 0.0;
        let mut pull = |source: usize, share: f64| {
            if Some(source) != here {
                let mbps = fetch_mbps * share;
                inbound += mbps;
                traffic[source].outbound_mbps += mbps;
            }
        };
        match (&sources.output_shares, remote_map) {
            // Where the job's maps finished, each other rack's share of the output.
            (Some(shares), false) => shares
                .iter()
                .for_each(|&(source, share)| pull(source, share)),
            // Before any map finished, an even spread over all racks (the reduce's own share
            // stays on its rack).
            (None, false) => {
                let share = 1.0 / racks.len().max(1) as f64;
                (0..racks.len()).for_each(|source| pull(source, share));
            }
            // A remote map's split comes from a rack we cannot see: spread over the other racks.
            (_, true) => {
                let others = racks.len() - usize::from(here.is_some());
                let share = 1.0 / others.max(1) as f64;
                (0..racks.len()).for_each(|source| pull(source, share));
            }
        }
        if let Some(here) = here {
            traffic[here].inbound_mbps += inbound;
        }
    }
    racks.into_iter().cloned().zip(traffic).collect()
}

/// What a job's running reduces and remote maps move, worked out once per estimate.
struct JobSources {
    /// A reduce's share of the job's predicted map output.
    reduce_bytes: f64,
    /// One split of the job's mean input size.
    split_bytes: f64,
    /// Each rack's share of the job's finished map output (racks in position order; racks no
    /// node is on any more are left out: no reduce fetches through their links); `None` before
    /// any map finished.
    output_shares: Option<Vec<(usize, f64)>>,
}

impl JobSources {
    fn of(app: &App, settings: &Settings, position: &impl Fn(&RackName) -> Option<usize>) -> Self {
        let job = &app.job;
        let split_bytes = job.input_bytes_per_map(settings.default_map_input_bytes);
        let maps = job.known_maps(app.pending(TaskKind::Map)) as f64;
        let reduces = job.known_reduces(app.pending(TaskKind::Reduce)).max(1) as f64;
        let finished = job.finished_maps();
        JobSources {
            reduce_bytes: job.estimate.ratio * split_bytes * maps / reduces,
            split_bytes,
            output_shares: (finished > 0).then(|| {
                job.finished_maps_by_rack
                    .iter()
                    .filter_map(|(rack, count)| {
                        position(rack).map(|at| (at, *count as f64 / finished as f64))
                    })
                    .collect()
            }),
        }
    }
}

/// The NetSat monitor: samples every rack's load at most once per `netsat.period-ms` and keeps
/// a moving average per rack (weight `netsat.smoothing` for the newest sample), so one burst
/// does not flip a rack's state and the model is not re-estimated on every offer.
#[derive(Debug, Clone, Default)]
pub struct NetSat {
    last_sample_ms: Option<u64>,
    smoothed: BTreeMap<RackName, f64>,
    /// The rack last read with its figure in `smoothed`, until the next sample: every offer
    /// reads its node's rack, and offers come in heartbeat order, in which a rack's nodes
    /// mostly follow one another, so most reads need no search of `smoothed` by name.
    last_read: Option<(RackName, f64)>,
    /// Racks whose feed went stale, warned about once until fresh figures return.
    stale: BTreeSet<RackName>,
    /// Racks at or below the saturation threshold at the last sample.
    unsaturated_racks: usize,
}

impl NetSat {
    /// The smoothed utilization (0..) of `rack`'s cross-rack link at `now_ms`.
    pub fn utilization(
        &mut self,
        rack: &RackName,
        state: &ClusterState,
        settings: &Settings,
        now_ms: u64,
    ) -> f64 {
        let due = self
            .last_sample_ms
            .is_none_or(|last| now_ms.saturating_sub(last) >= settings.netsat.period_ms);
        if due {
            self.sample(state, settings, now_ms);
        }
        if let Some((last, value)) = &self.last_read {
            if last == rack {
                return *value;
            }
        }
        let value = self.smoothed.get(rack).copied().unwrap_or(0.0);
        self.last_read = Some((rack.clone(), value));
        value
    }

    /// Whether some rack was at or below the saturation threshold at the last sample.
    pub fn some_rack_unsaturated(&self) -> bool {
        self.unsaturated_racks > 0
    }

    fn sample(&mut self, state: &ClusterState, settings: &Settings, now_ms: u64) {
        self.last_sample_ms = Some(now_ms);
        self.last_read = None;
        self.unsaturated_racks = 0;
        let mut model: Option<BTreeMap<RackName, RackTraffic>> = None;
        for rack in state.racks() {
            let measured = match settings.netsat.source {
                LoadSource::Feed => self.measured(rack, state, settings, now_ms),
                LoadSource::Model => None,
            };
            let raw = measured.unwrap_or_else(|| {
                let traffic =
                    model.get_or_insert_with(|| estimate_traffic(state, settings, now_ms));
                let load = traffic.get(rack).copied().unwrap_or_default();
                load.inbound_mbps.max(load.outbound_mbps) / settings.netsat.uplink_mbps(rack)
            });
            let smoothed = moving_mean(
                self.smoothed.get(rack).copied(),
                raw,
                settings.netsat.smoothing,
            );
            if smoothed <= settings.netsat.threshold {
                self.unsaturated_racks += 1;
            }
            self.smoothed.insert(rack.clone(), smoothed);
        }
    }

    /// The feed's figure for a rack: its own measurement if fresh, else the sum of its hosts'
    /// fresh measurements over the link capacity; `None` (and a warning) when nothing is fresh.
    fn measured(
        &mut self,
        rack: &RackName,
        state: &ClusterState,
        settings: &Settings,
        now_ms: u64,
    ) -> Option<f64> {
        let max_age = settings.netsat.feed_max_age_ms;
        let fresh = |m: &MeasuredLoad| now_ms.saturating_sub(m.time_ms) <= max_age;
        let value = state
            .measured_rack_load
            .get(rack)
            .filter(|m| fresh(m))
            .map(|m| m.value)
            .or_else(|| {
                let hosts: Vec<f64> = state
                    .nodes
                    .values()
                    .filter(|node| &node.rack == rack)
                    .filter_map(|node| state.host_figures.get(&node.host)?.cross_rack_mbps.as_ref())
                    .filter(|m| fresh(m))
                    .map(|m| m.value)
                    .collect();
                (!hosts.is_empty())
                    .then(|| hosts.iter().sum::<f64>() / settings.netsat.uplink_mbps(rack))
            });
        match value {
            Some(_) => {
                self.stale.remove(rack);
            }
            None => {
                if self.stale.insert(rack.clone()) {
                    log::warn!(
                        "NetSat feed has no figure for rack {} newer than {max_age} ms \
                         (netsat.feed-max-age-ms); using the model estimate until it does",
                        rack.0
                    );
                }
            }
        }
        value
    }
}

fn transfer_ms(bytes: f64, mbps: f64) -> f64 {
    bytes * 8.0 / (mbps * 1.0e6) * 1000.0
}
