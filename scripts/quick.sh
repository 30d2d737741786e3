#!/usr/bin/env bash
# `scripts/test.sh --quick [BASE]`: checks a typical change in minutes,
# after one full `scripts/test.sh` has built everything once. What changed
# is the work tree against BASE (default HEAD: the uncommitted change;
# `--quick main` checks a branch's commits too), untracked files included.
#
#   - cargo fmt --check and scripts/check-architecture.sh, always;
#   - clippy (-D warnings) of the crates that changed, and of the Worker on
#     wasm32 when the worker or the verifier changed;
#   - the unit tests of the crates that changed and of those built on them
#     (a core change runs core's, the CLI's, the Worker's and the
#     verifier's; the verifier's under Node too);
#   - the type checks of the pages, the dashboard or the TypeScript SDK
#     when they changed;
#   - the black-box binaries that touch what changed (the map below: a
#     room's binaries, a changed test binary itself, and for any change to
#     core or the worker the emit -> sequencer -> receipt path: `balance`
#     and `proofs`), through scripts/blackbox.sh.
#
# It is not the full suite: the schema pass, the fuzz run, the deploy
# dry run and the binaries of rooms that did not change run only in
# scripts/test.sh, which CI runs. QUICK_PRINT=1 prints the plan and exits;
# QUICK_FILES="path ..." plans for those paths instead of the change.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

base="${1:-HEAD}"
git rev-parse --verify --quiet "$base^{commit}" >/dev/null \
  || { echo "quick: $base is not a commit" >&2; exit 2; }
changed=$( (git diff --name-only "$base" --; git ls-files --others --exclude-standard) | sort -u)
# QUICK_FILES="a b": plan for these paths instead (with QUICK_PRINT=1).
[ -z "${QUICK_FILES:-}" ] || changed=$(tr ' ' '\n' <<<"$QUICK_FILES")
if [ -z "$changed" ]; then
  echo "quick: nothing changed against $base (scripts/test.sh --quick HEAD~1 checks the last commit)"
  exit 0
fi

crates=()      # -p names whose own code changed (clippy)
tested=()      # -p names whose unit tests run
wasm=""        # the Worker's or the verifier's wasm32 code changed
node_tests=""  # verifier-wasm's tests under Node
tsc=()         # TypeScript projects to type-check
bins=()        # black-box binaries (names of tests/tests/*.rs)
sdk_errors=""  # the SDKs' generated errors (sdk/errors.json)
add() { local -n list="$1"; shift; local x; for x in "$@"; do [[ " ${list[*]-} " == *" $x "* ]] || list+=("$x"); done; }

# The emit -> sequencer -> receipt path: a delta emitted, anchored and
# derived (balance), a receipt verified and tampered (proofs).
SPINE=(balance proofs)

# A changed file's black-box binaries: by the room it is in. The worker's
# rooms (worker/src/<room>/, its route file routes/<room>.rs and its
# store file store/<room>.rs share the name) and core's files.
binaries_of_room() {
  case "$1" in
    emit|idempotent|idempotency) echo "balance idempotency_crash trips" ;;
    sequencer|rounds|submissions|sets) echo "balance sequencer_failure shards" ;;
    proofs|receipts|checkpoints|log|tiles|roots|heads) echo "proofs privacy tiles_served" ;;
    ledger|shard|backfill|doorbell) echo "shards shard_growth tiles_served tiles_migration" ;;
    ledgers|deltas|derive|pinpoint|charts|customers) echo "balance compare_pinpoint" ;;
    witness|cosignature|policy|frontier) echo "witnessed witness_crosscheck" ;;
    liabilities) echo "liabilities" ;;
    agreement) echo "agreement agree_browser" ;;
    webhooks|events|signing|delivery|dispatch) echo "webhooks webhook_cap" ;;
    auth|accounts|keys|api_keys|jwt|limit|device|password|contracts|secret) echo "attacks isolation ergonomics" ;;
    request_log|redact|views|search|insights) echo "dashboard_logs dashboard" ;;
    retention|cron|sweeper) echo "retention retention_fair sweeper" ;;
    mail|mailer) echo "mail_queue" ;;
    meter|meters|quota|usage|plan|limiter) echo "metering" ;;
    facts) echo "agreement" ;;
    openapi) echo "reference" ;;
    verify|receipt|public_answer|inclusion|head|note|merkle|item) echo "proofs auditor" ;;
  esac
}

