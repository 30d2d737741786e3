#!/usr/bin/env bash
# Applies every D1 migration to the local databases under a persist dir:
# the control database and every ledger shard in use, i.e. each binding
# LEDGER_<ENV>_<n> of wrangler.toml's top level with n below the
# environment's shard count (LEDGER_SHARDS_<ENV> there, or
# $BVS_MIGRATE_SHARDS when set, as the shard benchmark does). One after the
# other: local D1 shares one metadata store, parallel runs lock each other out.
# Usage: scripts/migrate.sh [PERSIST_DIR]   (default: .wrangler/state)
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
persist="${1:-.wrangler/state}"
# The top level ends at the first [env.*] section.
top=$(sed '/^\[env\./,$d' wrangler.toml)
count() { # the shard count of environment $1 (SANDBOX / PRODUCTION)
  if [ -n "${BVS_MIGRATE_SHARDS:-}" ]; then echo "$BVS_MIGRATE_SHARDS"; return; fi
  local n
  n=$(grep -oE "^LEDGER_SHARDS_$1 = \"[0-9]+\"" <<<"$top" | grep -oE '[0-9]+' || true)
  echo "${n:-1}"
}
dbs=(DB)
while read -r binding; do
  env=$(cut -d_ -f2 <<<"$binding"); n=$(cut -d_ -f3 <<<"$binding")
  if [ "$n" -lt "$(count "$env")" ]; then dbs+=("$binding"); fi
done < <(grep -oE '^binding = "LEDGER_[A-Z]+_[0-9]+"' <<<"$top" | cut -d'"' -f2)
for db in "${dbs[@]}"; do
  wrangler d1 migrations apply "$db" --local --persist-to "$persist" >/dev/null
done
echo "migrations applied to $persist (${dbs[*]})"
