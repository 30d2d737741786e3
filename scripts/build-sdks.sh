#!/usr/bin/env bash
# Builds what the SDKs need beside their sources (issue 29, sdk/README.md):
# the SDKs' verifier (verifier-wasm with a receipt's agreement checks,
# scripts/build-verifier.sh --sdk) copied into sdk/typescript/verifier/ and
# sdk/python/src/bvs_sdk/verifier.wasm (both git-ignored), and the
# TypeScript SDK's dist/ (its own package.json and lock: TypeScript 5).
# Skips what is up to date. scripts/setup-test.sh runs it; a user runs it
# once before `npm install ./sdk/typescript` or `pip install ./sdk/python`.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

scripts/build-verifier.sh --sdk
pkg=target/verifier-sdk
mkdir -p sdk/typescript/verifier
for f in bvs_verifier_wasm.js bvs_verifier_wasm_bg.wasm; do
  cmp -s "$pkg/$f" "sdk/typescript/verifier/$f" || cp "$pkg/$f" "sdk/typescript/verifier/$f"
done
cmp -s "$pkg/bvs_verifier_wasm_bg.wasm" sdk/python/src/bvs_sdk/verifier.wasm \
  || cp "$pkg/bvs_verifier_wasm_bg.wasm" sdk/python/src/bvs_sdk/verifier.wasm

cd sdk/typescript
stamp="node_modules/.setup-stamp"
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
  step "npm install in sdk/typescript (TypeScript 5, openapi-typescript, standardwebhooks)"
  npm install --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi
if [ ! -f dist/index.js ] || [ -n "$(find src package.json tsconfig.json -newer dist/index.js -print -quit)" ]; then
  echo "building the TypeScript SDK (sdk/typescript/dist)"
  npm run --silent build
else
  echo "TypeScript SDK build is up to date (sdk/typescript/dist)"
fi
