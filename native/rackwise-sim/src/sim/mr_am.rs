//! The MapReduce ApplicationMaster and its tasks: a job's arrival, the AM asking for its maps
//! with their block locations, choosing which map runs in a granted container, reduce
//! slow-start and ramp-up, and each task's phases (split read, compute, shuffle fetch, output
//! write) through to the job's end.
//!
//! The AM is modelled because its asks, counts per host and rack that shrink as maps are
//! placed, are what every scheduler places from, and its reduce ramp-up decides how many
//! containers a job's reduces may hold while its maps wait.

use super::core_link::{by_name, take_split};
use super::event_loop::Ev;
use super::hdfs::hdfs_replicas;
use super::sampling::SAMPLE_MS;
use super::transfers::{
    owner, OWN_MAP_READ, OWN_MAP_REPL, OWN_RED_LOCAL, OWN_RED_REMOTE, OWN_RED_REPL,
};
use super::{JobPhase, MapTask, ReduceTask, Sim};
use crate::cluster::Cluster;
use rackwise_core::protocol::{Event, Locality};
use std::collections::BTreeMap;

/// MapReduce `mapreduce.job.reduce.slowstart.completedmaps` default.
pub const SLOWSTART: f64 = 0.05;
/// MapReduce `yarn.app.mapreduce.am.job.reduce.rampup.limit` default: while maps are pending,
/// reduces may take at most this fraction of the job's running tasks.
pub const REDUCE_RAMPUP_LIMIT: f64 = 0.5;

