#!/usr/bin/env python3
"""Fails when a function on the delta's path (emit, sequence, receipt) is
longer than FN_LINES_MAX lines, or, with --all, lists every function of
worker/src over it. A function runs from its `fn` line to the first line
that closes it at the same indentation (rustfmt's layout); tests aside.

Usage: check-fn-length.py [--all] [FILE_OR_DIR ...]
"""
import os
import re
import sys

FN_LINES_MAX = 80
# The delta's path: the emit handler, the ledger (submit, sequence,
# prove) and the receipt and public-verify handlers.
DELTA_PATH = ["worker/src/ledger", "worker/src/routes/balance.rs", "worker/src/routes/proofs.rs"]

FN = re.compile(r"^(\s*)(pub(\([a-z]+\))?\s+)?(async\s+)?(const\s+)?(unsafe\s+)?fn\s+(\w+)")


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                for n in sorted(names):
                    if n.endswith(".rs") and not n.endswith("_tests.rs"):
                        yield os.path.join(root, n)
        else:
            yield p


def long_functions(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    in_tests = None
    for i, line in enumerate(lines):
        if in_tests is None and re.match(r"^\s*#\[cfg\(test\)\]", line):
            in_tests = i
        if in_tests is not None:
            continue
        m = FN.match(line)
        if not m:
            continue
        # A declaration (trait item, or a store macro's `fn ... = first(..);`)
        # ends with `;` before any body opens.
        k = i
        while k < len(lines) and not lines[k].rstrip().endswith(("{", ";")):
            k += 1
        if k == len(lines) or lines[k].rstrip().endswith(";"):
            continue
        indent = m.group(1)
        close = indent + "}"
        for j in range(i + 1, len(lines)):
            if lines[j] == close:
                n = j - i + 1
                if n > FN_LINES_MAX:
                    out.append((path, i + 1, m.group(7), n))
                break
    return out


def main(argv):
    paths = [a for a in argv if not a.startswith("--")]
    if "--all" in argv:
        paths = paths or ["worker/src"]
    paths = paths or DELTA_PATH
    found = [hit for p in files(paths) for hit in long_functions(p)]
    for path, line, name, n in found:
        print(f"architecture: {path}:{line}: fn {name} has {n} lines (at most {FN_LINES_MAX})",
              file=sys.stderr)
    return 1 if found and "--all" not in argv else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
