#!/usr/bin/env bash
# Emit fast-path benchmark (issue 16): single emit vs GET /health, batch
# deltas/s, and D1 / Durable Object round trips per hot route. ~3 minutes.
# BENCH_ROUND_SECS (default 10) sets the length of each round; BENCH_TRIES
# (default 9) the tries per route of the round-trip sample; BENCH_ONLY=trips
# measures only that sample (~1 minute).
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
export BVS_TEST_STATE="$ROOT/target/bench-state"
rm -rf "$BVS_TEST_STATE/bench-fastpath-"*
cargo run -p bvs-tests --quiet --bin bench-fastpath
