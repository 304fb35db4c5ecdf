//! Flow-level network: every transfer is a flow over a few links (node NIC in/out, rack
//! uplink/downlink), and rates are the max-min fair allocation over those links.
//!
//! A flow may load a link with a coefficient below one: a reduce's cross-rack fetch is one
//! flow whose bytes come from several racks in known proportions, so it loads each source
//! rack's uplink with that rack's share (weighted progressive filling). Rates are re-solved by
//! [`Network::solve`], which the simulator calls at most once per network tick (1 s); between
//! ticks a new flow takes whatever capacity is left on its path, so an idle network carries a
//! lone flow at full speed at once (what the hand-computed tests rely on).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

pub type LinkId = u32;
pub type FlowId = usize;

#[derive(Debug, Clone)]
pub struct Flow {
    /// Bytes still to move, as of `updated_ms`.
    pub remaining: f64,
    /// Bytes per millisecond.
    pub rate: f64,
    pub links: Vec<(LinkId, f64)>,
    pub updated_ms: u64,
    /// Bumped on every change that invalidates a scheduled completion.
    pub generation: u64,
    /// Opaque owner tag for the simulator.
    pub owner: u64,
}

#[derive(Debug, Default)]
pub struct Network {
    /// Bytes per millisecond of each link.
    pub capacity: Vec<f64>,
    /// Sum of coefficient × rate of the live flows on each link.
    used: Vec<f64>,
    /// Bytes carried per link since the last [`Network::take_link_bytes`].
    pub link_bytes: Vec<f64>,
    flows: Vec<Option<Flow>>,
    free_slots: Vec<FlowId>,
    live: usize,
    dirty: bool,
    scratch: Scratch,
}

/// Reused working memory of [`Network::solve`].
#[derive(Debug, Default)]
struct Scratch {
    sum_coef: Vec<f64>,
    frozen_use: Vec<f64>,
    on_link: Vec<Vec<FlowId>>,
    /// `stamp[l] == round`: link `l` was touched since its heap key was pushed.
    stamp: Vec<u64>,
    round: u64,
    /// The level of the last saturated link.
    water: f64,
}

impl Scratch {
    fn reset(&mut self, links: usize) {
        self.sum_coef.clear();
        self.sum_coef.resize(links, 0.0);
        self.frozen_use.clear();
        self.frozen_use.resize(links, 0.0);
        self.on_link.resize_with(links, Vec::new);
        self.on_link.iter_mut().for_each(Vec::clear);
        self.stamp.resize(links, 0);
        self.round += 1;
        self.water = 0.0;
    }
}

/// Bytes moved by one flow during a sync, for the caller's accounting.
pub struct Moved {
    pub bytes: f64,
}

#[derive(PartialEq)]
struct Level(f64, LinkId, u64);
impl Eq for Level {}
impl PartialOrd for Level {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Level {
    // Min-heap on the saturation level; ties by link id keep the solve deterministic.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .0
            .total_cmp(&self.0)
            .then_with(|| other.1.cmp(&self.1))
            .then_with(|| other.2.cmp(&self.2))
    }
}

impl Network {
    pub fn new(capacity_bytes_per_ms: Vec<f64>) -> Network {
        let n = capacity_bytes_per_ms.len();
        Network {
            capacity: capacity_bytes_per_ms,
            used: vec![0.0; n],
            link_bytes: vec![0.0; n],
            ..Network::default()
        }
    }

