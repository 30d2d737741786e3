#!/usr/bin/env bash
# Service benchmark: starts its own wrangler dev and prints a table.
# Takes several minutes (it seeds 111k deltas and grows a log to 1M leaves).
# It first prints the emit fast-path table (bench/fastpath.sh's, issue 16).
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
scripts/setup.sh
scripts/build-worker.sh
export BVS_TEST_STATE="$ROOT/target/bench-state"
rm -rf "$BVS_TEST_STATE"
# Issue 16 first: single emit and its p50 vs GET /health, batch deltas/s,
# and D1 / Durable Object round trips per hot route (bench-fastpath).
cargo run -p bvs-tests --release --quiet --bin bench-fastpath
cargo run -p bvs-tests --release --quiet --bin bench-service
