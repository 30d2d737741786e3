#!/usr/bin/env bash
# Witnesses (issue 28): emit -> witnessed head p50/p99 with three local
# witnesses (quorum 2), and the emit's latency with and without witnesses
# (tests/src/bin/bench-witnessed.rs). ~3 minutes. BENCH_SAMPLES (default
# 30) emits timed to witnessed; BENCH_EMITS (default 100) emits per server.
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
export BVS_TEST_STATE="$ROOT/target/bench-state"
rm -rf "$BVS_TEST_STATE/bench-witnessed-"*
cargo run -p bvs-tests --quiet --bin bench-witnessed
