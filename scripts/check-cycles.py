#!/usr/bin/env python3
"""Import cycles between the files of a crate (ARCHITECTURE.md: no import
cycle), in every crate: worker, core, cli, verifier-wasm. Reads `use
crate::...`, `crate::a::b` and `super::` paths; exits 1 naming a cycle.

Usage: check-cycles.py [CRATE_SRC_DIR ...]   (default: every crate)"""
import os
import re
import sys

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CRATES = ["worker/src", "core/src", "cli/src", "verifier-wasm/src"]
ROOT = os.path.join(REPO, "worker", "src")


def module_file(parts):
    """The file that defines the longest module prefix of `parts`."""
    for n in range(len(parts), 0, -1):
        base = os.path.join(ROOT, *parts[:n])
        for cand in (base + ".rs", os.path.join(base, "mod.rs")):
            if os.path.isfile(cand):
                return os.path.relpath(cand, ROOT)
    return None


def imports(path):
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    # Drop test modules: a test may reach anywhere.
    text = re.split(r"#\[cfg\(test\)\]", text)[0]
    # Comments name modules without importing them.
    text = re.sub(r"//[^\n]*", "", text)
    found = set()
    for m in re.finditer(r"crate::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)", text):
        target = module_file(m.group(1).split("::"))
        if target and target != path:
            found.add(target)
    # `use crate::{a, b::c}` groups.
    for m in re.finditer(r"use crate::\{([^;]*)\};", text, re.S):
        for item in re.findall(r"([a-z_][a-z0-9_]*)(?:::([a-z_][a-z0-9_]*))?", m.group(1)):
            target = module_file([p for p in item if p])
            if target and target != path:
                found.add(target)
    # `super::a::b` paths and `use super::{a, b::c}` groups, from the
    # parent of this file's module (a sibling file, or the folder's mod.rs).
    parent = module_of(path)[:-1]
    for m in re.finditer(r"\bsuper::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)", text):
        target = module_file(parent + m.group(1).split("::"))
        if target and target != path:
            found.add(target)
    for m in re.finditer(r"use super::\{([^;]*)\};", text, re.S):
        for item in re.findall(r"([a-z_][a-z0-9_]*)(?:::([a-z_][a-z0-9_]*))?", m.group(1)):
            target = module_file(parent + [p for p in item if p])
            if target and target != path:
                found.add(target)
    return found


def module_of(path):
    """The module path of a file: `sequencer/round.rs` is sequencer::round,
    `ledger/mod.rs` and `ledger.rs` are ledger, `lib.rs` the crate."""
    parts = path[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def main(root):
    global ROOT
    ROOT = root
    files = []
    for d, _, names in os.walk(ROOT):
        for n in names:
            if n.endswith(".rs"):
                files.append(os.path.relpath(os.path.join(d, n), ROOT))
    graph = {f: imports(f) for f in sorted(files)}
    # The crate root and the route table name everything; they are the top.
    for top in ("lib.rs", "main.rs", "router.rs"):
        graph.pop(top, None)
    for f in graph:
        graph[f] = {g for g in graph[f] if g in graph}
    state, stack = {}, []

    def visit(f):
        state[f] = 1
        stack.append(f)
        for g in sorted(graph[f]):
            if state.get(g) == 1:
                cycle = stack[stack.index(g):] + [g]
                print("architecture: import cycle: " + " -> ".join(cycle), file=sys.stderr)
                sys.exit(1)
            if g not in state:
                visit(g)
        stack.pop()
        state[f] = 2

    sys.setrecursionlimit(10000)
    for f in graph:
        if f not in state:
            visit(f)


for crate in sys.argv[1:] or CRATES:
    main(crate if os.path.isabs(crate) else os.path.join(REPO, crate))
