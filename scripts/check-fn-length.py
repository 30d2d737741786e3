#!/usr/bin/env python3
"""Fails when a production function is longer than its crate's limit.

One limit everywhere, FN_LINES_MAX lines; two checks, both run by
scripts/check-architecture.sh:
  - the worker, all of worker/src (the default, no arguments);
  - `--crates`: core, cli and verifier-wasm.
`--all [PATH ...]` lists every function over the limit (`--max N`, default
FN_LINES_MAX) under the paths, or worker/src, and exits 0.

A function runs from its `fn` line to the first line that closes it at the
same indentation (rustfmt's layout). Tests are not production code: a
`#[cfg(test)]` (or `#[cfg(all(test, ..))]`) item, files named `tests.rs`
or `*_tests.rs`, and `tests/` folders are skipped.

Usage: check-fn-length.py [--crates] [--all] [--max N] [FILE_OR_DIR ...]
"""
import os
import re
import sys

FN_LINES_MAX = 70
WORKER = ["worker/src"]
CRATES = ["core/src", "cli/src", "verifier-wasm/src"]

FN = re.compile(r"^(\s*)(pub(\([a-z]+\))?\s+)?(async\s+)?(const\s+)?(unsafe\s+)?fn\s+(\w+)")


def is_test_file(path):
    name = os.path.basename(path)
    parts = path.replace(os.sep, "/").split("/")
    return name == "tests.rs" or name.endswith("_tests.rs") or "tests" in parts[:-1]


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                for n in sorted(names):
                    f = os.path.join(root, n)
                    if n.endswith(".rs") and not is_test_file(f):
                        yield f
        else:
            yield p


TEST_CFG = re.compile(r"^(\s*)#\[cfg\((test|all\(test\b)")


def test_lines(lines):
    """The lines of `#[cfg(test)]` items (and `#[cfg(all(test, ..))]`):
    from the attribute to the `;` of a `mod x;` or the `}` closing the
    item at the attribute's indentation."""
    skipped = set()
    for i, line in enumerate(lines):
        m = TEST_CFG.match(line)
        if not m or i in skipped:
            continue
        k = i + 1
        while k < len(lines) and lines[k].strip().startswith(("#[", "//")):
            k += 1
        end = k
        if not lines[k].rstrip().endswith(";"):
            close = m.group(1) + "}"
            end = next((j for j in range(k, len(lines)) if lines[j] == close), len(lines) - 1)
        skipped.update(range(i, end + 1))
    return skipped


def functions(path):
    """Every function of `path` outside tests: (line, name, lines)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    tests = test_lines(lines)
    out = []
    for i, line in enumerate(lines):
        if i in tests:
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
        close = m.group(1) + "}"
        for j in range(i + 1, len(lines)):
            if lines[j] == close:
                out.append((i + 1, m.group(7), j - i + 1))
                break
    return out


def long_functions(paths, limit):
    return [(path, line, name, n)
            for path in files(paths)
            for line, name, n in functions(path)
            if n > limit]


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    limit = FN_LINES_MAX
    if "--max" in argv:
        k = argv.index("--max") + 1
        limit = int(argv[k])
        args = [a for a in argv[:k - 1] + argv[k + 1:] if not a.startswith("--")]
    if "--all" in argv:
        for path, line, name, n in long_functions(args or ["worker/src"], limit):
            print(f"{path}:{line}: fn {name} has {n} lines (limit {limit})")
        return 0
    found = long_functions(args or (CRATES if "--crates" in argv else WORKER), limit)
    for path, line, name, n in found:
        print(f"architecture: {path}:{line}: fn {name} has {n} lines (at most {limit})",
              file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
