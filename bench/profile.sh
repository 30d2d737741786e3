#!/usr/bin/env bash
# Profiling aid (issue 16): rounds of one request kind against a fresh
# wrangler dev, with CPU ms per request; attach a profiler to the printed
# process group while it runs. Usage: bash bench/profile.sh emit health ...
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
export BVS_TEST_STATE="$ROOT/target/bench-state"
rm -rf "$BVS_TEST_STATE/bench-profile-"*
cargo run -p bvs-tests --quiet --bin bench-profile -- "$@"
