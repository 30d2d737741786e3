#!/usr/bin/env bash
# Runs every black-box test binary (tests/tests/*.rs) in BLACKBOX_JOBS
# lanes at once (default 2). Each binary starts its own `wrangler dev`
# processes on free ports in fresh state directories, so binaries do not
# share anything but the machine; most of their time is spent waiting for
# sequencer rounds, queues and cron, which is why two lanes fit on two
# cores.
#
# Longest first: the order comes from the previous run's timings
# (target/blackbox-times.tsv), else from the list of known long binaries
# below. BLACKBOX_ONLY='webhooks|proofs' runs only those. Every binary's output goes to target/blackbox/<name>.log; a
# failing binary's log is printed at the end. Prints each binary's time.
#
#   scripts/blackbox.sh [test harness args, e.g. --skip schema_pass_]
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"

jobs="${BLACKBOX_JOBS:-2}"
threads="${TEST_THREADS:-4}"
logs="$ROOT/target/blackbox"
times="$ROOT/target/blackbox-times.tsv"
rm -rf "$logs"
mkdir -p "$logs"

# Build once; list "name executable" for every test binary of bvs-tests
# (with BLACKBOX_ONLY, build only those: `scripts/test.sh --quick` after a
# core change would otherwise link every binary).
targets=()
if [ -n "${BLACKBOX_ONLY:-}" ]; then
  for f in tests/tests/*.rs; do
    name="$(basename "$f" .rs)"
    if grep -qE "^(${BLACKBOX_ONLY})\$" <<<"$name"; then targets+=(--test "$name"); fi
  done
  [ ${#targets[@]} -gt 0 ] || { echo "no black-box binary matches BLACKBOX_ONLY=$BLACKBOX_ONLY" >&2; exit 2; }
fi
cargo test -p bvs-tests "${targets[@]}" --no-run --quiet --message-format=json-render-diagnostics \
  | jq -r 'select(.reason == "compiler-artifact" and .profile.test and (.target.kind | index("test")))
           | "\(.target.name) \(.executable)"' \
  | grep -E "^(${BLACKBOX_ONLY:-[a-z_0-9]+}) " >"$logs/binaries"

# Known long binaries, longest first (used when there are no timings yet).
known_long="schemathesis shard_growth crash_shards shard_queues dashboard_browser webhook_cap
balance_large idempotency_crash sweeper liabilities isolation verify_page witnessed"
order() {
  # name seconds: the last time measured, else a guess (a known long
  # binary by its rank, any other 60 s); longest first.
  awk -v long="$known_long" '
    BEGIN { n = split(long, l, /[ \n]+/); for (i = 1; i <= n; i++) guess[l[i]] = 1000 - i }
    FILENAME == ARGV[1] { t[$1] = $2; next }
    { s = ($1 in t) ? t[$1] : (($1 in guess) ? guess[$1] : 60); print s, $0 }
  ' "${times_in:-/dev/null}" "$logs/binaries" | sort -k1,1nr -k2,2 | cut -d' ' -f2-
}
times_in=""
[ -s "$times" ] && times_in="$times"

run_one() {
  local name="$1" exe="$2" started=$SECONDS
  # shellcheck disable=SC2086 # BLACKBOX_ARGS: the test harness's own words
  if (cd "$ROOT/tests" && "$exe" --test-threads="$threads" $BLACKBOX_ARGS) >"$logs/$name.log" 2>&1; then
    printf '%-22s ok      %4ds\n' "$name" $((SECONDS - started))
    printf '%s %d\n' "$name" $((SECONDS - started)) >>"$logs/times.new"
  else
    printf '%-22s FAILED  %4ds  (log: target/blackbox/%s.log)\n' "$name" $((SECONDS - started)) "$name"
    echo "$name" >>"$logs/failed"
  fi
}
export -f run_one
BLACKBOX_ARGS="$*"
export logs threads ROOT BLACKBOX_ARGS

started=$SECONDS
order | xargs -P "$jobs" -L 1 bash -c 'run_one "$0" "$1"' || true
echo "black-box binaries: $(wc -l <"$logs/binaries"), ${jobs} lanes, $((SECONDS - started))s wall"

# Keep the times of binaries this run did not start (BLACKBOX_ONLY).
if [ -f "$logs/times.new" ]; then
  cat "$logs/times.new" "${times_in:-/dev/null}" | awk '!seen[$1]++' | sort -k2,2nr >"$times.tmp"
  mv "$times.tmp" "$times"
fi
if [ -s "$logs/failed" ]; then
  while read -r name; do
    echo "==================== $name (target/blackbox/$name.log, last 120 lines)"
    tail -n 120 "$logs/$name.log"
  done <"$logs/failed"
  echo "failed: $(tr '\n' ' ' <"$logs/failed")"
  exit 1
fi
