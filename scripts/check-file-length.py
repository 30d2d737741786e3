#!/usr/bin/env python3
"""Fails when a file's production code is longer than FILE_LINES_MAX lines.

One limit everywhere, counted the same way in every crate (worker, core,
cli, verifier-wasm): a file's lines outside its tests, the test items and
test files that scripts/check-fn-length.py skips (`#[cfg(test)]` items,
`tests.rs`, `*_tests.rs`, `tests/` folders). Run by
scripts/check-architecture.sh.

Usage: check-file-length.py [--all] [DIR_OR_FILE ...]   (default: every crate)
  --all  lists every file with its production lines, longest first, and exits 0.
"""
import importlib.util
import os
import sys

FILE_LINES_MAX = 600
CRATES = ["worker/src", "core/src", "cli/src", "verifier-wasm/src"]

_spec = importlib.util.spec_from_file_location(
    "check_fn_length", os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-fn-length.py"))
fn_length = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fn_length)


def production_lines(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return len(lines) - len(fn_length.test_lines(lines))


def main(argv):
    paths = [a for a in argv if not a.startswith("--")] or CRATES
    counted = sorted(((production_lines(f), f) for f in fn_length.files(paths)), reverse=True)
    if "--all" in argv:
        for n, f in counted:
            print(f"{n:6} {f}")
        return 0
    long = [(n, f) for n, f in counted if n > FILE_LINES_MAX]
    for n, f in long:
        print(f"architecture: {f} has {n} production lines (at most {FILE_LINES_MAX})",
              file=sys.stderr)
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
