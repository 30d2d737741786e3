#!/usr/bin/env bash
# Emit fast-path benchmark (issue 16): single emit vs GET /health, batch
# deltas/s, and D1 / Durable Object round trips per hot route. ~3 minutes.
# BENCH_ROUND_SECS (default 10) sets the length of each round; BENCH_TRIES
# (default 9) the tries per route of the round-trip sample; BENCH_ONLY=trips
# measures only that sample (~2 minutes, tests/src/bin/bench-trips.rs).
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
export BVS_TEST_STATE="$ROOT/target/bench-state"
rm -rf "$BVS_TEST_STATE/bench-fastpath-"* "$BVS_TEST_STATE/bench-trips-"*
# Round trips per hot route first, on a quiet server of its own
# (tests/src/bin/bench-trips.rs).
cargo run -p bvs-tests --quiet --bin bench-trips
echo
if [ "${BENCH_ONLY:-}" = trips ]; then
  exit 0
fi
cargo run -p bvs-tests --quiet --bin bench-fastpath
