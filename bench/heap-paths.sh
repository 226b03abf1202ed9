#!/usr/bin/env bash
# What holds a running relay's heap: takes a heap dump of the relay process (live objects, after
# a full GC) and reads it with bench/HeapPaths.java on the NetBeans heap library
# (org.gridkit.jvmtool:hprof-heap, fetched into the local Maven repository on first use).
# Usage: bench/heap-paths.sh <relay pid | dump.hprof> [--biggest] [@<class>...] [<class>...]
#   e.g. bench/heap-paths.sh 12345 --biggest @io.relaypinner.libp2p.host.PeerStore \
#        io.relaypinner.multiformats.Cid
# The dump (the size of the live heap) is kept in /tmp/relay-<pid>-<time>.hprof.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=${MAVEN_REPO:-$HOME/.m2/repository}   # the local Maven repository (MAVEN_REPO if elsewhere)
heap_jar="$repo/org/gridkit/jvmtool/hprof-heap/0.16/hprof-heap-0.16.jar"
rand_jar="$repo/org/gridkit/gzrand/gzrand/0.2/gzrand-0.2.jar"
if [ ! -f "$heap_jar" ] || [ ! -f "$rand_jar" ]; then
  echo "heap-paths: fetching org.gridkit.jvmtool:hprof-heap:0.16 into $repo" >&2
  mvn -B -q -Dmaven.repo.local="$repo" dependency:get -Dartifact=org.gridkit.jvmtool:hprof-heap:0.16 >&2
  mvn -B -q -Dmaven.repo.local="$repo" dependency:get -Dartifact=org.gridkit.gzrand:gzrand:0.2 >&2
fi
target=${1:?"usage: bench/heap-paths.sh <relay pid | dump.hprof> [--biggest] [@<class>...] [<class>...]"}
shift
if [ -f "$target" ]; then
  dump=$target
else
  dump=/tmp/relay-$target-$(date +%s).hprof
  echo "heap-paths: dumping the heap of $target to $dump" >&2
  jcmd "$target" GC.heap_dump "$dump" >&2
fi
exec java -Xmx4g -cp "$heap_jar:$rand_jar" "$here/HeapPaths.java" "$dump" "${@:---biggest}"
