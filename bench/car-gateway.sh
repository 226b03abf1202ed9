#!/usr/bin/env bash
# GET /ipfs/<cid>?format=car (trustless gateway: CAR v1, dag-scope=all, dups=n) of a pinned
# 100 MiB file (1 MiB raw leaves under a dag-pb root, bench/ImportAndPin.java), next to the plain
# GET /ipfs/<cid> of the same file: wrk with 2 threads and 8 connections for 10 s after a 3 s
# warm-up. The CAR is checked once first: its size must equal its Content-Length (CARs are
# planned before they are sent, so the length is exact). Prints requests/s and transfer/s.
# Usage: bench/car-gateway.sh   (needs wrk: apt-get install wrk; build first)
source "$(dirname "$0")/lib.sh"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
cid=$(java -cp "$jar" "$root/bench/ImportAndPin.java" "$data" 100)
start_relay
wait_health
car="http://127.0.0.1:$port/ipfs/$cid?format=car"
length=$(curl -sfI "$car" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-length"{print $2}')
got=$(curl -sf "$car" | wc -c)
[ "$got" = "$length" ] || { echo "CAR of $got bytes, Content-Length $length" >&2; exit 1; }
for url in "$car" "http://127.0.0.1:$port/ipfs/$cid"; do
  "${wrk_pin[@]}" wrk -t2 -c8 -d3s "$url" >/dev/null
  echo "== $url"
  measured_wrk -t2 -c8 -d10s "$url" | grep -E 'Requests/sec|Transfer/sec|^load'
done
