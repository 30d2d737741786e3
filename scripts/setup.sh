#!/usr/bin/env bash
# Installs whatever is missing, and does nothing (quickly) when all is there.
# Idempotent: safe to run before every command.
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

missing_debs=""
[ -x /usr/bin/chromium ] || missing_debs="$missing_debs chromium"
command -v jq >/dev/null 2>&1 || missing_debs="$missing_debs jq"
if [ -n "$missing_debs" ]; then
  # chromium: the headless browser of the page tests; jq: the README's
  # auditor commands, which a test runs.
  step "apt-get install$missing_debs"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing_debs >/dev/null
fi

# The verify page's WebAssembly verifier (public/pkg, git-ignored); skipped
# when up to date.
scripts/build-verifier.sh

# The vendor dashboard (public/assets, git-ignored); skipped when up to date.
scripts/build-dashboard.sh

# The verify and agreement pages' scripts (pages/src, TypeScript, into
# public/*.js, git-ignored); skipped when up to date.
scripts/build-pages.sh

# Python tooling for the schemathesis pass (.venv, git-ignored).
scripts/setup-python.sh

# The local witnesses (aics-witness, aics-tlog) in .venv-witness
# (git-ignored): scripts/dev.sh runs three, and the tests that need them.
scripts/setup-witness.sh

# cargo-fuzz for the fuzz smoke run; it needs the nightly toolchain.
if rustup toolchain list 2>/dev/null | grep -q '^nightly' \
  && [ "$(cargo fuzz --version 2>/dev/null | awk '{print $NF}')" != "$CARGO_FUZZ_VERSION" ]; then
  step "cargo install cargo-fuzz $CARGO_FUZZ_VERSION (first run only)"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --quiet
fi
