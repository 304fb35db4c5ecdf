//! Flow-level network: every transfer is a flow over a few links (node NIC in/out, rack
//! uplink/downlink), and rates are the max-min fair allocation over those links.
//!
//! A flow may load a link with a coefficient below one: a reduce's cross-rack fetch is one
//! flow whose bytes come from several racks in known proportions, so it loads each source
//! rack's uplink with that rack's share (weighted progressive filling). Rates are re-solved by
//! [`Network::solve`], which the simulator calls at most once per network tick (1 s); between
//! ticks a new flow takes whatever capacity is left on its path, so an idle network carries a
//! lone flow at full speed at once (what the hand-computed tests rely on).

use std::collections::BinaryHeap;

pub type LinkId = u32;
pub type FlowId = usize;

/// Flows are stored as a structure of arrays indexed by [`FlowId`], with every flow's links in
/// one shared arena: each network tick walks thousands of flows and their links, and separate
/// allocations per flow made that walk a chain of cache misses.
#[derive(Debug, Default)]
pub struct Network {
    /// Bytes per millisecond of each link.
    pub capacity: Vec<f64>,
    /// Sum of coefficient × rate of the live flows on each link.
    used: Vec<f64>,
    /// Bytes carried per link since the last [`Network::take_link_bytes`].
    pub link_bytes: Vec<f64>,
    /// Bytes still to move, as of `updated_ms`.
    remaining: Vec<f64>,
    /// Bytes per millisecond.
    rate: Vec<f64>,
    updated_ms: Vec<u64>,
    /// Bumped on every change that invalidates a scheduled completion.
    generation: Vec<u64>,
    /// Opaque owner tag for the simulator.
    owner: Vec<u64>,
    /// Which flow slots are live, one bit each in id order: every network tick lists the live
    /// flows twice and every solve walks them, and testing a flag per slot (most of them free
    /// when the flows thin out after a peak) cost more than the walk itself.
    live_bits: Vec<u64>,
    /// Each flow's links: `arena[start..start + len]`.
    span: Vec<(u32, u32)>,
    /// Links of every flow, with garbage left by removed flows and replaced link sets until
    /// a solve rewrites it compactly in flow order (once the garbage outgrows the live links).
    arena: Vec<(LinkId, f64)>,
    /// The live flows on each link they load (coefficient above zero), in flow-id order, the
    /// order in which the solve freezes them. Kept up to date on add, remove and relinks
    /// that change a flow's links, rather than rebuilt by every solve.
    on_link: Vec<Vec<u32>>,
    /// Arena entries of the live flows; the rest of the arena is garbage.
    live_pairs: usize,
    /// Scratch of [`Network::set_links`], all false between calls.
    joining: Vec<bool>,
    free_slots: Vec<FlowId>,
    live: usize,
    dirty: bool,
    scratch: Scratch,
}

/// Reused working memory of [`Network::solve`].
#[derive(Debug, Default)]
struct Scratch {
    fill: Vec<LinkFill>,
    /// The level of the last saturated link.
    water: f64,
    /// The next arena, written in flow order.
    arena: Vec<(LinkId, f64)>,
    heap: BinaryHeap<Level>,
}

impl Scratch {
    fn reset(&mut self, links: usize) {
        self.fill.clear();
        self.fill.resize(links, LinkFill::default());
        self.water = 0.0;
        self.arena.clear();
        self.heap.clear();
    }
}

/// One link's state during a solve, kept together because freezing a flow updates all three
/// for each of its links.
#[derive(Debug, Default, Clone, Copy)]
struct LinkFill {
    /// Coefficients of the flows on the link not frozen yet.
    sum_coef: f64,
    /// Load of the frozen flows.
    frozen_use: f64,
    /// A flow on the link froze since the link's heap key was pushed.
    touched: bool,
}

/// A link's saturation level as a max-heap entry that pops the lowest level first, ties to the
/// lower link id (deterministic): the order of ([`f64::total_cmp`], link id) reversed, packed
/// into one integer so that the heap compares with two machine instructions. A link has at
/// most one entry in the heap, so the pop sequence is fixed by this order alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Level(u128);

