//! Where a job's cross-rack shuffle comes from: the bytes as its reduces were placed, set
//! against what better placements could have done in the same run. docs/simulator.md
//! ("Cross-rack shuffle: oracle bounds and decomposition") defines each figure.
//!
//! In the model every reduce fetches an equal slice of every rack's map output, so a job whose
//! map output is `O[y]` on rack `y` (total `S`) and whose `R` reduces sit `n[y]` on rack `y`
//! shuffles `S − Σ_y O[y]·n[y]/R` across racks. Every figure below is that formula with a
//! different `n` (or, for the lower bound, a cap on how concentrated `O` and `n` can be).

use serde::Serialize;

/// One reduce attempt that finished, as the oracles see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReduceLaunch {
    /// When the attempt started in its container (the AM's launch), ms.
    pub time_ms: u64,
    /// The rack it ran on.
    pub rack: u32,
    /// Free containers per rack at that instant, its own container counted as free (it could
    /// have gone to any of them instead).
    pub free_by_rack: Vec<u32>,
}

/// What the oracles need of one finished job with a shuffle.
#[derive(Debug, Clone)]
pub struct JobShuffle<'a> {
    /// Its map output bytes per rack, once every map finished.
    pub output_by_rack: &'a [f64],
    /// Its finished reduce attempts, in launch order.
    pub reduces: &'a [ReduceLaunch],
    /// Per map launch, how many of the job's maps were running with it (itself included).
    pub maps_running_at_launch: &'a [u32],
    /// Containers of one rack (nodes per rack × containers per node).
    pub rack_containers: u32,
    /// Of the job's maps (splits), the most that have a replica on any one rack; `None` for a
    /// job whose maps read no input, which any rack can run without a remote read.
    pub most_splits_on_one_rack: Option<(u32, u32)>,
    /// The bytes its maps read as input, all splits together.
    pub input: f64,
}

/// Cross-rack shuffle bytes of one job or a sum over jobs: the decomposition of
/// docs/simulator.md. From `as_placed` down each oracle is given more freedom than the one
/// before, except `proportional`, which is SARP's rule rather than an optimum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CrossRackBounds {
    /// Map output bytes (all of the shuffle).
    pub shuffle: f64,
    /// As the reduces were placed.
    pub as_placed: f64,
    /// Reduces in exact proportion to the final map output per rack (SARP with perfect
    /// knowledge; no whole-task rounding).
    pub proportional: f64,
    /// Each reduce on the rack holding most of the job's output among the racks that had a
    /// free container when it was launched (reduces launched at the same instant share them).
    pub reduce_oracle_free: f64,
    /// Every reduce on the racks holding most output, at most one rack's containers each.
    pub reduce_oracle: f64,
    /// The least any placement of the job's maps and reduces at the concurrency it ran with
    /// could shuffle across racks, estimated by capping each map launch's share of the best
    /// rack (docs/simulator.md says where a schedule can beat the cap).
    pub lower_bound: f64,
    /// The least any placement in which no map reads its split across racks could shuffle
    /// across racks, rack capacity and other jobs ignored: only maps with a replica on a rack
    /// can put their output there.
    pub data_local_bound: f64,
    /// Not shuffle alone: the least any placement of the job's maps and reduces could move
    /// across racks in map reads and shuffle together, rack capacity and other jobs ignored.
    /// Placements may read map input across racks here, which the data-local bound forbids.
    pub reads_and_shuffle_floor: f64,
}

impl CrossRackBounds {
    pub fn add(&mut self, other: &CrossRackBounds) {
        self.shuffle += other.shuffle;
        self.as_placed += other.as_placed;
        self.proportional += other.proportional;
        self.reduce_oracle_free += other.reduce_oracle_free;
        self.reduce_oracle += other.reduce_oracle;
        self.lower_bound += other.lower_bound;
        self.data_local_bound += other.data_local_bound;
        self.reads_and_shuffle_floor += other.reads_and_shuffle_floor;
    }

    /// Whole bytes: fractions of a byte are not information.
    pub fn rounded(&self) -> CrossRackBounds {
        CrossRackBounds {
            shuffle: self.shuffle.round(),
            as_placed: self.as_placed.round(),
            proportional: self.proportional.round(),
            reduce_oracle_free: self.reduce_oracle_free.round(),
            reduce_oracle: self.reduce_oracle.round(),
            lower_bound: self.lower_bound.round(),
            data_local_bound: self.data_local_bound.round(),
            reads_and_shuffle_floor: self.reads_and_shuffle_floor.round(),
        }
    }
}

