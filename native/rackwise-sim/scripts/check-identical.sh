#!/usr/bin/env bash
# Re-runs the recorded simulator runs and compares their JSON byte for byte with references.
#
#   check-identical.sh record DIR   # run with the current release build, write DIR/*.json
#   check-identical.sh check DIR    # run again, `cmp` every output against DIR/*.json
#
# A refactoring that claims to change no decision must leave every output identical. Record and
# check with builds that print the same fields: references recorded before the per-run offer,
# guard-lift and preferred-rack fields were added to the JSON differ from any later build. The runs
# are those the policy work is checked against: FB-2010's first 3 h on nas600 for every policy,
# the ShuffleWatcher mix on sw100, and the FB-2009 day for the core policies. Each policy runs
# in its own process (as in BENCHMARK.md); stderr keeps the per-run summary and timing.
#
# TRACES (default /work/shared/traces/swim) holds the SWIM files; SIM the binary (default: the
# workspace's release build, built first). ONLY=substring runs the matching runs only.
set -euo pipefail

mode=${1:?usage: check-identical.sh record|check DIR}
dir=${2:?usage: check-identical.sh record|check DIR}
root=$(cd "$(dirname "$0")/../../.." && pwd)
traces=${TRACES:-/work/shared/traces/swim}
if [[ -z ${SIM:-} ]]; then
    (cd "$root" && cargo build --release -q -p rackwise-sim)
    SIM="$root/target/release/rackwise-sim"
fi
mkdir -p "$dir"

fb2010="$traces/FB-2010_samples_24_times_1hr_0.tsv"
fb2009="$traces/FB-2009_samples_24_times_1hr_0.tsv"
mix="$root/native/rackwise-sim/workloads/shufflewatcher-mix.json"

# name | arguments
runs=()
for p in fair delay shufflewatcher nas; do
    runs+=("fb2010-3h-$p|--trace $fb2010 --cluster nas600 --scale-from 3000 --hours 3 --policies $p")
done
for p in fair delay shufflewatcher nas; do
    runs+=("sw100-mix-$p|--trace $mix --cluster sw100 --policies $p")
done
for p in shufflewatcher nas; do
    runs+=("fb2009-day-$p|--trace $fb2009 --cluster nas600 --scale-from 600 --policies $p")
done

failed=0
for run in "${runs[@]}"; do
    name=${run%%|*}
    args=${run#*|}
    [[ -n ${ONLY:-} && $name != *"$ONLY"* ]] && continue
    out="$dir/$name.json"
    [[ $mode == check ]] && out="$dir/$name.check.json"
    # shellcheck disable=SC2086 # the arguments are split on purpose
    /usr/bin/time -f "$name: %U s user, %e s wall" "$SIM" compare $args --seed 1 --format json \
        >"$out" 2>"$dir/$name.stderr"
    tail -n 1 "$dir/$name.stderr"
    if [[ $mode == check ]]; then
        if cmp -s "$out" "$dir/$name.json"; then
            echo "$name: identical"
        else
            echo "$name: DIFFERS"
            failed=1
        fi
    fi
done
exit $failed
