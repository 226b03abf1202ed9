#!/usr/bin/env bash
# GET /ipfs/<cid> for a pinned 1 MiB file (one raw block: served zero-copy) and a pinned 100 MiB
# file (1 MiB raw leaves under a dag-pb root), wrk with 2 threads and 8 connections for 10 s after
# a 3 s warm-up. Prints requests/s and transfer/s per file.
# Usage: bench/ipfs-gateway.sh   (needs wrk: apt-get install wrk; build first)
source "$(dirname "$0")/lib.sh"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
small=$(java -cp "$jar" "$root/bench/ImportAndPin.java" "$data" 1)
large=$(java -cp "$jar" "$root/bench/ImportAndPin.java" "$data" 100)
start_relay
wait_health
for cid in "$small" "$large"; do
  url="http://127.0.0.1:$port/ipfs/$cid"
  curl -sf -o /dev/null "$url" || { echo "GET $url failed" >&2; exit 1; }
  wrk -t2 -c8 -d3s "$url" >/dev/null
  echo "== $cid"
  wrk -t2 -c8 -d10s "$url" | grep -E 'Requests/sec|Transfer/sec'
done
