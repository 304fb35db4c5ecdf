//! HDFS block placement: where an input block's replicas are, which decides how local a map
//! can run, and where a task's output pipeline writes, which decides the cross-rack
//! replication traffic. Both follow HDFS's default placement policy. And which replica a
//! non-local map reads, which decides the links its read crosses.

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

/// The replica a reader on `reader_rack` reads a block from, as the NameNode orders a block's
/// locations for a client (`DatanodeManager.sortLocatedBlock`, `NetworkTopology.sortByDistance`
/// in Hadoop 3.4): the replicas nearest the reader first, those at the same distance shuffled
/// (no `dfs.namenode.read.considerLoad` or storage-type sort by default), and the client reads
/// the first. So a replica on the reader's rack if there is one, else any of the three alike.
/// Always taking the writer's replica instead put every off-rack read of a dataset written
/// from one rack on that rack's uplink.
pub(super) fn read_source(
    replicas: &[u32],
    rack_of: impl Fn(u32) -> u32,
    reader_rack: u32,
    rng: &mut Rng,
) -> u32 {
    let on_rack = replicas
        .iter()
        .filter(|&&r| rack_of(r) == reader_rack)
        .count();
    let nearest = if on_rack > 0 { on_rack } else { replicas.len() };
    let pick = rng.below(nearest);
    replicas
        .iter()
        .copied()
        .filter(|&r| on_rack == 0 || rack_of(r) == reader_rack)
        .nth(pick)
        .expect("a replica at the nearest distance")
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Replica nodes 0 (rack 0), 11 and 12 (rack 1) of a cluster of ten nodes per rack.
    const REPLICAS: [u32; 3] = [0, 11, 12];

    fn reads_from(reader_rack: u32) -> [u32; 3] {
        let mut rng = Rng::new(7);
        let mut counts = [0; 3];
        for _ in 0..3_000 {
            let source = read_source(&REPLICAS, |node| node / 10, reader_rack, &mut rng);
            counts[REPLICAS.iter().position(|&r| r == source).unwrap()] += 1;
        }
        counts
    }

    #[test]
    fn a_reader_off_every_replica_rack_reads_any_replica_alike() {
        // 1,000 each expected (σ ≈ 26): always the writer's replica would give 3,000 / 0 / 0.
        for count in reads_from(2) {
            assert!((850..=1_150).contains(&count), "{:?}", reads_from(2));
        }
    }

    #[test]
    fn a_reader_reads_a_replica_on_its_own_rack() {
        assert_eq!(reads_from(0), [3_000, 0, 0]);
        let [writer, second, third] = reads_from(1);
        assert_eq!(writer, 0);
        assert!(
            (1_300..=1_700).contains(&second),
            "{second} of {}",
            second + third
        );
    }
}
