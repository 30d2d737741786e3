#!/usr/bin/env bash
# Runs every test: formatting and lints, the dashboard's type check,
# core/worker unit and property tests, verifier-wasm tests under Node
# (wasm-bindgen-test), then the black-box tests against real `wrangler dev`
# instances (the dashboard's browser journey among them).
#
#   scripts/test.sh            everything (what CI runs)
#   scripts/test.sh --quick    a typical change in minutes, after one full
#                              run (scripts/quick.sh says what it runs)
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

if [ "${1:-}" = "--quick" ]; then
  shift
  exec scripts/quick.sh "$@"
fi

step "set-up (installs only what is missing)"
scripts/setup.sh
scripts/setup-test.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "architecture invariants (scripts/check-architecture.sh), and that it catches a planted breach in every crate"
scripts/check-architecture.sh
scripts/check-architecture-selftest.sh

step "cargo clippy (native, all targets) and clippy for the worker on wasm32"
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo clippy -p bvs-worker -p bvs-verifier-wasm --features bvs-verifier-wasm/liabilities,bvs-verifier-wasm/receipt-agreement --target wasm32-unknown-unknown --quiet -- -D warnings

step "dashboard type check (tsc --noEmit -p dashboard)"
tsc --noEmit -p dashboard

step "pages type check (tsc --noEmit -p pages: the verify and agreement pages)"
tsc --noEmit -p pages

step "unit and property tests (core, worker, verifier-wasm natively)"
cargo test --workspace --exclude bvs-tests --quiet

step "verifier-wasm tests under Node (wasm-bindgen-test)"
# No --quiet: cargo hands it to wasm-bindgen-test-runner, which rejects it.
# With the liabilities check's export too (its own module's feature; core
# already has it, through the tests' own dependency on core).
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test -p bvs-verifier-wasm --target wasm32-unknown-unknown --features liabilities

step "building the worker once for every wrangler dev the tests start"
scripts/build-worker.sh

step "deploy configuration is valid (wrangler deploy --dry-run for both deploy environments)"
for env in production sandbox; do
  wrangler deploy --dry-run --env "$env" --outdir "$ROOT/target/dry-run-$env" >/dev/null
done
echo "ok"

# The fuzz smoke run (one libFuzzer process at a time, time-bounded: a
# busier machine means fewer runs, never a failure) starts now, at the
# lowest priority, and runs beside the black-box binaries, which spend
# most of their time waiting on rounds, queues and cron; its output is
# shown after them.
fuzz_log="$ROOT/target/fuzz-smoke.log"
mkdir -p "$ROOT/target"
if cargo fuzz --version >/dev/null 2>&1 && rustup toolchain list | grep -q '^nightly'; then
  nice -n 19 fuzz/run.sh "${FUZZ_SECS:-10}" >"$fuzz_log" 2>&1 &
  fuzz_pid=$!
  # A failed step above stops the run: the fuzz run with it.
  trap 'pkill -P "$fuzz_pid" 2>/dev/null; kill "$fuzz_pid" 2>/dev/null; true' EXIT
else
  echo "skipped: cargo-fuzz or the nightly toolchain is missing (scripts/setup-test.sh installs it)" >"$fuzz_log"
  fuzz_pid=""
fi

step "black-box tests through wrangler dev, the schema pass among them (schemathesis and every success path against /openapi.json)"
export BVS_TEST_STATE="$ROOT/target/test-state"
rm -rf "$BVS_TEST_STATE"
scripts/blackbox.sh

step "generated files are up to date (docs/reference.md from /openapi.json and the examples tests/tests/reference.rs captured; the SDKs' errors from sdk/errors.json)"
# reference.rs (run above) rewrote docs/reference-examples.json from a real
# run; normalised, so it changes only when an answer's shape does.
git diff --exit-code -- docs/reference-examples.json \
  || { echo "docs/reference-examples.json changed: commit the captured examples"; exit 1; }
.venv/bin/python scripts/gen-reference.py --check
python3 scripts/gen-sdk-errors.py --check
echo "ok"

step "fuzz smoke run: every cargo-fuzz target for ${FUZZ_SECS:-10}s (fuzz/run.sh, beside the black-box tests)"
fuzz_status=0
if [ -n "$fuzz_pid" ]; then
  wait "$fuzz_pid" || fuzz_status=$?
  trap - EXIT
fi
cat "$fuzz_log"
[ "$fuzz_status" -eq 0 ] || { echo "fuzz smoke run failed"; exit 1; }

step "no wrangler or workerd process left behind"
sleep 1
if pgrep -f "workerd.*$BVS_TEST_STATE|wrangler.*--persist-to $BVS_TEST_STATE" >/dev/null; then
  echo "leaked processes:"; pgrep -af "$BVS_TEST_STATE"; exit 1
fi
echo "all tests passed in ${SECONDS}s"
