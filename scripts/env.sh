# Sourced by the other scripts: pinned tool versions and PATH.
# shellcheck shell=bash
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
WORKER_BUILD_VERSION="0.8.7"
WASM_BINDGEN_VERSION="0.2.130"
SCHEMATHESIS_VERSION="4.32.5"
CARGO_FUZZ_VERSION="0.13.1"
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# worker-build would download these; point it at the pinned local ones.
export WASM_BINDGEN_BIN="$HOME/.cargo/bin/wasm-bindgen"
export WASM_OPT_BIN="$ROOT/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$ROOT/node_modules/.bin/esbuild"
export CLOUDFLARE_CF_FETCH_ENABLED=false
export WRANGLER_SEND_METRICS=false
export DO_NOT_TRACK=1

step() { printf '\n==> %s\n' "$*"; }
