#!/usr/bin/env python3
"""Writes the FRESH paper's Purdue-benchmark workloads as simulator batch files
(workloads/purdue/*.batch.json): Sets A-E and the simple workloads (10 jobs of one benchmark).

Task counts are the paper's Table I (8 GB and 4 GB inputs). Per-task times are our estimate
(the paper gives none): map-intensive Classification and Histogram ratings have long maps and
short reduces, reduce-intensive Invertedindex and Grep the opposite, Wordcount and Histogram
movies in between; see docs/fresh.md. Mixed sets are submitted in Johnson's order of their map
and reduce work, 2 s apart, as in the paper; simple workloads 2 s apart. Every task's time is
its benchmark's estimate x U(0.9, 1.1), seeded; Sets B, D and E are also written with task
times spread +-30 % (`*-spread.batch.json`).

Run from native/rackwise-sim: python3 scripts/purdue-sets.py
"""
import json
import os

# benchmark: (map s, reduce s, (8 GB maps, reduces), (4 GB maps, reduces))
BENCHMARKS = {
    "classification": (60, 10, (270, 250), (129, 120)),
    "invertedindex": (25, 70, (256, 250), (128, 120)),
    "wordcount": (40, 25, (256, 200), (128, 100)),
    "grep": (20, 60, (270, 250), (128, 100)),
    "histogram_ratings": (55, 8, (270, 250), (129, 120)),
    "histogram_movies": (45, 12, (270, 200), (129, 100)),
}
ORDER = list(BENCHMARKS)


def job(benchmark, size, index):
    map_s, reduce_s, big, small = BENCHMARKS[benchmark]
    maps, reduces = big if size == 8 else small
    return {"name": f"{benchmark}-{size}g-{index}", "benchmark": benchmark, "maps": maps,
            "reduces": reduces, "map_s": map_s, "reduce_s": reduce_s}


def johnson(jobs):
    work = lambda j: (j["maps"] * j["map_s"], j["reduces"] * j["reduce_s"])
    front = sorted((j for j in jobs if work(j)[0] <= work(j)[1]), key=lambda j: work(j)[0])
    back = sorted((j for j in jobs if work(j)[0] > work(j)[1]), key=lambda j: -work(j)[1])
    return front + back


def mixed(counts):
    """counts: benchmark -> number of jobs, alternating 8 GB and 4 GB inputs."""
    jobs = []
    for benchmark in ORDER:
        for i in range(counts.get(benchmark, 0)):
            jobs.append(job(benchmark, 8 if i % 2 == 0 else 4, i + 1))
    return johnson(jobs)


SETS = {
    "set-a": mixed({b: 2 for b in ORDER}),
    "set-b": johnson([job(b, 8, 1) for b in ORDER]),
    "set-c": mixed({b: 4 for b in ORDER}),
    # 8 of 12 map-intensive / reduce-intensive, one each of the other four benchmarks.
    "set-d": mixed({"classification": 4, "histogram_ratings": 4, "invertedindex": 1,
                    "wordcount": 1, "grep": 1, "histogram_movies": 1}),
    "set-e": mixed({"invertedindex": 4, "grep": 4, "classification": 1, "wordcount": 1,
                    "histogram_ratings": 1, "histogram_movies": 1}),
}
for benchmark in ORDER:
    SETS[f"simple-{benchmark}"] = [job(benchmark, 8, i + 1) for i in range(10)]

def write(name, jobs, spread):
    with open(f"workloads/purdue/{name}.batch.json", "w") as out:
        out.write(f'{{"interval_s": 2, "task_spread": {spread}, "jobs": [\n')
        out.write(",\n".join("  " + json.dumps(j) for j in jobs))
        out.write("\n]}\n")


os.makedirs("workloads/purdue", exist_ok=True)
# Tasks of one benchmark do not all take the same time: each task takes its benchmark's
# estimate x U(0.9, 1.1), drawn from the run's seed, so seeds give different runs.
for name, jobs in SETS.items():
    write(name, jobs, 0.1)
# The paper's +-30 % applied to task times: each task takes its profile x U(0.7, 1.3), seeded,
# so FRESH's learned profiles are off by up to 30 % for any one task.
for name in ["set-b", "set-d", "set-e"]:
    write(f"{name}-spread", SETS[name], 0.3)