impl Level {
    fn new(level: f64, link: LinkId) -> Level {
        Level(!(((total_order_key(level) as u128) << 32) | link as u128))
    }

    fn level(self) -> f64 {
        f64::from_bits(total_order_key_inverse((!self.0 >> 32) as u64))
    }

    fn link(self) -> LinkId {
        !self.0 as u32
    }
}

/// The unsigned integer whose order is [`f64::total_cmp`]'s order of `x` (the same bit
/// transform, moved from signed to unsigned order).
fn total_order_key(x: f64) -> u64 {
    let bits = x.to_bits() as i64;
    ((bits ^ (((bits >> 63) as u64) >> 1) as i64) as u64) ^ (1 << 63)
}

fn total_order_key_inverse(key: u64) -> u64 {
    // The transform only flips the low 63 bits of negative numbers, so it undoes itself.
    let bits = (key ^ (1 << 63)) as i64;
    (bits ^ (((bits >> 63) as u64) >> 1) as i64) as u64
}

/// The ids whose bits are set, in increasing order.
fn live_in(bits: &[u64]) -> impl Iterator<Item = FlowId> + '_ {
    bits.iter().enumerate().flat_map(|(w, &word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                w * 64 + bit
            })
        })
    })
}

impl Network {
    pub fn new(capacity_bytes_per_ms: Vec<f64>) -> Network {
        let n = capacity_bytes_per_ms.len();
        Network {
            capacity: capacity_bytes_per_ms,
            used: vec![0.0; n],
            link_bytes: vec![0.0; n],
            on_link: vec![Vec::new(); n],
            joining: vec![false; n],
            ..Network::default()
        }
    }

    /// Changes a link's capacity (a neighbour took part of a NIC, or gave it back); the flows
    /// on it get their new rates at the next solve.
    pub fn set_capacity(&mut self, link: LinkId, bytes_per_ms: f64) {
        self.capacity[link as usize] = bytes_per_ms;
        self.dirty = true;
    }

