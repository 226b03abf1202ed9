#!/usr/bin/env bash
# Start to first successful GET /health, with a fresh data directory each time (so the identity
# key is created too). Prints each run in milliseconds and the median.
# Usage: bench/startup.sh [runs]
source "$(dirname "$0")/lib.sh"
runs=${1:-7}
times=()
for i in $(seq 1 "$runs"); do
  rm -rf "$data"/*
  t0=$(date +%s%N)
  start_relay
  wait_health
  t1=$(date +%s%N)
  stop_relay
  times+=($(( (t1 - t0) / 1000000 )))
  echo "run $i: ${times[-1]} ms (load $(load_average))"
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print "median: " a[int((NR+1)/2)] " ms"}'
