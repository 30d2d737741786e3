#!/usr/bin/env bash
# Checks the invariants of ARCHITECTURE.md that grep can see:
#   - no SQL outside worker/src/store/;
#   - inside it, SQL text is built at run time only by store::chunked (the
#     one documented helper): no format! around SQL;
#   - the clock: Date::now() is read only in worker/src/app.rs;
#   - inside it, every statement is a named constant;
#   - the log's tables are written only from worker/src/ledger/ and its
#     one writer, worker/src/sequencer/;
#   - route handlers reach the store only through a module: no file under
#     worker/src/routes names crate::store;
#   - no file over 600 production lines (lines outside its tests), in
#     every crate: worker, core, cli, verifier-wasm
#     (scripts/check-file-length.py);
#   - no function over 70 lines in the production code of worker/src
#     (scripts/check-fn-length.py) nor of core, cli and verifier-wasm
#     (--crates); tests aside, no exception;
#   - no error status chosen outside error.rs: a response's status is set
#     only in http.rs (and lib.rs's 204 preflight), and no handler hands an
#     envelope a 4xx/5xx literal;
#   - no import cycle between the files of a crate, in every crate
#     (scripts/check-cycles.py);
#   - calls go one way: no module of any crate imports from a higher layer
#     (scripts/check-layers.py declares each crate's layers).
# Exits non-zero naming every breach.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

failed=0
breach() { printf 'architecture: %s\n' "$*" >&2; failed=1; }

# SQL keywords as they open a statement in a Rust string literal.
SQL='"(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|REPLACE) '

hits=$(grep -rnE "$SQL" worker/src --include='*.rs' | grep -v '^worker/src/store/' || true)
[ -z "$hits" ] || breach "SQL outside worker/src/store/:"$'\n'"$hits"

hits=$(grep -rnE 'format!\(\s*"[^"]*(SELECT|INSERT|UPDATE|DELETE) ' worker/src --include='*.rs' || true)
[ -z "$hits" ] || breach "SQL built with format! (use a constant, or store::ListSql + store::chunked):"$'\n'"$hits"
hits=$(grep -rnE 'let sql = format!' worker/src --include='*.rs' || true)
[ -z "$hits" ] || breach "SQL built with format!:"$'\n'"$hits"

# Inside the store, every statement is a named constant: a SQL literal
# opens a `const` (on its line or the one before), a `ListSql`'s `sql:`, or
# a column-list macro's `concat!(`.
hits=$(awk -v sql="$SQL" '
  FNR == 1 { prev = "" }
  $0 ~ sql && $0 !~ /const [A-Z_]+: / && $0 !~ /sql: / && prev !~ /(=|concat!\()[[:space:]]*$/ \
    { print FILENAME ":" FNR ": " $0 }
  { prev = $0 }' worker/src/store/*.rs)
[ -z "$hits" ] || breach "SQL literal that is not a named constant:"$'\n'"$hits"

hits=$(grep -rn 'Date::now' worker/src --include='*.rs' | grep -v '^worker/src/app.rs:' || true)
[ -z "$hits" ] || breach "Date::now() outside the clock (app::clock_ms):"$'\n'"$hits"

# The log's tables are written only from worker/src/ledger/ and the
# sequencer, the log's one writer.
hits=$(grep -rnE 'store::log::insert_|log_store::insert_' worker/src --include='*.rs' \
  | grep -vE '^worker/src/(ledger|sequencer)/' || true)
[ -z "$hits" ] || breach "log tables written outside worker/src/ledger/ and worker/src/sequencer/:"$'\n'"$hits"

# Route handlers parse, call a module (ledger, auth, tenant, webhooks, ...)
# and respond: none names the store.
hits=$(grep -rnE 'crate::store|crate::\{[^}]*\bstore\b|(^|[^_[:alnum:]])store::' worker/src/routes \
  --include='*.rs' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' || true)
[ -z "$hits" ] || breach "a route names the store (call its module instead):"$'\n'"$hits"

hits=$(grep -rn 'with_status(' worker/src --include='*.rs' \
  | grep -vE '^worker/src/http\.rs:|^worker/src/lib\.rs:.*with_status\(204\)' || true)
[ -z "$hits" ] || breach "a status set outside http.rs (errors go through ApiError):"$'\n'"$hits"
hits=$(grep -rnE 'http::(json|balance|dashboard|raw_json)\(\s*[45][0-9][0-9]' worker/src --include='*.rs' || true)
[ -z "$hits" ] || breach "an error status chosen by a handler (return an ApiError):"$'\n'"$hits"

python3 scripts/check-fn-length.py || failed=1
python3 scripts/check-fn-length.py --crates || failed=1
python3 scripts/check-file-length.py || failed=1
python3 scripts/check-cycles.py || failed=1
python3 scripts/check-layers.py || failed=1

[ "$failed" -eq 0 ] && echo "architecture invariants hold"
exit "$failed"
