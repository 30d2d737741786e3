#!/usr/bin/env bash
# The Worker's size and start (issue 42; bench/README.md "worker size and
# start"): the gzipped upload against its budget (scripts/check-worker-size.sh,
# which the build also runs), V8's compile and instantiation of the wasm
# (bench/worker-start.mjs), and under workerd (`wrangler dev`) the first
# request of a fresh isolate against the median of the next ten.
# Usage: bash bench/worker-size.sh [starts]   (default 3)
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ROOT"
starts=${1:-3}
scripts/build-worker.sh > /dev/null
scripts/check-worker-size.sh
node bench/worker-start.mjs worker/build/index_bg.wasm 7
port=8799
for s in $(seq 1 "$starts"); do
  dir=$(mktemp -d /tmp/bvs-start.XXXXXX)
  CLOUDFLARE_CF_FETCH_ENABLED=false setsid wrangler dev --ip 127.0.0.1 --port "$port" \
    --persist-to "$dir" > "$dir/wrangler.log" 2>&1 &
  pid=$!
  until grep -q "Ready on" "$dir/wrangler.log" 2>/dev/null; do sleep 0.2; done
  first=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port/health")
  warm=$(for _ in $(seq 1 10); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/health"; done | sort -n | sed -n 5p)
  echo "start $s: first /health ${first}s, warm median ${warm}s"
  kill -TERM -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