while read -r f; do
  case "$f" in
    core/*)
      add crates bvs-core; add tested bvs-core bvs-verify bvs-worker bvs-verifier-wasm
      node_tests=1; add bins "${SPINE[@]}" ;;&
    worker/*)
      add crates bvs-worker; add tested bvs-worker; wasm=1; add bins "${SPINE[@]}" ;;&
    cli/*) add crates bvs-verify; add tested bvs-verify; add bins auditor ;;&
    verifier-wasm/*)
      add crates bvs-verifier-wasm; add tested bvs-verifier-wasm; wasm=1; node_tests=1
      add bins verify_page ;;&
    tests/*) add crates bvs-tests ;;&
    core/src/*|worker/src/*)
      # The room: the first folder below src/, or the file's own name.
      rest="${f#*/src/}"; rest="${rest#routes/}"; rest="${rest#store/}"
      room="${rest%%/*}"; room="${room%.rs}"; room="${room%.json}"
      # shellcheck disable=SC2046 # a list of names
      add bins $(binaries_of_room "$room") ;;
    tests/tests/*)
      name="${f#tests/tests/}"; name="${name%%/*}"; name="${name%.rs}"
      [ -f "tests/tests/$name.rs" ] && add bins "$name" ;;
    tests/src/*) add bins "${SPINE[@]}" ;;
    tests/browser/verify*) add bins verify_page ;;
    tests/browser/agree*) add bins agree_browser ;;
    tests/browser/dashboard*) add bins dashboard_browser ;;
    pages/*) add tsc pages; add bins verify_page agree_browser ;;
    dashboard/*) add tsc dashboard; add bins dashboard dashboard_browser ;;
    sdk/typescript/*) add tsc sdk; sdk_errors=1; add bins quickstart sdk_witness ;;
    sdk/python/*) sdk_errors=1; add bins quickstart sdk_witness ;;
    sdk/errors.json|scripts/gen-sdk-errors.py) sdk_errors=1; add tsc sdk; add bins quickstart ;;
    docs/quickstart.md) add bins quickstart ;;
    migrations/*) add bins "${SPINE[@]}" tiles_migration ;;
  esac
done <<<"$changed"

echo "quick: $(wc -l <<<"$changed") file(s) changed against $base"
echo "  clippy: ${crates[*]:-none}${wasm:+ (and the Worker on wasm32)}"
echo "  unit tests: ${tested[*]:-none}${node_tests:+ (and verifier-wasm under Node)}"
echo "  type checks: ${tsc[*]:-none}"
echo "  black-box binaries: ${bins[*]:-none}"
[ -z "${QUICK_PRINT:-}" ] || exit 0

# The Worker the black-box binaries start is built meanwhile, beside the
# native checks (its own cargo target and profile, so no lock is shared);
# they wait for it below.
worker_build=""
if [ ${#bins[@]} -gt 0 ]; then
  mkdir -p target
  scripts/build-worker.sh >target/quick-worker-build.log 2>&1 &
  worker_build=$!
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "architecture invariants (scripts/check-architecture.sh)"
scripts/check-architecture.sh

if [ ${#crates[@]} -gt 0 ]; then
  step "cargo clippy -p ${crates[*]}"
  cargo clippy "${crates[@]/#/--package=}" --all-targets --quiet -- -D warnings
fi
if [ -n "$wasm" ]; then
  step "cargo clippy for the worker and the verifier on wasm32"
  cargo clippy -p bvs-worker -p bvs-verifier-wasm --features bvs-verifier-wasm/liabilities,bvs-verifier-wasm/receipt-agreement --target wasm32-unknown-unknown --quiet -- -D warnings
fi

if [ -n "$sdk_errors" ]; then
  step "the SDKs' errors are generated from sdk/errors.json"
  python3 scripts/gen-sdk-errors.py --check
fi

for project in "${tsc[@]}"; do
  step "type check: $project"
  case "$project" in
    sdk) (cd sdk/typescript && tsc --noEmit -p tsconfig.json) ;;
    *) tsc --noEmit -p "$project" ;;
  esac
done

if [ ${#tested[@]} -gt 0 ]; then
  step "unit and property tests: ${tested[*]}"
  cargo test "${tested[@]/#/--package=}" --quiet
fi
if [ -n "$node_tests" ]; then
  step "verifier-wasm tests under Node (wasm-bindgen-test)"
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
    cargo test -p bvs-verifier-wasm --target wasm32-unknown-unknown --features liabilities
fi

if [ ${#bins[@]} -gt 0 ]; then
  if [ -n "$node_tests" ]; then
    step "the browser verifier's modules (served to the pages; size budget)"
    scripts/build-verifier.sh
    scripts/build-verifier.sh --liabilities
  fi
  step "the Worker, built beside the checks above"
  wait "$worker_build" || { cat target/quick-worker-build.log; exit 1; }
  tail -n 1 target/quick-worker-build.log
  step "black-box binaries: ${bins[*]}"
  export BVS_TEST_STATE="$ROOT/target/test-state"
  rm -rf "$BVS_TEST_STATE"
  BLACKBOX_ONLY="$(IFS='|'; echo "${bins[*]}")" scripts/blackbox.sh --skip schema_pass_
fi
echo "quick checks passed in ${SECONDS}s (scripts/test.sh runs everything)"
