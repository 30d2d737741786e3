#!/usr/bin/env bash
# Builds the browser pages around the WebAssembly verifier (pages/src,
# TypeScript): the verify page's script and the customer's agreement page,
# into public/verify.js and public/agree.js (git-ignored), served by
# Workers assets beside
# public/verify.html and public/agree.html. esbuild bundles each page (not
# minified: an auditor can read what the page runs); the verifier itself,
# "/pkg/bvs_verifier_wasm.js" (scripts/build-verifier.sh), stays an
# external import loaded at run time, as is the liabilities check's module
# "/pkg-liabilities/bvs_verifier_wasm.js", which the agreement page loads
# only when a liabilities proof is there to check, and the verify page only
# for a nested witness policy or a checkpoint's agreement side. Skips the build when nothing it
# depends on changed. `--check` also type-checks with tsc (scripts/test.sh
# does).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

pages=(verify agree)
stamp="public/verify.js"
if [ "${1:-}" = "--check" ]; then
  step "tsc --noEmit -p pages"
  tsc --noEmit -p pages
fi
mkdir -p target
exec 6>target/.pages-build.lock
flock 6
up_to_date=1
for p in "${pages[@]}"; do [ -f "public/$p.js" ] || up_to_date=""; done
if [ -n "$up_to_date" ] && [ -z "${FORCE_BUILD:-}" ] \
  && [ -z "$(find pages package-lock.json scripts/build-pages.sh -newer "$stamp" -print -quit 2>/dev/null)" ]; then
  echo "pages build is up to date (public/{verify,agree}.js)"
  exit 0
fi
echo "building the pages (public/{verify,agree}.js)"
tmp="target/pages.tmp"
rm -rf "$tmp"
entries=()
for p in "${pages[@]}"; do entries+=("pages/src/$p.ts"); done
"$ESBUILD_BIN" "${entries[@]}" --bundle --format=esm --target=es2022 \
  --external:/pkg/bvs_verifier_wasm.js --external:/pkg-liabilities/bvs_verifier_wasm.js --log-level=warning --outdir="$tmp"
# verify.js last: it is the stamp the next run compares against.
for p in agree verify; do
  mv "$tmp/$p.js" "public/$p.js"
  printf '%-28s %8d bytes, %7d gzipped\n' "public/$p.js" "$(wc -c <"public/$p.js")" "$(gzip -9c "public/$p.js" | wc -c)"
done
rm -rf "$tmp"
