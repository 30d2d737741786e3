#!/usr/bin/env bash
# wrangler's [build] command. Builds the Worker with worker-build, and skips
# the build when nothing it depends on changed since the last one.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
out="worker/build/index.js"
# One build at a time: several wrangler dev instances may start at once.
mkdir -p target
exec 9>target/.worker-build.lock
flock 9
if [ -f "$out" ] && [ -z "${FORCE_BUILD:-}" ] \
  && [ -z "$(find core/src worker/src core/Cargo.toml worker/Cargo.toml Cargo.toml Cargo.lock -newer "$out" -print -quit 2>/dev/null)" ]; then
  echo "worker build is up to date"
  exit 0
fi
echo "building the worker (worker-build --release)"
cd worker
worker-build --release
