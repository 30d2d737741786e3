#!/usr/bin/env bash
# Builds the vendor dashboard (dashboard/src, TypeScript + Preact) into
# public/assets/ (git-ignored), served by Workers assets with
# public/index.html: esbuild bundles and minifies it, nothing is loaded from
# a CDN at run time. Skips the build when nothing it depends on changed.
# `--check` also type-checks with tsc (scripts/test.sh does).
#
# Code splitting: the chart module (dashboard/src/chart-draw.ts, uPlot) is
# loaded with import() by the pages that draw charts, so it becomes a chunk
# of its own (assets/chunks/), with uPlot's stylesheet beside it
# (assets/uplot.css). The JavaScript budget (docs/dashboard.md) is checked
# here: the build fails when the main bundle or the chart chunk is over it.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

out="public/assets"
js="$out/dashboard.js"
# Gzipped bytes at most (docs/dashboard.md, "JavaScript budget").
BUDGET_MAIN_GZ=30720
BUDGET_CHARTS_GZ=25600
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
  --splitting --jsx=automatic --jsx-import-source=preact --log-level=warning \
  --entry-names=dashboard --chunk-names='chunks/[name]-[hash]' --outdir="$out.tmp"
cp node_modules/uplot/dist/uPlot.min.css "$out.tmp/uplot.css"
gz() { gzip -9c "$1" | wc -c; }
over=""
for f in "$out.tmp"/dashboard.js "$out.tmp"/dashboard.css "$out.tmp"/uplot.css "$out.tmp"/chunks/*.js; do
  printf '%-44s %8d bytes, %7d gzipped\n' "${f/$out.tmp/$out}" "$(wc -c <"$f")" "$(gz "$f")"
done
main_gz=$(gz "$out.tmp/dashboard.js")
[ "$main_gz" -le "$BUDGET_MAIN_GZ" ] || over="$over main bundle $main_gz > $BUDGET_MAIN_GZ;"
charts=$(ls "$out.tmp"/chunks/chart-draw-*.js 2>/dev/null || true)
[ -n "$charts" ] || over="$over no chart chunk (is chart-draw.ts still loaded with import()?);"
for f in $charts; do
  [ "$(gz "$f")" -le "$BUDGET_CHARTS_GZ" ] || over="$over chart chunk $(gz "$f") > $BUDGET_CHARTS_GZ;"
done
# uPlot's own class names: present only where uPlot's code is.
if grep -q "u-legend" "$out.tmp/dashboard.js"; then over="$over uPlot is in the main bundle;"; fi
if [ -n "$over" ]; then
  echo "dashboard over its JavaScript budget (docs/dashboard.md):$over" >&2
  rm -rf "$out.tmp"
  exit 1
fi
rm -rf "$out"
mv "$out.tmp" "$out"
