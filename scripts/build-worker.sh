#!/usr/bin/env bash
# wrangler's [build] command. Builds the Worker with worker-build, and skips
# the build when nothing it depends on changed since the last build started.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
# The pages' scripts are static assets wrangler serves from public/: built
# here too (skipped when up to date), so every wrangler dev has them.
scripts/build-pages.sh
out="worker/build/index.js"
# One build at a time: several wrangler dev instances may start at once.
mkdir -p target
exec 9>target/.worker-build.lock
flock 9
# The stamp is the *start* time of the last successful build: a source
# edited while a build ran is newer than it, so the next call rebuilds.
built_from="target/.worker-built-from"
if [ -f "$out" ] && [ -f "$built_from" ] && [ -z "${FORCE_BUILD:-}" ] \
  && [ -z "$(find core/src worker/src core/Cargo.toml worker/Cargo.toml Cargo.toml Cargo.lock -newer "$built_from" -print -quit 2>/dev/null)" ]; then
  echo "worker build is up to date"
  exit 0
fi
started="target/.worker-build-started.$$"
touch "$started"
echo "building the worker (worker-build --release)"
(cd worker && worker-build --release)
mv "$started" "$built_from"
scripts/check-worker-size.sh
