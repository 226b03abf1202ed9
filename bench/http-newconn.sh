#!/usr/bin/env bash
# GET /health with a new TCP connection per request: wrk sends "Connection: close", so the relay
# closes after each answer and wrk reconnects (16 connections, 10 s, after a 3 s warm-up).
# Each run prints the load average and the CPU seconds of wrk and the relay (see lib.sh for
# BENCH_WRK_CPUS / BENCH_RELAY_CPUS).
# Usage: bench/http-newconn.sh [runs]   (needs wrk: apt-get install wrk)
source "$(dirname "$0")/lib.sh"
runs=${1:-3}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
start_relay
wait_health
"${wrk_pin[@]}" wrk -t2 -c16 -d3s -H 'Connection: close' "http://127.0.0.1:$port/health" >/dev/null
for i in $(seq 1 "$runs"); do
  echo "== run $i"
  measured_wrk -t2 -c16 -d10s --latency -H 'Connection: close' "http://127.0.0.1:$port/health" \
    | grep -E 'Requests/sec|^ +(50|90|99)%|Socket errors|^load'
done
