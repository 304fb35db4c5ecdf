#!/bin/sh
# JMH benchmark of the heartbeat path (HeartbeatBenchmark): stock FairScheduler and Rackwise,
# one JMH run, one forked JVM per scheduler value (see BENCHMARK.md).
#
#   benchmarks/jmh.sh [JMH options...]
#
# e.g. benchmarks/jmh.sh -p scheduler=stock,rackwise-shufflewatcher -p nodes=1000 -prof gc
set -eu
module=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$module/.." && pwd)
if [ -z "${RACKWISE_BENCH_NO_BUILD:-}" ]; then
  (cd "$root" && mvn -B -q -pl benchmarks -am -DskipTests package)
fi
# Names for up to 5,000 simulated nodes (the benchmark's largest `nodes` in BENCHMARK.md).
hosts="$module/target/jmh-hosts"
"$module/hosts.sh" 5000 "$hosts"
# JMH starts its forks with this JVM's flags, the JDK 17 ones and the hosts file included.
# shellcheck disable=SC2046 # the JDK flags are separate words
exec java $(cat "$module/target/jvm/opens.txt") -Djdk.net.hosts.file="$hosts" \
  -Dlog4j.configuration="file:$module/sls/log4j.properties" \
  -cp "$module/target/classes:$(cat "$module/target/classpath.txt")" \
  org.openjdk.jmh.Main HeartbeatBenchmark "$@"
