//! FRESH-static (Algorithm 1) at the paper's scale: 500 slots, 100 jobs of 400 tasks each. The
//! paper reports 0.578 s for its `O(S · N_T²)` listing on a 2.4 GHz desktop; this
//! implementation walks phase changes, not tasks (`O(S · N · (log N + k))`).
//!
//! Run: `cargo bench -p rackwise-core --bench fresh_static`. Results: the crate's BENCHMARK note
//! (`native/rackwise-core/BENCHMARK-fresh.md`).

use criterion::{criterion_group, criterion_main, Criterion};
use rackwise_core::policy::fresh::batch::{best_split, JobProfile};
use std::hint::black_box;

/// 100 jobs of 400 tasks with spread-out, deterministic shapes: 100–299 maps, the rest
/// reduces, maps of 10–59 s and reduces of 20–109 s.
fn paper_scale_batch() -> Vec<JobProfile> {
    (0..100u32)
        .map(|i| {
            let maps = 100 + (i * 37) % 200;
            JobProfile {
                maps,
                reduces: 400 - maps,
                map_time: (10 + (i * 13) % 50) as f64,
                reduce_time: (20 + (i * 29) % 90) as f64,
            }
        })
        .collect()
}

fn fresh_static(c: &mut Criterion) {
    let jobs = paper_scale_batch();
    let mut group = c.benchmark_group("fresh_static_500_slots_100_jobs_400_tasks");
    for (label, k) in [("k1", 1), ("k_half", 50), ("k_all", 100)] {
        group.bench_function(label, |b| {
            b.iter(|| best_split(black_box(&jobs), black_box(500), black_box(k)))
        });
    }
    group.finish();
}

criterion_group!(benches, fresh_static);
criterion_main!(benches);
