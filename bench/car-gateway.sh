#!/usr/bin/env bash
# GET /ipfs/<cid>?format=car (trustless gateway, CAR v1, dag-scope=all, dups=n) of a pinned 100 MiB
# file (1 MiB raw leaves under a dag-pb root), downloaded with curl by 1 and by 4 parallel clients
# after a warm-up; prints the aggregate throughput. The body is checked once: its size must match
# the Content-Length (the CAR is planned, so its length is exact).
# Usage: bench/car-gateway.sh [ROUNDS]   (build first: mvn -B -q -DskipTests package)
source "$(dirname "$0")/lib.sh"
rounds=${1:-10}
cid=$(java -cp "$jar" "$root/bench/ImportAndPin.java" "$data" 100)
start_relay
wait_health
url="http://127.0.0.1:$port/ipfs/$cid?format=car"
length=$(curl -sfI "$url" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-length"{print $2}')
got=$(curl -sf "$url" | wc -c)
[ "$got" = "$length" ] || { echo "CAR of $got bytes, Content-Length $length" >&2; exit 1; }
for _ in 1 2 3; do curl -sf -o /dev/null "$url"; done
measure() {
  local clients=$1 start end
  start=$(date +%s%N)
  for _ in $(seq 1 "$clients"); do
    (for _ in $(seq 1 "$rounds"); do curl -sf -o /dev/null "$url"; done) &
  done
  wait
  end=$(date +%s%N)
  awk -v c="$clients" -v b="$length" -v n=$((clients * rounds)) -v ns=$((end - start)) \
    'BEGIN { printf "%d client(s): %d CARs of %d bytes in %.2f s = %.2f GB/s\n", c, n, b, ns / 1e9, b * n / (ns / 1e9) / 1e9 }'
}
echo "== $cid ($length bytes of CAR)"
measure 1
measure 4
