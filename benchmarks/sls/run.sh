#!/bin/sh
# SLS comparison: one run of Hadoop's Scheduler Load Simulator in one JVM, stock FairScheduler
# or Rackwise inside the same SLS wrapper, every NODE_UPDATE timed (see BENCHMARK.md).
#
#   benchmarks/sls/run.sh <nodes> <stock|rackwise> [policy] [jobs]
#
# nodes: a multiple of 20 (racks of 20); policy: the <rackwise> policy of every queue
# (shufflewatcher, nas or none; default shufflewatcher); jobs: default 300.
# Inputs and SLS's output go to target/sls/<nodes>-<scheduler>[-<policy>]/; the figures are
# printed at the end. A run lasts as long as the simulated jobs (a few minutes, wall clock).
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 <nodes> <stock|rackwise> [policy] [jobs]" >&2
  exit 2
fi
nodes=$1
scheduler=$2
policy=${3:-shufflewatcher}
jobs=${4:-300}
module=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$module/.." && pwd)

if [ -z "${RACKWISE_BENCH_NO_BUILD:-}" ]; then
  (cd "$root" && mvn -B -q -pl benchmarks -am -DskipTests package)
fi
name="$nodes-$scheduler"
[ "$scheduler" = rackwise ] && name="$name-$policy"
out="$module/target/sls/$name"
rm -rf "$out"
mkdir -p "$out"
hosts="$out/hosts"
"$module/hosts.sh" "$nodes" "$hosts"
# shellcheck disable=SC2046 # the JDK flags are separate words
exec java $(cat "$module/target/jvm/opens.txt") -Xmx4g -Djdk.net.hosts.file="$hosts" \
  -Dlog4j.configuration="file:$module/sls/log4j.properties" \
  -cp "$module/target/classes:$(cat "$module/target/classpath.txt")" \
  io.rackwise.bench.sls.SlsComparison "$nodes" "$scheduler" "$out" "$policy" "$jobs"
