#!/usr/bin/env bash
# Resident memory of the whole relay process (RSS of the java process the launcher execs, from
# /proc; no child processes exist): idle 10 s after /health first answers, then after the HTTP
# load of http-health.sh (wrk -t2 -c16, 5 s warm-up + 3 x 10 s) and of http-newconn.sh (3 x 10 s),
# and again 10 s after the load stopped.
# Usage: bench/memory.sh   (needs wrk: apt-get install wrk)
source "$(dirname "$0")/lib.sh"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
rss() { awk '/^VmRSS/ {printf "%.1f MiB", $2 / 1024}' "/proc/$relay_pid/status"; }
hwm() { awk '/^VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$relay_pid/status"; }
start_relay
wait_health
sleep 10
echo "idle:            RSS $(rss)"
url="http://127.0.0.1:$port/health"
wrk -t2 -c16 -d5s "$url" >/dev/null
for _ in 1 2 3; do wrk -t2 -c16 -d10s "$url" >/dev/null; done
echo "after keep-alive load: RSS $(rss)"
for _ in 1 2 3; do wrk -t2 -c16 -d10s -H 'Connection: close' "$url" >/dev/null; done
echo "after new-connection load: RSS $(rss) (peak $(hwm))"
sleep 10
echo "10 s later:      RSS $(rss) (peak $(hwm))"
