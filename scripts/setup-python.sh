#!/usr/bin/env bash
# The project-local Python tooling (schemathesis) in .venv (git-ignored).
# Idempotent: does nothing when the pinned version is already installed.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

if [ ! -x .venv/bin/python ]; then
  step "python3 -m venv .venv"
  python3 -m venv .venv
fi
if [ "$(.venv/bin/schemathesis --version 2>/dev/null | awk '{print $NF}')" != "$SCHEMATHESIS_VERSION" ]; then
  step "pip install schemathesis==$SCHEMATHESIS_VERSION into .venv (first run only)"
  .venv/bin/pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
