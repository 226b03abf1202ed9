# Shared helpers for the load scripts: start the relay (through ./relay-pinner, as users do) on loopback with a throwaway data
# directory, wait for /health, stop it. Sourced, not run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jar="$root/cli/target/relay-pinner.jar"
[ -f "$jar" ] || { echo "build first: mvn -B -q -DskipTests package" >&2; exit 1; }
port=${BENCH_PORT:-19190}
data=$(mktemp -d)
relay_pid=

start_relay() {
  DATASTORE_PATH="$data" METRICS_HOST=127.0.0.1 METRICS_PORT="$port" LOG_LEVEL=warn \
    RELAY_LISTEN_IPV4=127.0.0.1 RELAY_DISABLE_IPV6=true RELAY_TCP_PORT=0 RELAY_WS_PORT=0 \
    "$root/relay-pinner" run >/dev/null 2>"$data/stderr.txt" &
  relay_pid=$!
}

wait_health() {
  for _ in $(seq 1 3000); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    sleep 0.01
  done
  echo "relay did not answer /health" >&2; cat "$data/stderr.txt" >&2; return 1
}

stop_relay() {
  [ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null && wait "$relay_pid" 2>/dev/null || true
  relay_pid=
}

trap 'stop_relay; rm -rf "$data"' EXIT
