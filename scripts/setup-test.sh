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
command -v xxd >/dev/null 2>&1 || missing_debs="$missing_debs xxd"
if [ -n "$missing_debs" ]; then
  # chromium: the headless browser of the page tests; jq: the README's
  # auditor commands, which a test runs; xxd (with jq): the commands of
  # docs/liabilities.md, which core/tests/liabilities_doc.rs runs.
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

# The SDKs (issue 29): the SDKs' verifier, the TypeScript SDK's packages
# and dist/ (scripts/build-sdks.sh), and .venv-sdk (git-ignored) with the
# Python SDK's dependencies and its suite's (pytest, the independent
# standardwebhooks package); tests/tests/quickstart/sdks.rs reinstalls the package
# itself from sdk/python before its suite.
scripts/build-sdks.sh
if [ ! -x .venv-sdk/bin/python ]; then
  step "python3 -m venv .venv-sdk"
  python3 -m venv .venv-sdk
fi
if [ "$(.venv-sdk/bin/python -c 'import importlib.metadata as m; print(m.version("standardwebhooks"))' 2>/dev/null)" != "$STANDARDWEBHOOKS_PY_VERSION" ]; then
  step "pip install the Python SDK's dependencies and pytest into .venv-sdk (first run only)"
  .venv-sdk/bin/pip install --quiet --disable-pip-version-check \
    "setuptools>=70" "httpx==$HTTPX_VERSION" "wasmtime==$WASMTIME_VERSION" \
    "pytest==$PYTEST_VERSION" "standardwebhooks==$STANDARDWEBHOOKS_PY_VERSION"
fi
