#!/usr/bin/env bash
# Liabilities benchmark (issue 31 part B): build, store and publish a
# statement for BENCH_LEDGERS ledgers (default 100,000) through the
# worker's job, then one customer's proof. Starts its own wrangler dev.
# See bench/README.md ("liabilities through the worker").
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
scripts/build-worker.sh
export BVS_TEST_STATE="$ROOT/target/bench-state"
rm -rf "$BVS_TEST_STATE/bench-liabilities-"*
# Debug client: the time measured is the worker's, not the client's.
cargo run -p bvs-tests --quiet --bin bench-liabilities
