#!/usr/bin/env bash
# Long Jazzer runs: every *Fuzzer target (one @FuzzTest each) for at least N executions (default
# 1,000,000) in its own JVM, then one summary line per target: executions, seconds, findings.
# A finding fails that target and is saved by Jazzer as a crash-* input under the module's
# src/test/resources/.../<Class>Inputs/<method>/, where the test command then replays it.
# The coverage corpus Jazzer grows goes to <module>/.cifuzz-corpus/ (ignored by git).
# Usage: bench/fuzz.sh [executions] [class name pattern without 'Fuzzer', e.g. 'Cid' or 'Dag*']
#                      [time limit per target, e.g. 20m; default 6h]
# (a target stopped by the time limit reports the executions it got, exit 0)
# (logs: target/fuzz/<Class>.log; summary lines are appended to target/fuzz/summary.txt)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
executions=${1:-1000000}
pattern=${2:-*}
limit=${3:-6h}
out="$root/target/fuzz"
mkdir -p "$out"
cd "$root"
summary="$out/summary.txt"
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null) executions=$executions limit=$limit" \
  >> "$summary"
for file in $(find */src/test/java -name "${pattern}Fuzzer.java" 2>/dev/null | sort); do
  module=${file%%/*}
  class=$(basename "$file" .java)
  log="$out/$class.log"
  start=$(date +%s)
  mvn -B -Pfuzz -pl "$module" -am test -Dtest="$class" \
    -Dsurefire.failIfNoSpecifiedTests=false -Dfuzz.executions="$executions" \
    -Dfuzz.duration="$limit" > "$log" 2>&1
  rc=$?
  seconds=$(( $(date +%s) - start ))
  runs=$(grep -oE 'Done [0-9]+ runs' "$log" | tail -1 | grep -oE '[0-9]+')
  findings=$(grep -cE 'FuzzTestFindingException|Test unit written' "$log")
  printf '%-24s module=%-12s executions=%-10s seconds=%-6s exit=%s findings=%s\n' \
    "$class" "$module" "${runs:-?}" "$seconds" "$rc" "$findings" | tee -a "$summary"
done
echo "summary: $summary"
