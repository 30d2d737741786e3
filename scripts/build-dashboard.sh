#!/usr/bin/env bash
# Builds the vendor dashboard (dashboard/src, TypeScript + Preact) into
# public/assets/ (git-ignored), served by Workers assets with
# public/index.html: esbuild bundles and minifies it, nothing is loaded from
# a CDN at run time. Skips the build when nothing it depends on changed.
# `--check` also type-checks with tsc (scripts/test.sh does).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

out="public/assets"
js="$out/dashboard.js"
if [ "${1:-}" = "--check" ]; then
  step "tsc --noEmit -p dashboard"
  tsc --noEmit -p dashboard
fi
mkdir -p target
exec 7>target/.dashboard-build.lock
flock 7
if [ -f "$js" ] && [ -z "${FORCE_BUILD:-}" ] \
  && [ -z "$(find dashboard package-lock.json scripts/build-dashboard.sh -newer "$js" -print -quit 2>/dev/null)" ]; then
  echo "dashboard build is up to date ($out)"
  exit 0
fi
echo "building the dashboard ($out)"
rm -rf "$out.tmp"
"$ESBUILD_BIN" dashboard/src/main.tsx --bundle --minify --sourcemap --format=esm --target=es2020 \
  --jsx=automatic --jsx-import-source=preact --log-level=warning \
  --entry-names=dashboard --outdir="$out.tmp"
rm -rf "$out"
mv "$out.tmp" "$out"
for f in "$out"/dashboard.js "$out"/dashboard.css; do
  printf '%-28s %8d bytes, %7d gzipped\n' "$f" "$(wc -c <"$f")" "$(gzip -9c "$f" | wc -c)"
done
