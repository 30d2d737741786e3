#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time and reports each.
# Usage: fuzz/run.sh [SECONDS_PER_TARGET]   (default 60)
# Needs the nightly toolchain and cargo-fuzz (scripts/setup.sh installs
# the pinned version when BVS_FUZZ=1, or: cargo install cargo-fuzz --locked).
# A crash leaves its input in fuzz/artifacts/<target>/; turn it into a test
# in core/tests/fuzz_regressions.rs.
set -uo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT/fuzz"
secs="${1:-60}"
targets=(amount api_key signed_note merkle_proof receipt liabilities witness)
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is not installed: cargo install cargo-fuzz --version $CARGO_FUZZ_VERSION --locked" >&2
  exit 2
fi
step "building the fuzz targets (nightly, release with debug assertions)"
cargo +nightly fuzz build -O >/dev/null 2>&1 || cargo +nightly fuzz build -O
failed=()
for t in "${targets[@]}"; do
  step "fuzzing $t for ${secs}s"
  mkdir -p "corpus/$t"
  log="target/fuzz-$t.log"
  mkdir -p target
  if cargo +nightly fuzz run -O "$t" "corpus/$t" -- -max_total_time="$secs" -max_len=4096 \
      -print_final_stats=1 >"$log" 2>&1; then
    runs=$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "$t: ok, ${runs:-?} runs, $cov, corpus $(ls "corpus/$t" | wc -l) inputs"
  else
    echo "$t: FAILED (see fuzz/$log and fuzz/artifacts/$t/)"
    grep -m5 -E 'panicked|ERROR|SUMMARY' "$log" || true
    failed+=("$t")
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz targets with crashes: ${failed[*]}"
  exit 1
fi
echo "every fuzz target ran ${secs}s without a crash"
