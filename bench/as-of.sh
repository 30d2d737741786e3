#!/usr/bin/env bash
# As-of benchmark (issue 43): derive asOf (basis verified) on a ledger of
# 50,000 deltas vs one of 100, and basis declared at 100 and 5,000. Starts
# its own wrangler dev; ~10 minutes (most of it seeding). See
# bench/README.md ("as of").
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
scripts/build-worker.sh
export BVS_TEST_STATE="$ROOT/target/bench-state"
rm -rf "$BVS_TEST_STATE/bench-as-of-"*
cargo run -p bvs-tests --release --quiet --bin bench-as-of
