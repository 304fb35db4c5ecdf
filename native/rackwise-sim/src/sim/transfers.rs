//! The glue between tasks and the flow-level network model (`crate::network`): the link ids of
//! a node's NIC and a rack's uplink and downlink, a task's transfer started as a flow tagged
//! with its owner, the periodic re-solve of rates, and a finished flow handed back to its task.
//!
//! Rates are re-solved at most every `NET_TICK_MS`, and a flow's end is scheduled only when it
//! falls before the next tick: a solve moves every flow's rate, so an end scheduled further
//! out would be wrong by then.

use super::event_loop::Ev;
use super::Sim;
use crate::network::{FlowId, LinkId};

/// Network rates are re-solved at most this often (between solves a new flow takes what is
/// left on its path).
pub const NET_TICK_MS: u64 = 1000;

pub(super) const OWN_MAP_READ: u64 = 0;
pub(super) const OWN_RED_LOCAL: u64 = 1;
pub(super) const OWN_RED_REMOTE: u64 = 2;
pub(super) const OWN_MAP_REPL: u64 = 3;
pub(super) const OWN_RED_REPL: u64 = 4;

pub(super) fn owner(kind: u64, job: u32, task: u32) -> u64 {
    (kind << 60) | ((job as u64) << 32) | task as u64
}

fn unowner(tag: u64) -> (u64, u32, u32) {
    (tag >> 60, ((tag >> 32) & 0x0FFF_FFFF) as u32, tag as u32)
}

