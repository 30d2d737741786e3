#!/usr/bin/env bash
# Installs whatever running the service needs (scripts/dev.sh) and is
# missing, and does nothing (quickly) when all is there. Idempotent: safe to
# run before every command. The tests' own tools: scripts/setup-test.sh.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  step "rustup: adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if [ "$(worker-build --version 2>/dev/null | awk '{print $NF}')" != "$WORKER_BUILD_VERSION" ]; then
  step "cargo install worker-build $WORKER_BUILD_VERSION (first run only)"
  cargo install worker-build --version "$WORKER_BUILD_VERSION" --locked --quiet
fi

if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  step "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION (first run only)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force --quiet
fi

stamp="node_modules/.setup-stamp"
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
  step "npm install (Node 22, wrangler, binaryen)"
  npm install --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi

if [ ! -f .dev.vars ]; then
  step "generating local secrets in .dev.vars (git-ignored)"
  hex32() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
  umask 077
  {
    echo "JWT_SECRET=$(hex32)"
    echo "LOG_SEED_SANDBOX=$(hex32)"
    echo "LOG_SEED_PRODUCTION=$(hex32)"
    echo "ADMIN_TOKEN=$(hex32)"
  } > .dev.vars
fi

# The verify page's WebAssembly verifier (public/pkg, git-ignored), and the
# liabilities check's own module (public/pkg-liabilities); skipped when up
# to date.
scripts/build-verifier.sh
scripts/build-verifier.sh --liabilities

# The vendor dashboard (public/assets, git-ignored); skipped when up to date.
scripts/build-dashboard.sh

# The verify and agreement pages' scripts (pages/src, TypeScript, into
# public/*.js, git-ignored); skipped when up to date.
scripts/build-pages.sh

# What only the tests need (Chromium, jq, schemathesis, cargo-fuzz, the SDK
# suites' packages) is installed by scripts/setup-test.sh, which
# scripts/test.sh runs after this one.

# The local witnesses (aics-witness, aics-tlog) in .venv-witness
# (git-ignored): scripts/dev.sh runs three beside wrangler dev, and so do the
# tests that need them.
scripts/setup-witness.sh
