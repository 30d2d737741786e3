#!/usr/bin/env bash
# Applies every D1 migration to the local databases under a persist dir:
# the control database and every ledger shard bound in wrangler.toml's
# top level (LEDGER_<ENV>_<n>), one after the other (local D1 shares one
# metadata store: parallel runs lock each other out).
# Usage: scripts/migrate.sh [PERSIST_DIR]   (default: .wrangler/state)
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
persist="${1:-.wrangler/state}"
# The top level ends at the first [env.*] section.
mapfile -t ledgers < <(sed '/^\[env\./,$d' wrangler.toml | grep -oE '^binding = "LEDGER_[A-Z]+_[0-9]+"' | cut -d'"' -f2)
for db in DB "${ledgers[@]}"; do
  wrangler d1 migrations apply "$db" --local --persist-to "$persist" >/dev/null
done
echo "migrations applied to $persist (DB ${ledgers[*]})"
