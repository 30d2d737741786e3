#!/usr/bin/env bash
# Shows that scripts/check-architecture.sh catches what it claims to, in
# every crate: on a copy of the sources, plants one breach at a time (an
# import that runs back up a layer, a module with no layer, a file over
# 600 production lines, a function over 70 lines, an import cycle) in
# core, the worker, the CLI and verifier-wasm, and requires the check to
# fail naming the planted file; the unplanted copy must pass. Run by
# scripts/test.sh (and --quick) beside the check itself.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
copy() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  for d in core/src worker/src cli/src verifier-wasm/src scripts; do
    mkdir -p "$work/tree/$(dirname "$d")"
    cp -r "$d" "$work/tree/$d"
  done
}

failed=0
prepend() {  # file, text: before everything (after a test module it would not count)
  { printf '%s\n' "$2"; cat "$work/tree/$1"; } >"$work/tree/$1.new"
  mv "$work/tree/$1.new" "$work/tree/$1"
}
expect_breach() {  # what, file planted, words the breach's line holds
  local what="$1" file="$2" words="$3" out
  if out=$(bash "$work/tree/scripts/check-architecture.sh" 2>&1); then
    echo "selftest: $what in $file was NOT caught" >&2
    failed=1
  elif ! grep "$file" <<<"$out" | grep -qi -- "$words"; then
    echo "selftest: $what in $file failed the check without naming the file and \"$words\":" >&2
    echo "$out" >&2
    failed=1
  else
    printf 'caught: %-34s %s\n' "$what" "$file"
  fi
}

copy
bash "$work/tree/scripts/check-architecture.sh" >/dev/null \
  || { echo "selftest: the unplanted copy does not pass" >&2; exit 1; }

long_const() {  # a const of N lines: production lines, no function
  printf 'pub const PLANTED: [u8; %d] = [\n' "$1"
  for _ in $(seq "$1"); do printf '    0,\n'; done
  printf '];\n'
}
long_fn() {  # a function of N lines
  printf 'pub fn planted() -> u64 {\n    let mut x = 0;\n'
  for _ in $(seq "$1"); do printf '    x += 1;\n'; done
  printf '    x\n}\n'
}

# Imports that run back up: a file of a low layer naming a higher one.
for plant in "core/src/time.rs crate::agreement::Planted agreement" \
             "worker/src/error.rs crate::routes::Planted routes" \
             "cli/src/args.rs crate::monitor::Planted monitor"; do
  set -- $plant
  copy
  prepend "$1" "use $2;"
  expect_breach "an import back up" "$1" "$3"
done
# A module on no layer (verifier-wasm has one layer; a new module needs one).
copy
printf '\npub mod planted;\n' >>"$work/tree/verifier-wasm/src/lib.rs"
printf 'pub fn planted() {}\n' >"$work/tree/verifier-wasm/src/planted.rs"
expect_breach "a module on no layer" "verifier-wasm/src/planted.rs" "layer"

# A file over 600 production lines, and a function over 70, in each crate.
for file in core/src/time.rs worker/src/ids.rs cli/src/args.rs verifier-wasm/src/lib.rs; do
  copy
  long_const 600 >>"$work/tree/$file"
  expect_breach "a file over 600 lines" "$file" "production lines"
  copy
  long_fn 75 >>"$work/tree/$file"
  expect_breach "a function over 70 lines" "$file" "planted"
done

# An import cycle between two files of one crate (worker, core).
copy
prepend worker/src/ids.rs "use crate::error::Planted;"
prepend worker/src/error.rs "use crate::ids::Planted;"
expect_breach "an import cycle" "ids.rs" "cycle"
copy
prepend core/src/hash.rs "use crate::amount::Planted;"
prepend core/src/amount.rs "use crate::hash::Planted;"
expect_breach "an import cycle" "amount.rs" "cycle"

[ "$failed" -eq 0 ] && echo "check-architecture.sh catches every planted breach"
exit "$failed"
