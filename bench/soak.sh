#!/usr/bin/env bash
# Soak (issue 36; not part of the test command): one hour (by default) of honest replication
# rounds and HTTP polling alongside the hostile peers of bench/hostile.sh, against a relay run
# through ./relay-pinner with the launcher's memory settings. Samples the relay every 10 s (RSS,
# heap after a full GC, open file descriptors, threads, connections) and prints each series'
# range and slope per hour, plus the honest clients' errors; the samples and an SVG plot go to
# target/soak/ (soak.csv, soak.svg). Record the table in docs/benchmarks.md "Soak".
# Usage: bench/soak.sh [seconds] [honest peers per round] [hostile peers]
# (SOAK_WARMUP=<seconds>: samples left out of the slopes, default 300; SOAK_DATABASES=<n>: the
# databases honest peers take turns appending to, default 200, inside the capacity of the
# launcher's heap; 0: each peer makes a new database, so the followed databases grow until the
# heap's bound, then idle ones make room)
# (needs the jar and the relay's and orbitdb's test classes: mvn -B -q -DskipTests package)
source "$(dirname "$0")/lib.sh"
classes="$root/relay/target/test-classes:$root/orbitdb/target/test-classes"
[ -f "$root/relay/target/test-classes/io/relaypinner/relay/hostile/HostileLoad.class" ] \
  && [ -f "$root/orbitdb/target/test-classes/io/relaypinner/orbitdb/JavaWriter.class" ] \
  || { echo "build first: mvn -B -q -DskipTests package" >&2; exit 1; }
start_relay
wait_health
out="$root/target/soak"
mkdir -p "$out"
echo "machine load before: $(load_average)"
java -Xmx1g ${BENCH_JAVA_OPTS:-} -Dsoak.warmup="${SOAK_WARMUP:-300}" -Dsoak.databases="${SOAK_DATABASES:-200}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar:$classes" \
  "$root/bench/SoakBench.java" "$port" "$relay_pid" "$out" "${1:-3600}" "${2:-4}" "${3:-8}"
echo "machine load after: $(load_average)"
cp "$data/stderr.txt" "$out/relay-stderr.txt" 2>/dev/null || true
echo "relay log: $(grep -c ' ERROR ' "$data/stderr.txt") ERROR lines," \
  "$(grep -c ' WARN ' "$data/stderr.txt") WARN lines, $(grep -c '^\s*at ' "$data/stderr.txt")" \
  "stack trace lines (kept in $out/relay-stderr.txt)"