impl Sim<'_> {
    pub(super) fn link_out(&self, node: u32) -> LinkId {
        node
    }

    pub(super) fn link_in(&self, node: u32) -> LinkId {
        self.nodes.len() as u32 + node
    }

    pub(super) fn link_up(&self, rack: u32) -> LinkId {
        2 * self.nodes.len() as u32 + rack
    }

    pub(super) fn link_down(&self, rack: u32) -> LinkId {
        2 * self.nodes.len() as u32 + self.cluster.racks as u32 + rack
    }

    /// The bytes a cross-rack fetch flow still has to fetch per source rack.
    fn composition(&mut self, f: FlowId) -> &mut [f64] {
        let racks = self.cluster.racks;
        &mut self.remote_bytes[f * racks..(f + 1) * racks]
    }

    /// The links of a reduce's cross-rack fetch: its NIC and rack downlink fully, each source
    /// rack's uplink by that rack's share of the bytes still to fetch.
    pub(super) fn remote_links(
        &self,
        node: u32,
        rack: u32,
        composition: &[f64],
    ) -> Vec<(LinkId, f64)> {
        let total: f64 = composition.iter().sum();
        let mut links = Vec::with_capacity(2 + composition.len());
        links.push((self.link_in(node), 1.0));
        links.push((self.link_down(rack), 1.0));
        for (s, b) in composition.iter().enumerate() {
            if *b > 0.0 && total > 0.0 {
                links.push((self.link_up(s as u32), b / total));
            }
        }
        links
    }

    pub(super) fn add_flow(
        &mut self,
        bytes: f64,
        links: &[(LinkId, f64)],
        tag: u64,
    ) -> Option<FlowId> {
        let f = self.net.add(self.now, bytes, links, tag);
        // The tick first: a completion is only scheduled up to the next tick, and without one
        // a flow on a sliver of leftover capacity would be scheduled near the end of time.
        if self.net_tick_at.is_none() {
            let at = (self.now / NET_TICK_MS + 1) * NET_TICK_MS;
            self.net_tick_at = Some(at);
            self.push(at, Ev::NetTick);
        }
        self.schedule_flow_done(f);
        Some(f)
    }

    /// If the flow ends before the next re-solve at its current rate, schedule its end.
    fn schedule_flow_done(&mut self, f: FlowId) {
        let rate = self.net.rate(f);
        if rate <= 0.0 {
            return;
        }
        let at = self
            .net
            .updated_ms(f)
            .saturating_add((self.net.remaining(f) / rate).ceil() as u64);
        let Some(next_tick) = self.net_tick_at else {
            return;
        };
        if at <= next_tick {
            let generation = self.net.generation(f);
            self.push(at.max(self.now), Ev::FlowDone(f as u32, generation));
        }
    }

    /// Advances a flow to now and books the bytes it moved.
    fn sync_flow(&mut self, f: FlowId) {
        let moved = self.net.sync(f, self.now);
        if moved <= 0.0 {
            return;
        }
        let (kind, _, _) = unowner(self.net.owner(f));
        let minute = (self.now / 60_000) as usize;
        // A split read or an output pipeline crosses racks when its path holds the rack links.
        let crosses_racks = self.net.links(f).len() == 4;
        match kind {
            OWN_MAP_READ if crosses_racks => self.collector.cross_rack(minute, 0.0, moved, 0.0),
            OWN_RED_LOCAL => self.counters.shuffle_fetched += moved,
            OWN_RED_REMOTE => {
                self.counters.shuffle_fetched += moved;
                self.collector.cross_rack(minute, moved, 0.0, 0.0);
                let composition = self.composition(f);
                let total: f64 = composition.iter().sum();
                if total > 0.0 {
                    let keep = ((total - moved) / total).max(0.0);
                    for b in composition.iter_mut() {
                        *b *= keep;
                    }
                }
            }
            OWN_MAP_REPL | OWN_RED_REPL if crosses_racks => {
                self.collector.cross_rack(minute, 0.0, 0.0, moved)
            }
            _ => {}
        }
    }

    /// Stops the flow of a task that was killed: books what it moved until now, removes it,
    /// and returns the bytes it had left.
    pub(super) fn cancel_flow(&mut self, f: FlowId) -> f64 {
        self.sync_flow(f);
        let left = self.net.remaining(f);
        let (kind, _, _) = unowner(self.net.remove(f));
        if kind == OWN_RED_REMOTE {
            self.composition(f).fill(0.0);
        }
        left
    }

    pub(super) fn flow_done(&mut self, f: FlowId, generation: u64) {
        if !self.net.is_live(f) || self.net.generation(f) != generation {
            return;
        }
        self.sync_flow(f);
        if self.net.remaining(f) > 0.0 {
            self.schedule_flow_done(f);
            return;
        }
        self.complete_flow(f);
    }

    fn complete_flow(&mut self, f: FlowId) {
        let (kind, j, t) = unowner(self.net.remove(f));
        if matches!(kind, OWN_MAP_READ | OWN_MAP_REPL) {
            self.jobs[j as usize].maps[t as usize].flow = None;
        }
        match kind {
            OWN_MAP_READ => self.input_consumed(j, t),
            OWN_MAP_REPL => self.map_done(j, t),
            OWN_RED_REPL => {
                self.jobs[j as usize].reduces[t as usize].output_flow = None;
                self.reduce_done(j, t);
            }
            OWN_RED_LOCAL => {
                self.jobs[j as usize].reduces[t as usize].local_flow = None;
                self.maybe_end_shuffle(j, t);
            }
            _ => {
                self.jobs[j as usize].reduces[t as usize].remote_flow = None;
                self.composition(f).fill(0.0);
                self.maybe_end_shuffle(j, t);
            }
        }
    }

    pub(super) fn net_tick(&mut self) {
        // The next tick is known before any flow completes here: a flow started by a
        // completion handler must neither start a second tick chain nor see "no next tick".
        let next = self.now + NET_TICK_MS;
        self.net_tick_at = Some(next);
        let dt = self.now - self.last_booked_ms.min(self.now);
        self.net.book_link_bytes(dt.min(NET_TICK_MS));
        self.last_booked_ms = self.now;
        let mut flows = std::mem::take(&mut self.tick_flows);
        self.net.live_ids(&mut flows);
        for &f in &flows {
            if !self.net.is_live(f) {
                continue;
            }
            self.sync_flow(f);
            if self.net.remaining(f) <= 0.0 {
                self.complete_flow(f);
            }
        }
        if self.net.live_flows() == 0 {
            self.net_tick_at = None;
            self.tick_flows = flows;
            return;
        }
        self.push(next, Ev::NetTick);
        for (j, r) in std::mem::take(&mut self.stale_links) {
            let Some(task) = self.jobs[j as usize].reduces.get_mut(r as usize) else {
                continue;
            };
            task.links_stale = false;
            if let Some(f) = task.remote_flow {
                let (node, rack) = (task.node, task.rack);
                let racks = self.cluster.racks;
                let links =
                    self.remote_links(node, rack, &self.remote_bytes[f * racks..(f + 1) * racks]);
                self.net.set_links(f, &links);
            }
        }
        if self.net.is_dirty() {
            self.net.solve();
        }
        self.net.live_ids(&mut flows);
        for &f in &flows {
            self.schedule_flow_done(f);
        }
        self.tick_flows = flows;
    }
}
