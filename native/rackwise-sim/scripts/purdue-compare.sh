#!/usr/bin/env bash
# The FRESH comparison on the paper's Purdue workloads (docs/fresh.md, "Measured"): every set
# on its cluster, seeds 1-3, the stock baselines, Hadoop 1's split baselines and fresh at
# k = 1, half and all in one queue (with the global 30 s starvation guard, and with the queue's
# own guard at 1 h: `fresh-K-1h`), and `capacity` over two queues.
# Writes one JSON per (set, seed, run) into $1 (default /tmp/purdue) and prints a summary.
# Run from the repository root after `cargo build --release -p rackwise-sim`.
set -euo pipefail
out=${1:-/tmp/purdue}
mkdir -p "$out"
sim=target/release/rackwise-sim
dir=native/rackwise-sim/workloads/purdue
for set in set-a set-b set-c set-d set-e simple-classification simple-invertedindex simple-grep \
    set-b-spread set-d-spread set-e-spread; do
  cluster=$dir/cluster-10x4.json
  case $set in set-b*) cluster=$dir/cluster-20x4.json ;; esac
  for seed in 1 2 3; do
    $sim compare --trace "$dir/$set.batch.json" --cluster "$cluster" --users 1 --quiet \
      --seed "$seed" --format json --policies fair,fair-fifo,fifo,delay,fair-1:3,fair-2:2,fair-3:1 \
      > "$out/$set.s$seed.baselines.json"
    # The paper's Capacity Scheduler: two queues, the jobs split between them.
    $sim compare --trace "$dir/$set.batch.json" --cluster "$cluster" --users 2 --quiet \
      --seed "$seed" --format json --policies capacity > "$out/$set.s$seed.capacity.json"
    for k in 1 half all; do
      $sim compare --trace "$dir/$set.batch.json" --cluster "$cluster" --users 1 --quiet \
        --seed "$seed" --format json --policies fresh --queue-setting "jobsPerPhase=$k" \
        > "$out/$set.s$seed.fresh-$k.json"
      # The queue's own guard at an hour, longer than these jobs' map phases (docs/fresh.md).
      $sim compare --trace "$dir/$set.batch.json" --cluster "$cluster" --users 1 --quiet \
        --seed "$seed" --format json --policies fresh --queue-setting "jobsPerPhase=$k" \
        --queue-setting starvationGuardMs=3600000 > "$out/$set.s$seed.fresh-$k-1h.json"
    done
  done
done
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
rows = {}
for path in glob.glob(f"{out}/*.json"):
    name = os.path.basename(path)[:-5]
    workload, seed, run = name.split(".")
    policies = json.load(open(path))["policies"]
    for policy, m in policies.items():
        label = run if run.startswith("fresh") else policy
        rows.setdefault((workload, label), []).append((m["makespan_s"], m["overall_fairness"], m["jobs"]))
print(f"{'workload':<24}{'policy':<16}{'makespan s mean [min-max]':<30}{'overall fairness mean [min-max]':<34}jobs")
for (workload, label) in sorted(rows):
    r = rows[(workload, label)]
    ms = [x[0] for x in r]; fs = [x[1] for x in r]
    print(f"{workload:<24}{label:<16}{statistics.mean(ms):>8.0f} [{min(ms):.0f}-{max(ms):.0f}]{'':<12}"
          f"{statistics.mean(fs):>6.3f} [{min(fs):.3f}-{max(fs):.3f}]{'':<14}{r[0][2]}")
PY
