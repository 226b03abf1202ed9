# Shared helpers for the load scripts: start the relay (through ./relay-pinner, as users do) on loopback with a throwaway data
# directory, wait for /health, stop it. Sourced, not run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jar="$root/cli/target/relay-pinner.jar"
[ -f "$jar" ] || { echo "build first: mvn -B -q -DskipTests package" >&2; exit 1; }
port=${BENCH_PORT:-19190}
data=$(mktemp -d)
relay_pid=
# Optional CPU pinning (taskset lists, e.g. BENCH_RELAY_CPUS=0 BENCH_WRK_CPUS=1): on a 2-core
# machine the load generator and the relay otherwise compete for the same cores, and the tail
# latency measured is partly the scheduler's. Unset: no pinning (the recorded default).
relay_pin=()
[ -n "${BENCH_RELAY_CPUS:-}" ] && relay_pin=(taskset -c "$BENCH_RELAY_CPUS")
wrk_pin=()
[ -n "${BENCH_WRK_CPUS:-}" ] && wrk_pin=(taskset -c "$BENCH_WRK_CPUS")

start_relay() {
  DATASTORE_PATH="$data" METRICS_HOST=127.0.0.1 METRICS_PORT="$port" LOG_LEVEL=warn \
    RELAY_LISTEN_IPV4=127.0.0.1 RELAY_DISABLE_IPV6=true RELAY_TCP_PORT=0 RELAY_WS_PORT=0 RELAY_QUIC_PORT=0 \
    "${relay_pin[@]}" "$root/relay-pinner" run >/dev/null 2>"$data/stderr.txt" &
  relay_pid=$!
}

# The 1-minute load average, to print next to every figure.
load_average() { cut -d' ' -f1 /proc/loadavg; }

# CPU seconds (user + system) the relay has used so far (the launcher execs java: same pid).
relay_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$relay_pid/stat"; }

# Runs wrk (pinned when asked) and prints, after its output, one line with the machine's load
# before and after, and the CPU seconds wrk and the relay used during the run.
measured_wrk() {
  local load0 cpu0 times_file
  load0=$(load_average)
  cpu0=$(relay_cpu)
  times_file=$(mktemp)
  # bash's time keyword: wrk's own user and system CPU seconds.
  { TIMEFORMAT='%U %S'; time "${wrk_pin[@]}" wrk "$@"; } 2>"$times_file"
  awk -v l0="$load0" -v l1="$(load_average)" -v c0="$cpu0" -v c1="$(relay_cpu)" \
    '{printf "load %s -> %s; CPU seconds: wrk %.2f, relay %.2f\n", l0, l1, $1 + $2, c1 - c0}' \
    "$times_file"
  rm -f "$times_file"
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
