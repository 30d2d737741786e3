#!/usr/bin/env bash
# Runs the service locally: wrangler dev on http://127.0.0.1:8787 with local
# D1 databases, queues, cron (scheduled route) and static assets.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
"$ROOT/scripts/setup.sh"
step "building the worker"
scripts/build-worker.sh
step "applying D1 migrations to .wrangler/state"
scripts/migrate.sh .wrangler/state
step "starting wrangler dev on http://127.0.0.1:${PORT:-8787} (Ctrl-C stops it)"
exec wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" --persist-to .wrangler/state \
  --show-interactive-dev-session=false --test-scheduled