impl Sim<'_> {
    /// The MR AM's reduce ramp-up (`RMContainerAllocator.scheduleReduces`): while maps are
    /// still pending, the job's reduces (running and asked) stay within
    /// `REDUCE_RAMPUP_LIMIT` of its running tasks (at least one), so reduces waiting for map
    /// output can never hold every container its maps need; pending reduce asks beyond the
    /// limit are withdrawn (ramp-down). Once every map is placed, all reduces are asked.
    pub(super) fn ramp_reduces(&mut self, j: u32) {
        let job = &self.jobs[j as usize];
        if !job.reduces_requested || job.phase == JobPhase::Done {
            return;
        }
        let started = job.reduces.len() as u32;
        let unstarted = job.reduces_total - started;
        let pending = if job.pending_maps == 0 {
            unstarted
        } else {
            // Running tasks: every container of the job but its AM.
            let running_reduces = started - job.reduces_done;
            let running_tasks = job.running.saturating_sub(1);
            let cap = ((REDUCE_RAMPUP_LIMIT * running_tasks as f64) as u32).max(1);
            cap.saturating_sub(running_reduces).min(unstarted)
        };
        if pending == job.pending_reduces {
            return;
        }
        self.fs_remove(j);
        self.jobs[j as usize].pending_reduces = pending;
        self.fs_insert(j);
        self.mark_asks(j);
    }

    /// The MR AM's choice of which map runs in a container: one with data on the node, else on
    /// the rack, else any (`RMContainerAllocator.assignMapsWithLocality`).
    pub(super) fn take_map(&mut self, j: u32, node: u32, locality: Locality) -> u32 {
        let rack = self.nodes[node as usize].rack;
        let job = &mut self.jobs[j as usize];
        let pick = |list: Option<&mut Vec<u32>>, maps: &Vec<MapTask>| -> Option<u32> {
            let list = list?;
            while let Some(m) = list.pop() {
                if !maps[m as usize].assigned {
                    return Some(m);
                }
            }
            None
        };
        let mut m = pick(job.by_host.get_mut(&node), &job.maps);
        if m.is_none() && locality >= Locality::RackLocal {
            m = pick(job.by_rack.get_mut(&rack), &job.maps);
        }
        if m.is_none() {
            m = pick(Some(&mut job.any), &job.maps);
        }
        let m = m.expect("a pending map exists when a map container is placed");
        let task = &mut job.maps[m as usize];
        task.assigned = true;
        let replicas = task.replicas;
        let copies = self.cluster.replication as usize;
        let mut racks_seen = [u32::MAX; 3];
        for (i, &replica) in replicas.iter().take(copies).enumerate() {
            if let Some(c) = job.host_count.get_mut(&replica) {
                *c -= 1;
                take_split(&mut job.ask_hosts, &self.hosts[replica as usize]);
            }
            let r = self.nodes[replica as usize].rack;
            if !racks_seen[..i].contains(&r) {
                if let Some(c) = job.rack_count.get_mut(&r) {
                    *c -= 1;
                    take_split(&mut job.ask_racks, &self.rack_names[r as usize]);
                }
            }
            racks_seen[i] = r;
        }
        job.pending_maps -= 1;
        m
    }

    pub(super) fn arrive(&mut self, j: u32) {
        let spec = &self.specs[j as usize];
        if self.engine.is_some() {
            self.core_events.push(Event::AppAdded {
                app: self.app_ids[j as usize].clone(),
                name: spec.name.clone(),
                user: format!("u{}", spec.user),
                queue: self.queues[spec.user].clone(),
                app_type: "MAPREDUCE".to_string(),
                tags: vec![],
                submit_ms: spec.submit_ms,
            });
        }
        self.fs_remove(j);
        let job = &mut self.jobs[j as usize];
        job.phase = JobPhase::AwaitAm;
        job.am_pending = true;
        self.fs_insert(j);
        self.mark_asks(j);
        if self.jobs_done == 0 && self.collector.first_submit_ms.is_none() {
            self.collector.first_submit_ms = Some(self.now);
            let at = (self.now / SAMPLE_MS + 1) * SAMPLE_MS;
            self.push(at, Ev::Sample);
        }
    }

    /// The AM registered: it places the input blocks' replicas as HDFS did when the input was
    /// written, and asks for every map with its block locations.
    pub(super) fn am_ready(&mut self, j: u32) {
        let n = self.nodes.len();
        let racks = self.cluster.racks;
        let per_rack = self.cluster.nodes_per_rack;
        let copies = self.cluster.replication as usize;
        let maps_total = self.jobs[j as usize].maps_total;
        let mut maps = Vec::with_capacity(maps_total as usize);
        let mut by_host: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut by_rack: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut host_count: BTreeMap<u32, u32> = BTreeMap::new();
        let mut rack_count: BTreeMap<u32, u32> = BTreeMap::new();
        for m in 0..maps_total {
            let replicas = hdfs_replicas(&mut self.rng, n, racks, per_rack);
            let mut racks_seen = [u32::MAX; 3];
            for (i, &replica) in replicas.iter().take(copies).enumerate() {
                by_host.entry(replica).or_default().push(m);
                *host_count.entry(replica).or_insert(0) += 1;
                let r = (replica as usize / per_rack) as u32;
                if !racks_seen[..i].contains(&r) {
                    by_rack.entry(r).or_default().push(m);
                    *rack_count.entry(r).or_insert(0) += 1;
                }
                racks_seen[i] = r;
            }
            maps.push(MapTask {
                replicas,
                assigned: false,
                node: 0,
                container: 0,
            });
        }
        let ask_hosts = by_name(&host_count, &self.hosts);
        let ask_racks = by_name(&rack_count, &self.rack_names);
        self.fs_remove(j);
        let job = &mut self.jobs[j as usize];
        job.phase = JobPhase::Running;
        job.maps = maps;
        // Popped from the end: reverse so that maps start in index order.
        for list in by_host.values_mut().chain(by_rack.values_mut()) {
            list.reverse();
        }
        job.by_host = by_host;
        job.by_rack = by_rack;
        job.any = (0..maps_total).rev().collect();
        job.host_count = host_count;
        job.rack_count = rack_count;
        job.ask_hosts = ask_hosts;
        job.ask_racks = ask_racks;
        job.pending_maps = maps_total;
        job.output_by_rack = vec![0.0; racks];
        job.allowed = Locality::NodeLocal;
        self.fs_insert(j);
        self.mark_asks(j);
        self.mark_stats(j);
    }

    pub(super) fn start_map(
        &mut self,
        j: u32,
        m: u32,
        node: u32,
        container: u32,
        locality: Locality,
    ) {
        let job = &mut self.jobs[j as usize];
        job.maps[m as usize].node = node;
        job.maps[m as usize].container = container;
        let input = job.input_per_map;
        if locality == Locality::NodeLocal || input <= 0.0 {
            self.map_compute(j, m);
            return;
        }
        // Read the split from a replica on this rack if there is one, else from the first.
        let rack = self.nodes[node as usize].rack;
        let replicas = self.jobs[j as usize].maps[m as usize].replicas;
        let copies = self.cluster.replication as usize;
        let source = replicas
            .iter()
            .take(copies)
            .copied()
            .find(|r| self.nodes[*r as usize].rack == rack)
            .unwrap_or(replicas[0]);
        let src_rack = self.nodes[source as usize].rack;
        let mut links = vec![(self.link_out(source), 1.0), (self.link_in(node), 1.0)];
        if src_rack != rack {
            links.push((self.link_up(src_rack), 1.0));
            links.push((self.link_down(rack), 1.0));
        }
        self.add_flow(input, &links, owner(OWN_MAP_READ, j, m));
    }

    /// The map's CPU/disk phase: launch overhead, read and map its split, spill its output
    /// (or, for a map-only job, write its output's first replica).
    pub(super) fn map_compute(&mut self, j: u32, m: u32) {
        let job = &self.jobs[j as usize];
        let node = job.maps[m as usize].node;
        let c = self.cluster;
        let speed = self.nodes[node as usize].speed;
        let ms = (c.task_overhead_s * 1000.0
            + job.input_per_map / Cluster::mib_per_s_to_bytes_per_ms(c.map_mib_per_s)
            + job.shuffle_per_map / Cluster::mib_per_s_to_bytes_per_ms(c.spill_mib_per_s)
            + job.output_per_map / Cluster::mib_per_s_to_bytes_per_ms(c.write_mib_per_s))
            / speed;
        self.push(self.now + ms.round() as u64, Ev::MapCpuDone(j, m));
    }

    pub(super) fn map_cpu_done(&mut self, j: u32, m: u32) {
        let output = self.jobs[j as usize].output_per_map;
        if output > 0.0 && self.cluster.replication > 1 {
            let node = self.jobs[j as usize].maps[m as usize].node;
            let links = self.replication_links(node);
            self.add_flow(output, &links, owner(OWN_MAP_REPL, j, m));
        } else {
            self.map_done(j, m);
        }
    }

    pub(super) fn map_done(&mut self, j: u32, m: u32) {
        let (node, container) = {
            let task = &self.jobs[j as usize].maps[m as usize];
            (task.node, task.container)
        };
        self.release(j, node, container);
        let rack = self.nodes[node as usize].rack;
        let job = &mut self.jobs[j as usize];
        job.maps_done += 1;
        let produced = job.shuffle_per_map;
        if job.reduces_total > 0 {
            job.output_by_rack[rack as usize] += produced;
            self.counters.shuffle_produced += produced;
            let per_reduce = produced / job.reduces_total as f64;
            let running: Vec<u32> = (0..job.reduces.len() as u32)
                .filter(|&r| job.reduces[r as usize].shuffling)
                .collect();
            for r in running {
                self.reduce_receive(j, r, rack, per_reduce);
            }
        }
        self.mark_stats(j);
        let job = &self.jobs[j as usize];
        let (done, total) = (job.maps_done, job.maps_total);
        if job.reduces_total > 0
            && !job.reduces_requested
            && done as f64 >= SLOWSTART * total as f64
        {
            self.jobs[j as usize].reduces_requested = true;
            self.ramp_reduces(j);
        }
        if done == total {
            let job = &self.jobs[j as usize];
            if job.reduces_total == 0 {
                self.job_done(j);
            } else {
                self.record_preferred_output(j);
                let job = &self.jobs[j as usize];
                let shuffling: Vec<u32> = (0..job.reduces.len() as u32)
                    .filter(|&r| job.reduces[r as usize].shuffling)
                    .collect();
                for r in shuffling {
                    self.maybe_end_shuffle(j, r);
                }
            }
        }
    }

    pub(super) fn start_reduce(&mut self, j: u32, node: u32, container: u32) {
        let rack = self.nodes[node as usize].rack;
        let job = &mut self.jobs[j as usize];
        let r = job.reduces.len() as u32;
        job.reduces.push(ReduceTask {
            node,
            rack,
            container,
            local_flow: None,
            remote_flow: None,
            links_stale: false,
            shuffling: true,
        });
        let reduces = job.reduces_total as f64;
        let available: Vec<(u32, f64)> = job
            .output_by_rack
            .iter()
            .enumerate()
            .filter(|(_, b)| **b > 0.0)
            .map(|(src, b)| (src as u32, *b / reduces))
            .collect();
        for (src, bytes) in available {
            self.reduce_receive(j, r, src, bytes);
        }
        self.maybe_end_shuffle(j, r);
    }

    /// A finished map's partition for reduce `r` became fetchable from rack `src`.
    fn reduce_receive(&mut self, j: u32, r: u32, src: u32, bytes: f64) {
        if bytes <= 0.0 {
            return;
        }
        let task = &self.jobs[j as usize].reduces[r as usize];
        let (node, rack) = (task.node, task.rack);
        if src == rack {
            match task.local_flow {
                Some(f) => self.net.extend(f, bytes),
                None => {
                    let links = [(self.link_in(node), 1.0)];
                    let f = self.add_flow(bytes, &links, owner(OWN_RED_LOCAL, j, r));
                    self.jobs[j as usize].reduces[r as usize].local_flow = f;
                }
            }
            return;
        }
        let task = &mut self.jobs[j as usize].reduces[r as usize];
        match task.remote_flow {
            Some(f) => {
                self.remote_bytes[f * self.cluster.racks + src as usize] += bytes;
                // The composition changed; the new link shares are set at the next solve.
                if !task.links_stale {
                    task.links_stale = true;
                    self.stale_links.push((j, r));
                }
                self.net.extend(f, bytes);
            }
            None => {
                // A new fetch's composition: this rack alone.
                let mut composition = vec![0.0; self.cluster.racks];
                composition[src as usize] += bytes;
                let links = self.remote_links(node, rack, &composition);
                let f = self.add_flow(bytes, &links, owner(OWN_RED_REMOTE, j, r));
                self.jobs[j as usize].reduces[r as usize].remote_flow = f;
                if let Some(f) = f {
                    let racks = self.cluster.racks;
                    if self.remote_bytes.len() < (f + 1) * racks {
                        self.remote_bytes.resize((f + 1) * racks, 0.0);
                    }
                    self.remote_bytes[f * racks..(f + 1) * racks].copy_from_slice(&composition);
                }
            }
        }
    }

    pub(super) fn maybe_end_shuffle(&mut self, j: u32, r: u32) {
        let job = &self.jobs[j as usize];
        let task = &job.reduces[r as usize];
        if !task.shuffling
            || job.maps_done < job.maps_total
            || task.local_flow.is_some()
            || task.remote_flow.is_some()
        {
            return;
        }
        let node = task.node;
        self.jobs[j as usize].reduces[r as usize].shuffling = false;
        let c = self.cluster;
        let job = &self.jobs[j as usize];
        let ms = (c.task_overhead_s * 1000.0
            + job.shuffle_per_reduce / Cluster::mib_per_s_to_bytes_per_ms(c.merge_mib_per_s)
            + job.output_per_reduce / Cluster::mib_per_s_to_bytes_per_ms(c.write_mib_per_s))
            / self.nodes[node as usize].speed;
        self.push(self.now + ms.round() as u64, Ev::ReduceCpuDone(j, r));
    }

    pub(super) fn reduce_cpu_done(&mut self, j: u32, r: u32) {
        let output = self.jobs[j as usize].output_per_reduce;
        if output > 0.0 && self.cluster.replication > 1 {
            let node = self.jobs[j as usize].reduces[r as usize].node;
            let links = self.replication_links(node);
            self.add_flow(output, &links, owner(OWN_RED_REPL, j, r));
        } else {
            self.reduce_done(j, r);
        }
    }

    pub(super) fn reduce_done(&mut self, j: u32, r: u32) {
        let task = &self.jobs[j as usize].reduces[r as usize];
        let (node, container) = (task.node, task.container);
        self.release(j, node, container);
        let job = &mut self.jobs[j as usize];
        job.reduces_done += 1;
        if job.reduces_done == job.reduces_total && job.maps_done == job.maps_total {
            self.job_done(j);
        }
    }

    fn job_done(&mut self, j: u32) {
        let (node, container) = (
            self.jobs[j as usize].am_node,
            self.jobs[j as usize].am_container,
        );
        self.release(j, node, container);
        let job = &mut self.jobs[j as usize];
        job.phase = JobPhase::Done;
        // Free the per-map structures of a finished job; big traces hold millions of maps.
        job.maps = Vec::new();
        job.by_host = BTreeMap::new();
        job.by_rack = BTreeMap::new();
        job.any = Vec::new();
        job.host_count = BTreeMap::new();
        job.rack_count = BTreeMap::new();
        job.ask_hosts = BTreeMap::new();
        job.ask_racks = BTreeMap::new();
        job.reduces = Vec::new();
        self.jobs_done += 1;
        self.collector.job_done(j as usize, self.now);
        if self.engine.is_some() {
            self.core_events.push(Event::AppRemoved {
                app: self.app_ids[j as usize].clone(),
            });
        }
    }
}
