#!/usr/bin/env bash
# Installs what only the tests need, on top of scripts/setup.sh (which
# scripts/test.sh runs first): Chromium and jq (Debian), schemathesis
# (.venv), cargo-fuzz (nightly), and the SDK suites' packages
# (sdk/typescript/node_modules, sdk/python's .venv-sdk). Idempotent: does
# nothing (quickly) when all is there. scripts/dev.sh never runs it.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

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

# Python tooling for the schemathesis pass (.venv, git-ignored).
scripts/setup-python.sh
# cargo-fuzz for the fuzz smoke run; it needs the nightly toolchain.
if rustup toolchain list 2>/dev/null | grep -q '^nightly' \
  && [ "$(cargo fuzz --version 2>/dev/null | awk '{print $NF}')" != "$CARGO_FUZZ_VERSION" ]; then
  step "cargo install cargo-fuzz $CARGO_FUZZ_VERSION (first run only)"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --quiet
fi