/// The bounds of one job; all zero for a job without reduces or output.
pub fn job_bounds(job: &JobShuffle) -> CrossRackBounds {
    let shuffle: f64 = job.output_by_rack.iter().sum();
    let reduces = job.reduces.len();
    if reduces == 0 || shuffle <= 0.0 {
        return CrossRackBounds::default();
    }
    let per_reduce = |rack: u32| job.output_by_rack[rack as usize] / reduces as f64;
    let as_placed = shuffle - job.reduces.iter().map(|r| per_reduce(r.rack)).sum::<f64>();
    let proportional = shuffle - job.output_by_rack.iter().map(|o| o * o).sum::<f64>() / shuffle;

    let mut racks_by_output: Vec<u32> = (0..job.output_by_rack.len() as u32).collect();
    racks_by_output.sort_by(|a, b| {
        job.output_by_rack[*b as usize].total_cmp(&job.output_by_rack[*a as usize])
    });

    let mut local = 0.0;
    let mut left = reduces as u32;
    for &rack in &racks_by_output {
        let here = left.min(job.rack_containers);
        local += here as f64 * per_reduce(rack);
        left -= here;
    }
    let reduce_oracle = shuffle - local;

    let mut local_free = 0.0;
    let mut taken = vec![0u32; job.output_by_rack.len()];
    let mut instant = None;
    for launch in job.reduces {
        if instant != Some(launch.time_ms) {
            instant = Some(launch.time_ms);
            taken.iter_mut().for_each(|t| *t = 0);
        }
        let best = racks_by_output
            .iter()
            .copied()
            .find(|&y| launch.free_by_rack[y as usize] > taken[y as usize])
            .unwrap_or(launch.rack);
        taken[best as usize] += 1;
        local_free += per_reduce(best);
    }
    let reduce_oracle_free = shuffle - local_free;

    // At most one rack's containers of the job's running maps (reduces) can share one rack, so
    // of a map launched with k of the job's maps running only min(1, C/k) can be counted on the
    // best rack; all reduces run together in the model's best case for the job, the same cap
    // applies with k = the job's reduces. The output on the best rack and the reduces there are
    // each at most that share, and a job's local shuffle at most the smaller of the two.
    let capacity = job.rack_containers as f64;
    let map_share = if job.maps_running_at_launch.is_empty() {
        1.0
    } else {
        job.maps_running_at_launch
            .iter()
            .map(|&k| (capacity / k.max(1) as f64).min(1.0))
            .sum::<f64>()
            / job.maps_running_at_launch.len() as f64
    };
    let reduce_share = (capacity / reduces as f64).min(1.0);
    let lower_bound = shuffle * (1.0 - map_share.min(reduce_share));

    // Every map writes the same share of the output, and with no remote read a map runs on a
    // rack holding its split: a rack can hold at most the share of the maps with a replica on
    // it, and the local shuffle, Σ O[y]·n[y]/R, is at most the largest rack's output.
    let data_local_bound = match job.most_splits_on_one_rack {
        Some((on_one_rack, maps)) if maps > 0 => {
            shuffle * (1.0 - (on_one_rack as f64 / maps as f64).min(1.0))
        }
        _ => 0.0,
    };
    // The model's cross-rack bytes are linear in where the reduces sit, so for any map
    // placement the least is with every reduce on one rack z. Then a map whose split has a
    // replica on z runs there and moves nothing; any other map either runs on z and reads its
    // split across racks (its input crosses) or runs beside its split and its output crosses,
    // whichever is less. With equal splits and equal outputs the best z is the rack holding
    // the most splits, and the floor is that rack's missing share of min(input, shuffle).
    let reads_and_shuffle_floor = match job.most_splits_on_one_rack {
        Some((on_one_rack, maps)) if maps > 0 => {
            shuffle.min(job.input) * (1.0 - (on_one_rack as f64 / maps as f64).min(1.0))
        }
        _ => 0.0,
    };

    CrossRackBounds {
        shuffle,
        as_placed,
        proportional,
        reduce_oracle_free,
        reduce_oracle,
        lower_bound,
        data_local_bound,
        reads_and_shuffle_floor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(time_ms: u64, rack: u32, free_by_rack: &[u32]) -> ReduceLaunch {
        ReduceLaunch {
            time_ms,
            rack,
            free_by_rack: free_by_rack.to_vec(),
        }
    }

    /// Three racks holding 60, 30 and 10 bytes of a job's output; 4 reduces, all placed on the
    /// rack with 10. Worked by hand:
    /// * as placed: every reduce fetches 25 bytes, 2.5 of them local: 100 − 4·2.5 = 90;
    /// * proportional: 100 − (60² + 30² + 10²)/100 = 100 − 46 = 54;
    /// * rack-size oracle with 3 containers a rack: 3 reduces on rack 0 (15 local each) and 1
    ///   on rack 1 (7.5): 100 − 52.5 = 47.5;
    /// * free-container oracle: the two reduces launched at t = 1 find one free container on
    ///   rack 0 and none on rack 1, so one goes to rack 0 (15) and one stays on rack 2 (2.5);
    ///   the two at t = 2 find two on rack 1 (7.5 each): 100 − 32.5 = 67.5;
    /// * lower bound: maps launched with 2, 4, 6, 6 running → shares 1, 0.75, 0.5, 0.5, mean
    ///   0.6875; reduces 3/4 = 0.75; 100 · (1 − 0.6875) = 31.25;
    /// * data-local bound: at most 3 of the 4 splits have a replica on one rack, so at most
    ///   75 bytes can sit beside the reduces: 100 · (1 − 3/4) = 25;
    /// * reads and shuffle floor, with 80 bytes of input: the split without a replica on that
    ///   rack is read across racks (20 bytes) rather than shuffled from elsewhere (25):
    ///   min(80, 100) · (1 − 3/4) = 20.
    #[test]
    fn hand_computed_job() {
        let reduces = [
            launch(1, 2, &[1, 0, 2]),
            launch(1, 2, &[1, 0, 2]),
            launch(2, 2, &[0, 2, 2]),
            launch(2, 2, &[0, 2, 2]),
        ];
        let bounds = job_bounds(&JobShuffle {
            output_by_rack: &[60.0, 30.0, 10.0],
            reduces: &reduces,
            maps_running_at_launch: &[2, 4, 6, 6],
            rack_containers: 3,
            most_splits_on_one_rack: Some((3, 4)),
            input: 80.0,
        });
        let expect = CrossRackBounds {
            shuffle: 100.0,
            as_placed: 90.0,
            proportional: 54.0,
            reduce_oracle_free: 67.5,
            reduce_oracle: 47.5,
            lower_bound: 31.25,
            data_local_bound: 25.0,
            reads_and_shuffle_floor: 20.0,
        };
        for (got, want, name) in [
            (bounds.shuffle, expect.shuffle, "shuffle"),
            (bounds.as_placed, expect.as_placed, "as placed"),
            (bounds.proportional, expect.proportional, "proportional"),
            (
                bounds.reduce_oracle_free,
                expect.reduce_oracle_free,
                "free oracle",
            ),
            (
                bounds.reduce_oracle,
                expect.reduce_oracle,
                "rack-size oracle",
            ),
            (bounds.lower_bound, expect.lower_bound, "lower bound"),
            (
                bounds.data_local_bound,
                expect.data_local_bound,
                "data-local bound",
            ),
            (
                bounds.reads_and_shuffle_floor,
                expect.reads_and_shuffle_floor,
                "reads and shuffle floor",
            ),
        ] {
            assert!((got - want).abs() < 1e-9, "{name}: got {got}, want {want}");
        }
    }

    #[test]
    fn a_job_that_fits_one_rack_can_shuffle_nothing_across() {
        let reduces = [launch(5, 1, &[4, 1]), launch(5, 1, &[4, 1])];
        let bounds = job_bounds(&JobShuffle {
            output_by_rack: &[80.0, 20.0],
            reduces: &reduces,
            maps_running_at_launch: &[1, 2, 3],
            rack_containers: 8,
            most_splits_on_one_rack: None,
            input: 0.0,
        });
        assert_eq!(bounds.lower_bound, 0.0);
        assert_eq!(bounds.data_local_bound, 0.0, "its maps read no input");
        assert_eq!(
            bounds.reads_and_shuffle_floor, 0.0,
            "its maps read no input"
        );
        // Both reduces could have run on rack 0, which holds 80 of the 100 bytes.
        assert!((bounds.reduce_oracle - 20.0).abs() < 1e-9);
        assert!((bounds.reduce_oracle_free - 20.0).abs() < 1e-9);
        assert!((bounds.as_placed - 80.0).abs() < 1e-9);
    }

    #[test]
    fn a_job_without_reduces_has_no_shuffle_bounds() {
        let bounds = job_bounds(&JobShuffle {
            output_by_rack: &[5.0, 5.0],
            reduces: &[],
            maps_running_at_launch: &[1],
            rack_containers: 2,
            most_splits_on_one_rack: Some((1, 1)),
            input: 10.0,
        });
        assert_eq!(bounds, CrossRackBounds::default());
    }
}
