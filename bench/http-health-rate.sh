#!/usr/bin/env bash
# GET /health at fixed request rates over 16 keep-alive connections (bench/HealthLatency.java),
# latency from each request's due time (no coordinated omission), after a 5 s warm-up at the same
# rate. Unlike bench/http-health.sh (wrk, as fast as possible: both cores saturated), this is the
# tail latency a client sees at a given load. Prints the load average next to each figure.
# Usage: bench/http-health-rate.sh [rates, comma-separated] [seconds]   (default 8370,20000,50000 10)
source "$(dirname "$0")/lib.sh"
rates=${1:-8370,20000,50000}
seconds=${2:-10}
start_relay
wait_health
for rate in ${rates//,/ }; do
  load0=$(load_average)
  cpu0=$(relay_cpu)
  java -cp "$jar" "$root/bench/HealthLatency.java" "$port" "$rate" 16 "$seconds" 5
  echo "load $load0 -> $(load_average); relay CPU $(awk -v a="$cpu0" -v b="$(relay_cpu)" 'BEGIN{printf "%.2f", b-a}') s"
done