    pub fn live_flows(&self) -> usize {
        self.live
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    pub fn is_live(&self, id: FlowId) -> bool {
        self.live_bits
            .get(id / 64)
            .is_some_and(|word| word >> (id % 64) & 1 == 1)
    }

    /// Bytes still to move as of [`Network::updated_ms`].
    pub fn remaining(&self, id: FlowId) -> f64 {
        self.remaining[id]
    }

    /// Bytes per millisecond.
    pub fn rate(&self, id: FlowId) -> f64 {
        self.rate[id]
    }

    pub fn updated_ms(&self, id: FlowId) -> u64 {
        self.updated_ms[id]
    }

    pub fn generation(&self, id: FlowId) -> u64 {
        self.generation[id]
    }

    pub fn owner(&self, id: FlowId) -> u64 {
        self.owner[id]
    }

    pub fn links(&self, id: FlowId) -> &[(LinkId, f64)] {
        let (start, len) = self.span[id];
        &self.arena[start as usize..(start + len) as usize]
    }

    /// Adds a flow; it starts at the capacity left on its path right now.
    pub fn add(&mut self, now_ms: u64, bytes: f64, links: &[(LinkId, f64)], owner: u64) -> FlowId {
        let rate = self.leftover(links);
        for &(link, coef) in links {
            self.used[link as usize] += coef * rate;
        }
        self.dirty = true;
        self.live += 1;
        let id = match self.free_slots.pop() {
            Some(id) => id,
            None => {
                self.remaining.push(0.0);
                self.rate.push(0.0);
                self.updated_ms.push(0);
                self.generation.push(0);
                self.owner.push(0);
                self.span.push((0, 0));
                let id = self.remaining.len() - 1;
                if id % 64 == 0 {
                    self.live_bits.push(0);
                }
                id
            }
        };
        self.remaining[id] = bytes;
        self.rate[id] = rate;
        self.updated_ms[id] = now_ms;
        self.generation[id] = 0;
        self.owner[id] = owner;
        self.live_bits[id / 64] |= 1 << (id % 64);
        self.span[id] = self.append_links(links);
        for &(link, coef) in links {
            if coef > 0.0 {
                self.list_on(link, id);
            }
        }
        id
    }

    /// Enters a flow in a link's list, at its id's place.
    fn list_on(&mut self, link: LinkId, id: FlowId) {
        let flows = &mut self.on_link[link as usize];
        let at = flows.partition_point(|&f| (f as usize) < id);
        flows.insert(at, id as u32);
    }

    /// Takes a flow out of a link's list.
    fn unlist_on(&mut self, link: LinkId, id: FlowId) {
        let flows = &mut self.on_link[link as usize];
        let at = flows.partition_point(|&f| (f as usize) < id);
        debug_assert_eq!(flows[at] as usize, id, "flow listed on its link");
        flows.remove(at);
    }

    /// A flow's links must be distinct: the link lists hold one entry per (flow, link).
    fn append_links(&mut self, links: &[(LinkId, f64)]) -> (u32, u32) {
        debug_assert!(
            links
                .iter()
                .enumerate()
                .all(|(i, (l, _))| links[..i].iter().all(|(m, _)| m != l)),
            "distinct links"
        );
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(links);
        self.live_pairs += links.len();
        (start, links.len() as u32)
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
    pub fn sync(&mut self, id: FlowId, now_ms: u64) -> f64 {
        let dt = now_ms.saturating_sub(self.updated_ms[id]) as f64;
        let remaining = &mut self.remaining[id];
        let bytes = (self.rate[id] * dt).min(*remaining);
        *remaining -= bytes;
        // Float dust below a byte is a finished transfer, not a straggler.
        if *remaining < 1e-6 {
            *remaining = 0.0;
        }
        self.updated_ms[id] = now_ms;
        bytes
    }

    /// Adds bytes to a live flow. No sync is needed: the rate holds until the next solve, so
    /// the bytes simply queue behind the ones in flight; a completion scheduled for the old
    /// amount finds bytes left and is rescheduled.
    pub fn extend(&mut self, id: FlowId, bytes: f64) {
        debug_assert!(self.is_live(id));
        self.remaining[id] += bytes;
    }

    /// Replaces a flow's link coefficients, keeping its rate until the next solve.
    pub fn set_links(&mut self, id: FlowId, links: &[(LinkId, f64)]) {
        let rate = self.rate[id];
        let (start, len) = self.span[id];
        for &(link, coef) in &self.arena[start as usize..(start + len) as usize] {
            self.used[link as usize] -= coef * rate;
        }
        for &(link, coef) in links {
            self.used[link as usize] += coef * rate;
        }
        self.dirty = true;
        // A relink mostly changes the shares on the same links: then the coefficients are
        // overwritten in place and the link lists stay as they are.
        let old = &mut self.arena[start as usize..(start + len) as usize];
        if old.len() == links.len()
            && old
                .iter()
                .zip(links)
                .all(|(&(a, ca), &(b, cb))| a == b && (ca > 0.0) == (cb > 0.0))
        {
            old.copy_from_slice(links);
            return;
        }
        // Otherwise only the lists of the links the flow leaves or joins change (a reduce's
        // fetch mostly gains one source rack): `joining` marks the new links, and those
        // found among the old ones are unmarked, leaving the ones to list.
        for &(link, coef) in links {
            if coef > 0.0 {
                self.joining[link as usize] = true;
            }
        }
        for i in start..start + len {
            let (link, coef) = self.arena[i as usize];
            if coef > 0.0 && !std::mem::take(&mut self.joining[link as usize]) {
                self.unlist_on(link, id);
            }
        }
        for &(link, coef) in links {
            if coef > 0.0 && std::mem::take(&mut self.joining[link as usize]) {
                self.list_on(link, id);
            }
        }
        self.live_pairs -= len as usize;
        self.span[id] = self.append_links(links);
    }

    /// Removes a flow (synced by the caller), frees its capacity and returns its owner tag.
    pub fn remove(&mut self, id: FlowId) -> u64 {
        assert!(self.is_live(id), "live flow");
        let rate = self.rate[id];
        let (start, len) = self.span[id];
        for i in start..start + len {
            let (link, coef) = self.arena[i as usize];
            let used = &mut self.used[link as usize];
            *used -= coef * rate;
            if *used < 0.0 {
                *used = 0.0;
            }
            if coef > 0.0 {
                self.unlist_on(link, id);
            }
        }
        self.live_bits[id / 64] &= !(1 << (id % 64));
        self.free_slots.push(id);
        self.live -= 1;
        self.live_pairs -= len as usize;
        if self.live == 0 {
            self.arena.clear();
        }
        self.dirty = true;
        self.owner[id]
    }

    /// Replaces `ids` with the ids of live flows, in id order (deterministic). The caller keeps
    /// the buffer: this runs twice per network tick.
    pub fn live_ids(&self, ids: &mut Vec<FlowId>) {
        ids.clear();
        ids.extend(live_in(&self.live_bits));
    }

    /// Re-solves max-min fair rates of all live flows (weighted progressive filling). Flows
    /// must be synced to the current time first, since rates change here.
    pub fn solve(&mut self) {
        self.dirty = false;
        let links = self.capacity.len();
        // Buffers persist across solves: this runs once per network tick on thousands of flows.
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.reset(links);
        // The arena is rewritten compactly in flow order once garbage outgrows the live links,
        // so the passes below mostly read each flow's links contiguously and in order.
        let compact = self.arena.len() > 2 * self.live_pairs;
        // One pass in flow order sums each link's coefficients (in this order, for the same
        // floats as ever).
        for id in live_in(&self.live_bits) {
            self.rate[id] = f64::NAN;
            self.generation[id] += 1;
            let (start, len) = self.span[id];
            let links = &self.arena[start as usize..(start + len) as usize];
            for &(link, coef) in links {
                if coef > 0.0 {
                    scratch.fill[link as usize].sum_coef += coef;
                }
            }
            if compact {
                self.span[id] = (scratch.arena.len() as u32, len);
                scratch.arena.extend_from_slice(links);
            }
        }
        if compact {
            std::mem::swap(&mut self.arena, &mut scratch.arena);
        }
        // Heapified at once (linear) rather than pushed one by one: most links carry a flow.
        let mut levels = std::mem::take(&mut scratch.heap).into_vec();
        levels.extend(
            scratch
                .fill
                .iter()
                .zip(&self.capacity)
                .enumerate()
                .filter(|(_, (fill, _))| fill.sum_coef > 0.0)
                .map(|(link, (fill, &cap))| Level::new(cap / fill.sum_coef, link as LinkId)),
        );
        scratch.heap = BinaryHeap::from(levels);
        // Lazy levels: a link's fair level never falls while flows freeze (a flow frozen at
        // the water level λ <= the link's level ℓ leaves (ℓS - aλ)/(S - a) >= ℓ), so a heap
        // key is a lower bound of its link's level. A popped key below the link's current
        // level is re-pushed at that level instead of re-pushing every touched link after
        // every saturation; the saturation order and levels are those of eager updating.
        while let Some(entry) = scratch.heap.pop() {
            let (key, link) = (entry.level(), entry.link());
            let l = link as usize;
            let fill = &mut scratch.fill[l];
            if fill.sum_coef <= 1e-12 {
                continue;
            }
            if fill.touched {
                let current =
                    ((self.capacity[l] - fill.frozen_use) / fill.sum_coef).max(scratch.water);
                if current > key {
                    fill.touched = false;
                    scratch.heap.push(Level::new(current, link));
                    continue;
                }
            }
            let level = key.max(0.0);
            scratch.water = key;
            for &id in &self.on_link[l] {
                let id = id as usize;
                if !self.rate[id].is_nan() {
                    continue;
                }
                self.rate[id] = level;
                let (start, len) = self.span[id];
                for &(other, coef) in &self.arena[start as usize..(start + len) as usize] {
                    if coef <= 0.0 {
                        continue;
                    }
                    let o = &mut scratch.fill[other as usize];
                    o.frozen_use += coef * level;
                    o.sum_coef -= coef;
                    o.touched = true;
                }
            }
            scratch.fill[l].sum_coef = 0.0;
        }
        for (used, fill) in self.used.iter_mut().zip(&scratch.fill) {
            *used = fill.frozen_use;
        }
        for id in live_in(&self.live_bits) {
            if self.rate[id].is_nan() {
                // A flow on no link (never built by the simulator) would be unbounded.
                self.rate[id] = 0.0;
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
        let a = net.add(0, 1e9, &[(0, 1.0)], 0);
        let b = net.add(0, 1e9, &[(0, 1.0), (1, 1.0)], 0);
        let c = net.add(0, 1e9, &[(1, 1.0)], 0);
        net.solve();
        assert_eq!(net.rate(b), 2.0);
        assert_eq!(net.rate(c), 2.0);
        assert_eq!(net.rate(a), 8.0);
    }

    #[test]
    fn weighted_links_take_the_share_of_a_flow() {
        // One flow loading link 0 fully and link 1 at half: link 1 (cap 1) allows 2.
        let mut net = Network::new(vec![10.0, 1.0]);
        let f = net.add(0, 1e9, &[(0, 1.0), (1, 0.5)], 0);
        assert_eq!(net.rate(f), 2.0, "leftover rate at creation");
        net.solve();
        assert_eq!(net.rate(f), 2.0);
    }

    #[test]
    fn relinks_and_removals_keep_the_link_lists_current() {
        // Links: 0 cap 10, 1 cap 4, 2 cap 6.
        let mut net = Network::new(vec![10.0, 4.0, 6.0]);
        let a = net.add(0, 1e9, &[(0, 1.0)], 0);
        let b = net.add(0, 1e9, &[(0, 1.0), (1, 1.0)], 0);
        let c = net.add(0, 1e9, &[(1, 1.0)], 0);
        net.solve();
        // New shares on the same links (in place), then b leaves link 0 for link 2.
        net.set_links(b, &[(0, 0.5), (1, 1.0)]);
        net.solve();
        assert_eq!((net.rate(a), net.rate(b), net.rate(c)), (9.0, 2.0, 2.0));
        net.set_links(b, &[(2, 1.0), (1, 1.0)]);
        net.solve();
        assert_eq!((net.rate(a), net.rate(b), net.rate(c)), (10.0, 2.0, 2.0));
        // c's slot is reused by a flow on link 0 only; b then has link 1 to itself.
        net.remove(c);
        let d = net.add(0, 1e9, &[(0, 1.0)], 0);
        assert_eq!(d, c, "slot reused");
        net.solve();
        assert_eq!((net.rate(a), net.rate(b), net.rate(d)), (5.0, 4.0, 5.0));
    }

    #[test]
    fn live_ids_list_the_live_flows_in_id_order_across_words() {
        let mut net = Network::new(vec![1e9]);
        let ids: Vec<FlowId> = (0..150).map(|_| net.add(0, 1e9, &[(0, 1.0)], 0)).collect();
        let removed = |id: FlowId| id % 3 == 0 || id == 64 || id == 127;
        for &id in ids.iter().filter(|&&id| removed(id)) {
            net.remove(id);
        }
        let expected: Vec<FlowId> = ids.into_iter().filter(|&id| !removed(id)).collect();
        assert_eq!(expected.len(), net.live_flows());
        assert!((0..150).all(|id| net.is_live(id) != removed(id)));
        let mut listed = Vec::new();
        net.live_ids(&mut listed);
        assert_eq!(listed, expected);
        assert!(!net.is_live(150) && !net.is_live(1000));
    }
}
