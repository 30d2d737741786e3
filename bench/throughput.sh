#!/usr/bin/env bash
# Throughput benchmark (issue 27): batch intake vs the drain of its backlog
# on one shard, a quiet tenant's p99 lag beside a noisy one, a fresh
# tenant's delta after a burst, and Worker CPU per verified delta. Starts
# its own wrangler dev servers; ~15 minutes per build. See bench/README.md
# ("throughput"). BENCH_BUILDS=before=DIR,after= compares a saved build
# (a copy of worker/build) with this checkout's; bench/throughput.sh
# --before builds main's Worker into target/bench-before first.
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
scripts/build-worker.sh
export BVS_TEST_STATE="$ROOT/target/bench-state"
rm -rf "$BVS_TEST_STATE/bench-throughput-"*
if [ "${1:-}" = "--before" ]; then
  # main's Worker, built in a scratch worktree of this repository.
  before="${BENCH_BEFORE_REF:-main}"
  scratch="$ROOT/target/bench-before-src"
  rm -rf "$scratch"
  git worktree add --detach "$scratch" "$before" >/dev/null
  (cd "$scratch" && ln -s "$ROOT/node_modules" node_modules && FORCE_BUILD=1 CARGO_TARGET_DIR="$ROOT/target/bench-before-target" bash scripts/build-worker.sh)
  rm -rf "$ROOT/target/bench-before" && cp -r "$scratch/worker/build" "$ROOT/target/bench-before"
  git worktree remove --force "$scratch"
  export BENCH_BUILDS="${BENCH_BUILDS:-before=$ROOT/target/bench-before,after=}"
fi
cargo run -p bvs-tests --release --quiet --bin bench-throughput
