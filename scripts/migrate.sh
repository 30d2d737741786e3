#!/usr/bin/env bash
# Applies every D1 migration to the local databases under a persist dir.
# Usage: scripts/migrate.sh [PERSIST_DIR]   (default: .wrangler/state)
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
persist="${1:-.wrangler/state}"
for db in DB LEDGER_SANDBOX LEDGER_PRODUCTION; do
  wrangler d1 migrations apply "$db" --local --persist-to "$persist" >/dev/null
done
echo "migrations applied to $persist"
