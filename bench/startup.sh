#!/usr/bin/env bash
# Start to first successful GET /health, with a fresh data directory each time (so the identity
# key is created too). Prints each run in milliseconds, with the machine's load and the CPU seconds
# the relay process had used when it first answered (less sensitive to other load than the wall
# time), and the medians.
# Usage: bench/startup.sh [runs]
source "$(dirname "$0")/lib.sh"
runs=${1:-7}
times=()
cpus=()
for i in $(seq 1 "$runs"); do
  rm -rf "$data"/*
  t0=$(date +%s%N)
  start_relay
  wait_health
  t1=$(date +%s%N)
  cpus+=("$(relay_cpu)")
  stop_relay
  times+=($(( (t1 - t0) / 1000000 )))
  echo "run $i: ${times[-1]} ms (load $(load_average), relay CPU ${cpus[-1]} s)"
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print "median: " a[int((NR+1)/2)] " ms"}'
printf '%s\n' "${cpus[@]}" | sort -n | awk '{a[NR]=$1} END {print "median CPU: " a[int((NR+1)/2)] " s"}'
