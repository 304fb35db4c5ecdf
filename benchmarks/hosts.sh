#!/bin/sh
# Writes a hosts file naming the benchmarks' simulated NodeManagers, for -Djdk.net.hosts.file.
#
#   benchmarks/hosts.sh <nodes> <file>
#
# The simulated hosts (r<rack>n<node>, racks of 20, as HeartbeatBenchmark and SlsComparison
# name them) have no DNS entries, and the RM resolves each NodeManager's name as it registers:
# answered by a resolver that times out, that takes minutes. With this file the JDK reads the
# names from it instead of asking DNS.
set -eu
nodes=$1
file=$2
{
  echo "127.0.0.1 localhost $(hostname)"
  i=0
  while [ "$i" -lt "$nodes" ]; do
    echo "127.0.0.1 r$((i / 20))n$((i % 20))"
    i=$((i + 1))
  done
} > "$file"
