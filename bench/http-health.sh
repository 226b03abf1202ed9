#!/usr/bin/env bash
# GET /health under load: wrk with 2 threads and 16 connections for 10 s, after a 5 s warm-up
# (which also lets the JIT compile the hot path). Each run prints the load average before and
# after, and the CPU seconds wrk and the relay used. BENCH_WRK_CPUS / BENCH_RELAY_CPUS pin them
# (see lib.sh); BENCH_WRK_THREADS sets wrk's threads (default 2).
# Usage: bench/http-health.sh [runs]   (needs wrk: apt-get install wrk)
source "$(dirname "$0")/lib.sh"
runs=${1:-3}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
start_relay
wait_health
threads=${BENCH_WRK_THREADS:-2}
"${wrk_pin[@]}" wrk -t"$threads" -c16 -d5s "http://127.0.0.1:$port/health" >/dev/null
for i in $(seq 1 "$runs"); do
  echo "== run $i"
  measured_wrk -t"$threads" -c16 -d10s --latency "http://127.0.0.1:$port/health" \
    | grep -E 'Requests/sec|^ +(50|90|99)%|^load'
done
