#!/usr/bin/env bash
# Shard benchmark (issue 15): aggregate verified deltas/s with 1 vs 4
# sandbox shards, and a quiet tenant's p99 verification lag alone, beside a
# noisy tenant on another shard, and on the same shard. Starts its own
# wrangler dev servers; ~10-20 minutes. See bench/README.md ("shards").
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
scripts/setup.sh
scripts/build-worker.sh
export BVS_TEST_STATE="$ROOT/target/bench-state"
export BVS_MIGRATE_SHARDS=4   # migrate sandbox shards 2 and 3 too
rm -rf "$BVS_TEST_STATE"
cargo run -p bvs-tests --release --quiet --bin bench-shards
