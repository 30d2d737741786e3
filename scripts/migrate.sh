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
apply() { # applies every migration to each database of dbs under $1
  local db
  for db in "${dbs[@]}"; do
    wrangler d1 migrations apply "$db" --local --persist-to "$1" >/dev/null
  done
}

# A state directory with no D1 database yet (every test server's, a fresh
# clone's) is a copy of a template: the migrations applied once, under
# target/migrated/<key>. Each `wrangler d1 migrations apply` starts a
# Miniflare (and a workerd) per migration file, about a minute of CPU for
# the five databases, which every test server used to pay. The key covers
# what the result depends on: the migration files, the databases chosen,
# wrangler.toml (their ids) and wrangler's version. A state that already
# has databases (a restart, a shard added) is migrated in place, as before.
if [ ! -d "$persist/v3/d1" ]; then
  key=$({
    find migrations -type f -name '*.sql' -print0 | sort -z | xargs -0 sha256sum
    printf '%s\n' "${dbs[@]}"
    sha256sum wrangler.toml
    grep -m1 '"version"' node_modules/wrangler/package.json
  } | sha256sum | cut -c1-16)
  templates="$ROOT/target/migrated"
  template="$templates/$key"
  mkdir -p "$templates" "$persist"
  exec 8>"$templates/.lock"
  flock 8
  if [ ! -d "$template" ]; then
    building="$templates/.building-$$"
    rm -rf "$building"
    apply "$building"
    mv "$building" "$template"
  fi
  cp -a "$template/v3" "$persist/"
  touch "$template"
  # Templates of other keys, unused for two days, go.
  find "$templates" -mindepth 1 -maxdepth 1 -name '[0-9a-f]*' -mtime +2 -exec rm -rf {} +
  flock -u 8
  echo "migrations applied to $persist (${dbs[*]}; a copy of target/migrated/$key)"
  exit 0
fi
apply "$persist"
echo "migrations applied to $persist (${dbs[*]})"