    pub fn live_flows(&self) -> usize {
        self.live
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    pub fn is_live(&self, id: FlowId) -> bool {
        self.flows.get(id).is_some_and(|f| f.is_some())
    }

    pub fn flow(&self, id: FlowId) -> &Flow {
        self.flows[id].as_ref().expect("live flow")
    }

    /// Adds a flow; it starts at the capacity left on its path right now.
    pub fn add(
        &mut self,
        now_ms: u64,
        bytes: f64,
        links: Vec<(LinkId, f64)>,
        owner: u64,
    ) -> FlowId {
        let mut flow = Flow {
            remaining: bytes,
            rate: 0.0,
            links,
            updated_ms: now_ms,
            generation: 0,
            owner,
        };
        flow.rate = self.leftover(&flow.links);
        for &(link, coef) in &flow.links {
            self.used[link as usize] += coef * flow.rate;
        }
        self.dirty = true;
        self.live += 1;
        match self.free_slots.pop() {
            Some(id) => {
                self.flows[id] = Some(flow);
                id
            }
            None => {
                self.flows.push(Some(flow));
                self.flows.len() - 1
            }
        }
    }

    fn leftover(&self, links: &[(LinkId, f64)]) -> f64 {
        links
            .iter()
            .filter(|(_, coef)| *coef > 0.0)
            .map(|&(link, coef)| {
                ((self.capacity[link as usize] - self.used[link as usize]) / coef).max(0.0)
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Advances one flow to `now_ms` and returns the bytes it moved since its last update.
    pub fn sync(&mut self, id: FlowId, now_ms: u64) -> Moved {
        let flow = self.flows[id].as_mut().expect("live flow");
        let dt = now_ms.saturating_sub(flow.updated_ms) as f64;
        let bytes = (flow.rate * dt).min(flow.remaining);
        flow.remaining -= bytes;
        // Float dust below a byte is a finished transfer, not a straggler.
        if flow.remaining < 1e-6 {
            flow.remaining = 0.0;
        }
        flow.updated_ms = now_ms;
        Moved { bytes }
    }

    /// Adds bytes to a live flow. No sync is needed: the rate holds until the next solve, so
    /// the bytes simply queue behind the ones in flight; a completion scheduled for the old
    /// amount finds bytes left and is rescheduled.
    pub fn extend(&mut self, id: FlowId, bytes: f64) {
        self.flows[id].as_mut().expect("live flow").remaining += bytes;
    }

    /// Replaces a flow's link coefficients, keeping its rate until the next solve.
    pub fn set_links(&mut self, id: FlowId, links: Vec<(LinkId, f64)>) {
        let flow = self.flows[id].as_mut().expect("live flow");
        for &(link, coef) in &flow.links {
            self.used[link as usize] -= coef * flow.rate;
        }
        for &(link, coef) in &links {
            self.used[link as usize] += coef * flow.rate;
        }
        flow.links = links;
        self.dirty = true;
    }

    /// Removes a flow (synced by the caller) and frees its capacity.
    pub fn remove(&mut self, id: FlowId) -> Flow {
        let flow = self.flows[id].take().expect("live flow");
        for &(link, coef) in &flow.links {
            self.used[link as usize] -= coef * flow.rate;
            if self.used[link as usize] < 0.0 {
                self.used[link as usize] = 0.0;
            }
        }
        self.free_slots.push(id);
        self.live -= 1;
        self.dirty = true;
        flow
    }

    /// Ids of live flows, in id order (deterministic).
    pub fn live_ids(&self) -> Vec<FlowId> {
        self.flows
            .iter()
            .enumerate()
            .filter_map(|(id, f)| f.as_ref().map(|_| id))
            .collect()
    }

    /// Re-solves max-min fair rates of all live flows (weighted progressive filling). Flows
    /// must be synced to the current time first, since rates change here.
    pub fn solve(&mut self) {
        self.dirty = false;
        let links = self.capacity.len();
        // Buffers persist across solves: this runs once per network tick on thousands of flows.
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.reset(links);
        let ids = self.live_ids();
        for &id in &ids {
            let flow = self.flows[id].as_mut().expect("live flow");
            flow.rate = f64::NAN;
            flow.generation += 1;
            for &(link, coef) in &flow.links {
                if coef > 0.0 {
                    scratch.sum_coef[link as usize] += coef;
                    scratch.on_link[link as usize].push(id);
                }
            }
        }
        let mut heap = BinaryHeap::new();
        for (link, (&sum, &cap)) in scratch.sum_coef.iter().zip(&self.capacity).enumerate() {
            if sum > 0.0 {
                heap.push(Level(cap / sum, link as LinkId, 0));
            }
        }
        // Lazy levels: a link's fair level never falls while flows freeze (a flow frozen at
        // the water level λ <= the link's level ℓ leaves (ℓS - aλ)/(S - a) >= ℓ), so a heap
        // key is a lower bound of its link's level. A popped key below the link's current
        // level is re-pushed at that level instead of re-pushing every touched link after
        // every saturation; the saturation order and levels are those of eager updating.
        while let Some(Level(key, link, _)) = heap.pop() {
            let l = link as usize;
            if scratch.sum_coef[l] <= 1e-12 {
                continue;
            }
            if scratch.stamp[l] == scratch.round {
                let current = ((self.capacity[l] - scratch.frozen_use[l]) / scratch.sum_coef[l])
                    .max(scratch.water);
                if current > key {
                    scratch.stamp[l] = 0;
                    heap.push(Level(current, link, 0));
                    continue;
                }
            }
            let level = key.max(0.0);
            scratch.water = key;
            let members = std::mem::take(&mut scratch.on_link[l]);
            for &id in &members {
                let flow = self.flows[id].as_mut().expect("live flow");
                if !flow.rate.is_nan() {
                    continue;
                }
                flow.rate = level;
                for &(other, coef) in &flow.links {
                    if coef <= 0.0 {
                        continue;
                    }
                    let o = other as usize;
                    scratch.frozen_use[o] += coef * level;
                    scratch.sum_coef[o] -= coef;
                    scratch.stamp[o] = scratch.round;
                }
            }
            scratch.on_link[l] = members;
            scratch.on_link[l].clear();
            scratch.sum_coef[l] = 0.0;
        }
        self.used.copy_from_slice(&scratch.frozen_use);
        for &id in &ids {
            let flow = self.flows[id].as_mut().expect("live flow");
            if flow.rate.is_nan() {
                // A flow on no link (never built by the simulator) would be unbounded.
                flow.rate = 0.0;
            }
        }
        self.scratch = scratch;
    }

    /// Books `dt_ms` of traffic on every link at its current load. Called once per network
    /// tick: per-flow booking cost O(links of the flow) on every sync, and a reduce's fetch
    /// loads up to one uplink per rack. Load changes between ticks (flows added or finished)
    /// are seen at the next tick, which is close enough for a 2 s NetSat measurement.
    pub fn book_link_bytes(&mut self, dt_ms: u64) {
        for (bytes, used) in self.link_bytes.iter_mut().zip(&self.used) {
            *bytes += used * dt_ms as f64;
        }
    }

    /// Bytes carried per link since the previous call, then reset.
    pub fn take_link_bytes(&mut self) -> Vec<f64> {
        let n = self.link_bytes.len();
        std::mem::replace(&mut self.link_bytes, vec![0.0; n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_min_fair_shares_a_bottleneck_and_gives_the_rest_to_others() {
        // Links: 0 cap 10, 1 cap 4. Flow a on 0, flow b on 0 and 1, flow c on 1.
        let mut net = Network::new(vec![10.0, 4.0]);
        let a = net.add(0, 1e9, vec![(0, 1.0)], 0);
        let b = net.add(0, 1e9, vec![(0, 1.0), (1, 1.0)], 0);
        let c = net.add(0, 1e9, vec![(1, 1.0)], 0);
        net.solve();
        assert_eq!(net.flow(b).rate, 2.0);
        assert_eq!(net.flow(c).rate, 2.0);
        assert_eq!(net.flow(a).rate, 8.0);
    }

    #[test]
    fn weighted_links_take_the_share_of_a_flow() {
        // One flow loading link 0 fully and link 1 at half: link 1 (cap 1) allows 2.
        let mut net = Network::new(vec![10.0, 1.0]);
        let f = net.add(0, 1e9, vec![(0, 1.0), (1, 0.5)], 0);
        assert_eq!(net.flow(f).rate, 2.0, "leftover rate at creation");
        net.solve();
        assert_eq!(net.flow(f).rate, 2.0);
    }
}
