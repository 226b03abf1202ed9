#!/usr/bin/env bash
# Hostile-peer load (bench/HostileBench.java): honest Java peers replicate OrbitDB databases and
# fetch files through the relay (a separate ./relay-pinner process on loopback, as deployed)
# while hostile Java peers flood subscriptions, PRUNEs, 64 KiB topics, garbage RPCs, bitswap
# wants, heads-protocol garbage, stream opens and slow reads. Bounded: every round gives up
# after 5 minutes, the attack lasts [attack s] (at least the honest round under attack).
# Prints the honest median replication time with and without the attack, the relay's RSS
# growth, and whether a new database is served afterwards.
# Usage: bench/hostile.sh [honest] [hostile] [entries] [file KiB] [attack s]
# (needs the jar and the relay's and orbitdb's test classes: mvn -B -q -DskipTests package)
source "$(dirname "$0")/lib.sh"
classes="$root/relay/target/test-classes:$root/orbitdb/target/test-classes"
[ -f "$root/relay/target/test-classes/io/relaypinner/relay/hostile/HostileLoad.class" ] \
  && [ -f "$root/orbitdb/target/test-classes/io/relaypinner/orbitdb/JavaWriter.class" ] \
  || { echo "build first: mvn -B -q -DskipTests package" >&2; exit 1; }
start_relay
wait_health
java -Xmx1g ${BENCH_JAVA_OPTS:-} -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar:$classes" \
  "$root/bench/HostileBench.java" "$port" "$relay_pid" "${1:-10}" "${2:-16}" "${3:-20}" \
  "${4:-256}" "${5:-60}"
cp "$data/stderr.txt" "$root/target/hostile-relay-stderr.txt" 2>/dev/null || true
# What the relay logged meanwhile (a remote's fault must not log an ERROR or a stack trace).
echo "relay log: $(grep -c ' ERROR ' "$data/stderr.txt") ERROR lines," \
  "$(grep -c ' WARN ' "$data/stderr.txt") WARN lines, $(grep -c '^\s*at ' "$data/stderr.txt")" \
  "stack trace lines"
grep -E ' (ERROR|WARN) ' "$data/stderr.txt" | sed -E 's/^[^ ]+ //' | sort | uniq -c | sort -rn \
  | head -10 || true
echo "relay log kept in target/hostile-relay-stderr.txt"
