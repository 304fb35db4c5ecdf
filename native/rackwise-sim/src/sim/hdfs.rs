//! HDFS block placement: where an input block's replicas are, which decides how local a map
//! can run, and where a task's output pipeline writes, which decides the cross-rack
//! replication traffic. Both follow HDFS's default placement policy.

use super::Sim;
use crate::network::LinkId;
use crate::rng::Rng;

/// Where one job's input blocks were written from: every block from its own random node, or
/// from a random node of a few racks the job's dataset was loaded or produced on.
pub(super) enum InputWriters {
    AnyNode,
    RacksOf(Vec<usize>),
}

impl InputWriters {
    /// `racks` distinct racks of the cluster's `of`, drawn at random; every node for 0.
    pub(super) fn draw(rng: &mut Rng, racks: usize, of: usize) -> InputWriters {
        if racks == 0 {
            return InputWriters::AnyNode;
        }
        // Drawn until distinct: W is a few racks of tens, so a repeat is rare.
        let mut chosen = Vec::with_capacity(racks);
        while chosen.len() < racks {
            let rack = rng.below(of);
            if !chosen.contains(&rack) {
                chosen.push(rack);
            }
        }
        InputWriters::RacksOf(chosen)
    }

    /// One block's replicas under HDFS's default placement, from a writer drawn as `self` says.
    pub(super) fn block(
        &self,
        rng: &mut Rng,
        nodes: usize,
        racks: usize,
        per_rack: usize,
    ) -> [u32; 3] {
        let writer = match self {
            InputWriters::AnyNode => rng.below(nodes),
            InputWriters::RacksOf(chosen) => {
                chosen[rng.below(chosen.len())] * per_rack + rng.below(per_rack)
            }
        };
        hdfs_replicas(rng, writer, nodes, racks, per_rack)
    }
}

/// HDFS default placement for a block written from DataNode `first`: the writer's node, then
/// two distinct nodes of one other random rack; on a single rack, two other distinct nodes of
/// it.
fn hdfs_replicas(
    rng: &mut Rng,
    first: usize,
    nodes: usize,
    racks: usize,
    per_rack: usize,
) -> [u32; 3] {
    if per_rack < 2 {
        return [first as u32; 3];
    }
    if racks < 2 {
        let a = (first + 1 + rng.below(nodes - 1)) % nodes;
        let mut b = (first + 1 + rng.below(nodes - 1)) % nodes;
        while nodes > 2 && b == a {
            b = (first + 1 + rng.below(nodes - 1)) % nodes;
        }
        return [first as u32, a as u32, b as u32];
    }
    let rack = first / per_rack;
    let other = (rack + 1 + rng.below(racks - 1)) % racks;
    let a = rng.below(per_rack);
    let b = (a + 1 + rng.below(per_rack - 1)) % per_rack;
    [
        first as u32,
        (other * per_rack + a) as u32,
        (other * per_rack + b) as u32,
    ]
}

impl Sim<'_> {
    /// HDFS's write pipeline for a task's output: the first replica on the writer's node, the
    /// second and third on two nodes of one other rack; the pipeline crosses racks once. On a
    /// single rack it runs from the writer's NIC to another node's.
    pub(super) fn replication_links(&mut self, writer: u32) -> Vec<(LinkId, f64)> {
        if self.cluster.racks < 2 {
            let nodes = self.nodes.len();
            let target = (writer as usize + 1 + self.rng.below(nodes - 1)) % nodes;
            return vec![
                (self.link_out(writer), 1.0),
                (self.link_in(target as u32), 1.0),
            ];
        }
        let rack = self.nodes[writer as usize].rack;
        let racks = self.cluster.racks as u32;
        let other = (rack + 1 + self.rng.below(racks as usize - 1) as u32) % racks;
        let target = other * self.cluster.nodes_per_rack as u32
            + self.rng.below(self.cluster.nodes_per_rack) as u32;
        vec![
            (self.link_out(writer), 1.0),
            (self.link_up(rack), 1.0),
            (self.link_down(other), 1.0),
            (self.link_in(target), 1.0),
        ]
    }
}
