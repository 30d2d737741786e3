#!/usr/bin/env bash
# Local C2SP tlog-witnesses (aics-witness) whose state lives inside a
# wrangler state directory: `scripts/witnesses.sh --help`, and the top of
# scripts/witnesses.py. scripts/dev.sh runs three with a quorum of 2; the
# black-box tests that need witnesses start them through
# bvs_tests::witness. For development, not independence (docs/deploy.md).
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$ROOT/scripts/setup-witness.sh"
exec "$ROOT/.venv-witness/bin/python" "$ROOT/scripts/witnesses.py" "$@"
