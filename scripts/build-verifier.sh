#!/usr/bin/env bash
# Builds the in-browser verifier (verifier-wasm) into public/pkg/, served by
# Workers assets for the verify page: cargo (wasm32, release) → wasm-bindgen
# --target web → wasm-opt -Oz. Skips the build when nothing it depends on
# changed. `--proof-only` builds the variant without signature checks into
# target/verifier-proof-only/ (for bench/verifier only). `--liabilities`
# builds the separate module of the liabilities check (issue 31,
# docs/liabilities.md: `verifyLiabilities`, and the proof checks) into
# public/pkg-liabilities/, which a page loads only to check a liabilities
# proof: in the verify page's module it would pass the size budget. `--sdk`
# builds the SDKs' variant with a receipt's agreement checks and the
# liabilities check into target/verifier-sdk/ (sdk/README.md).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

features=()
out="public/pkg"
# The served (full) verifier is built for size: SHA-256 as a loop, not
# unrolled (about 1.9 KB gzipped; its bulk inclusion path runs ~20% slower,
# bench/README.md). The other builds keep the unrolled one: the proof-only
# build is the bulk proof checker the speed targets are measured on, and
# the liabilities and SDK modules have no size budget.
sha256=(--config 'build.rustflags=["--cfg","sha2_backend_soft=\"compact\""]')
target_dir="target/verifier"
case "${1:-}" in
  --proof-only)
    features=(--no-default-features)
    out="target/verifier-proof-only"
    target_dir="target/verifier-proof-only-build"
    sha256=()
    ;;
  --liabilities)
    features=(--no-default-features --features liabilities)
    out="public/pkg-liabilities"
    target_dir="target/verifier-liabilities"
    sha256=()
    ;;
  --sdk)
    # The SDKs' build (issue 29), with a receipt's agreement side
    # (`verifyReceiptWithAgreement`) and a customer's liabilities proof
    # (`verifyLiabilities`, issue 31), into target/verifier-sdk/.
    features=(--features receipt-agreement,liabilities)
    out="target/verifier-sdk"
    target_dir="target/verifier-sdk-build"
    sha256=()
    ;;
esac
# The browser verifier's size budget, in bytes, and its one measure: GNU
# `gzip -9 -n` (no name or time in the header) of the served wasm plus the
# served JS glue, summed. Enforced below for the full build.
# bench/README.md, "verifier".
BUDGET_GZIP_BYTES=65536
gzipped() { gzip -9 -n <"$1" | wc -c; }
wasm="$out/bvs_verifier_wasm_bg.wasm"

mkdir -p target
exec 8>target/.verifier-build.lock
flock 8
if [ -f "$wasm" ] && [ -z "${FORCE_BUILD:-}" ] \
  && [ -z "$(find core/src verifier-wasm/src core/Cargo.toml verifier-wasm/Cargo.toml Cargo.toml Cargo.lock scripts/build-verifier.sh -newer "$wasm" -print -quit 2>/dev/null)" ]; then
  echo "verifier build is up to date ($out)"
  exit 0
fi

echo "building the verifier ($out)"
# A separate target dir per variant (above): the feature set differs from
# the workspace build, and sharing one would rebuild core for each.
# Size is the budget here (bench/README.md: <= 64 KB gzipped with the
# signature checks), speed only on the proof path. Core builds at "z".
# Its few proof-check functions are #[inline], so they are compiled into
# this shim at 2, beside sha2's unrolled SHA-256 at 3: proofs verify as
# fast as with everything at 3, for ~10 KB less. CORE_OPT / SHIM_OPT
# override, to measure.
cargo build -p bvs-verifier-wasm --target wasm32-unknown-unknown --release --quiet \
  --target-dir "$target_dir" "${features[@]}" "${sha256[@]}" \
  --config 'profile.release.package.sha2.opt-level=3' \
  --config "profile.release.package.bvs-core.opt-level=${CORE_OPT:-\"z\"}" \
  --config "profile.release.package.bvs-verifier-wasm.opt-level=${SHIM_OPT:-2}"
# Invariant (ARCHITECTURE.md): none of these crates' code is in the
# verifier. The unstripped module names every function it holds.
built="$target_dir/wasm32-unknown-unknown/release/bvs_verifier_wasm.wasm"
# (As a word: the SDKs' build holds the error name "not_a_signed_note".)
for crate in serde_json signed_note tlog_tiles; do
  if grep -aqE "(^|[^a-z_])$crate([^a-z_]|\$)" "$built"; then
    echo "error: the verifier contains $crate code (see ARCHITECTURE.md, Invariants)" >&2
    exit 1
  fi
done
rm -rf "$out.tmp"
wasm-bindgen --target web --no-typescript --out-dir "$out.tmp" \
  "$target_dir/wasm32-unknown-unknown/release/bvs_verifier_wasm.wasm"
wasm-opt -Oz --converge --strip-target-features --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --strip-debug --strip-producers \
  -o "$out.tmp/bvs_verifier_wasm_bg.wasm" "$out.tmp/bvs_verifier_wasm_bg.wasm"
# The glue as served: minified (wasm-bindgen copies every doc comment
# into it as JSDoc; the exports keep their names).
"$ESBUILD_BIN" "$out.tmp/bvs_verifier_wasm.js" --minify --format=esm --log-level=warning \
  --outfile="$out.tmp/bvs_verifier_wasm.min.js"
mv "$out.tmp/bvs_verifier_wasm.min.js" "$out.tmp/bvs_verifier_wasm.js"
rm -rf "$out"
mv "$out.tmp" "$out"
rm -f "$out/.gitignore"  # package.json stays: it tells Node the glue is an ES module
total=0
for f in "$out"/bvs_verifier_wasm_bg.wasm "$out"/bvs_verifier_wasm.js; do
  size=$(gzipped "$f")
  total=$((total + size))
  printf '%-50s %8d bytes, %7d gzipped (gzip -9 -n)\n' "$f" "$(wc -c <"$f")" "$size"
done
printf '%-50s %8s        %7d gzipped' "total" "" "$total"
if [ ${#features[@]} -eq 0 ]; then
  printf ' of a %d-byte budget (%d to spare)\n' "$BUDGET_GZIP_BYTES" "$((BUDGET_GZIP_BYTES - total))"
  if [ "$total" -gt "$BUDGET_GZIP_BYTES" ]; then
    # Remove the build, so the next run builds (and fails) again.
    rm -rf "$out"
    echo "error: the browser verifier is $total bytes gzipped, over its budget of $BUDGET_GZIP_BYTES (bench/README.md)" >&2
    exit 1
  fi
else
  echo
fi
