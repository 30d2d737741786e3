#!/usr/bin/env bash
# The local witnesses' Python (aics-witness, aics-tlog) in .venv-witness
# (git-ignored), on Python 3.12: aics-witness declares Python >= 3.12, and
# 3.12 is the oldest it supports (3.11 would need --ignore-requires-python,
# running it where its author does not test it). Idempotent: does nothing
# when the pinned set is installed. See docs/deploy.md, "Witnesses".
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

venv=.venv-witness
requirements=scripts/witness-requirements.txt
if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$venv/.requirements"; then
  exit 0
fi

# A Python 3.12 (or newer 3.x): on PATH, else pyenv's (these machines carry
# 3.12 and 3.13 beside the default 3.11, not on PATH).
python=""
for candidate in python3.12 python3.13; do
  if "$candidate" -c 'import sys' >/dev/null 2>&1; then
    python="$(command -v "$candidate")"
    break
  fi
done
if [ -z "$python" ]; then
  for dir in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.* "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13.*; do
    if [ -x "$dir/bin/python3" ]; then
      python="$dir/bin/python3"
      break
    fi
  done
fi
if [ -z "$python" ]; then
  echo "error: the local witnesses (aics-witness) need Python >= 3.12; install one (pyenv install 3.12, or your package manager) and run this again" >&2
  exit 1
fi

step "python venv $venv ($("$python" --version)) with aics-witness, aics-tlog (first run only)"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements"
"$venv/bin/pip" check --disable-pip-version-check >/dev/null
cp "$requirements" "$venv/.requirements"
