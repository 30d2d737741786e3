#!/usr/bin/env bash
# Runs the service locally: wrangler dev on http://127.0.0.1:8787 with local
# D1 databases, queues, cron (scheduled route) and static assets, beside
# three local C2SP witnesses (aics-witness) with a quorum of 2, whose state
# lives in .wrangler/state/witnesses with the rest of the instance's state
# (delete .wrangler/state to start over: both go together). Ctrl-C stops
# all of them. Three witnesses of one implementation on one machine are for
# development, not independence (docs/deploy.md, "Witnesses").
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
"$ROOT/scripts/setup.sh"
step "building the worker"
scripts/build-worker.sh
state=.wrangler/state
step "applying D1 migrations to $state"
scripts/migrate.sh "$state"

step "three local witnesses, quorum 2 (state in $state/witnesses)"
# Each log's verifier key comes from .dev.vars and wrangler.toml, before
# wrangler dev starts; the witnesses trust every shard's log.
scripts/witnesses.sh init --persist-to "$state" --count 3 --quorum 2
scripts/witnesses.sh serve --persist-to "$state" &
witnesses=$!
trap 'kill -TERM "$witnesses" 2>/dev/null; wait "$witnesses" 2>/dev/null || true' EXIT
scripts/witnesses.sh wait --persist-to "$state"
# The witness policy (C2SP tlog-policy: the witnesses, their URLs, the
# quorum) is the service's configuration, per environment (docs/deploy.md).
policy="$(cat "$state/witnesses/policy.txt")"

step "starting wrangler dev on http://127.0.0.1:${PORT:-8787} (Ctrl-C stops it and the witnesses)"
wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" --persist-to "$state" \
  --show-interactive-dev-session=false --test-scheduled \
  --var "WITNESS_POLICY_SANDBOX:$policy" --var "WITNESS_POLICY_PRODUCTION:$policy"
