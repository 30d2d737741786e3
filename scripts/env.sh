# Sourced by the other scripts: pinned tool versions and PATH.
# shellcheck shell=bash
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
WORKER_BUILD_VERSION="0.8.7"
WASM_BINDGEN_VERSION="0.2.130"
SCHEMATHESIS_VERSION="4.32.5"
CARGO_FUZZ_VERSION="0.13.1"
# The Python SDK suite's packages (.venv-sdk, scripts/setup-test.sh).
HTTPX_VERSION="0.28.1"
WASMTIME_VERSION="50.0.1"
PYTEST_VERSION="9.2.0"
STANDARDWEBHOOKS_PY_VERSION="1.1.0"
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# worker-build would download these; point it at the pinned local ones.
export WASM_BINDGEN_BIN="$HOME/.cargo/bin/wasm-bindgen"
export WASM_OPT_BIN="$ROOT/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$ROOT/node_modules/.bin/esbuild"
export CLOUDFLARE_CF_FETCH_ENABLED=false
export WRANGLER_SEND_METRICS=false
export DO_NOT_TRACK=1

# Each step says when it started, in seconds since the script began.
step() { printf '\n==> %s  [%ds]\n' "$*" "$SECONDS"; }
