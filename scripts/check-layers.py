#!/usr/bin/env python3
"""Calls go one way (ARCHITECTURE.md), in every crate: each module sits on
a layer, and a file may import only from its own layer or a lower one.
Reads `crate::a::b` and `super::a` paths (and `use` groups of both), and
a name the crate root re-exports (`crate::Hash32`) as an import of the
module that defines it and of the root; tests aside (the items and files scripts/check-fn-length.py
skips). Exits 1 naming each import that runs back up, and each module
that has no layer.

The layers of each crate, top first (a module's layer is that of its
first path part; a folder is one module; the crate root is `lib`, or
`main` for a binary):"""
import importlib.util
import os
import re
import sys

CRATES = {
    "worker/src": [
        ["lib"],
        ["router"],
        ["routes"],
        ["consumer", "cron", "tenant"],
        ["webhooks", "search", "request_log"],
        ["auth", "ping", "retention"],
        ["emit", "proofs"],
        ["agreement"],
        ["liabilities", "sequencer"],
        ["witness", "facts", "ledgers"],
        ["ledger"],
        ["views", "mail", "profile", "quota", "idempotency", "owned", "meter"],
        ["store"],
        ["plan"],
        ["secret", "limiter", "request_id", "fields"],
        ["app", "http"],
        ["jobs", "ids", "roundtrips", "limits"],
        ["error"],
    ],
    "core/src": [
        ["lib", "test_notes"],
        ["agreement"],
        ["liabilities"],
        ["verify"],
        ["witness", "policy"],
        ["tlog_proof", "cosignature"],
        ["receipt", "tiles"],
        ["note", "log", "frontier", "monitor", "item"],
        ["conditions"],
        ["json", "merkle", "derive", "pinpoint"],
        ["hash", "amount", "types"],
        ["time", "error"],
    ],
    "cli/src": [
        ["main"],
        ["monitor"],
        ["args"],
    ],
    "verifier-wasm/src": [
        ["lib"],
    ],
}
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..")

_spec = importlib.util.spec_from_file_location("check_fn_length", os.path.join(HERE, "check-fn-length.py"))
fn_length = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fn_length)


def module_of(path):
    parts = path[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts or ["lib"]


def production(path):
    """The file's text outside its tests, comments dropped."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    tests = fn_length.test_lines(lines)
    text = "\n".join(l for i, l in enumerate(lines) if i not in tests)
    return re.sub(r"//[^\n]*", "", text)


def reexports(root):
    """Names the crate root re-exports (`pub use hash::Hash32;`), by the
    module that defines them."""
    found = {}
    for name in ("lib.rs", "main.rs"):
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            continue
        for m in re.finditer(r"pub use ([a-z_][a-z0-9_]*)::(?:\{([^}]*)\}|(\w+))\s*;", production(path)):
            for item in re.findall(r"\w+", m.group(2) or m.group(3)):
                found[item] = m.group(1)
    return found


def targets(path, text, roots):
    """The first path part of every module this file names."""
    me = module_of(path)
    found = set()
    for m in re.finditer(r"\bcrate::([A-Za-z_][A-Za-z0-9_]*)", text):
        name = m.group(1)
        if name in roots:
            # Through the crate root: an import of the root too (the root
            # re-exports for other crates; inside, name the module).
            found.update((roots[name], "lib"))
        else:
            found.add(name)
    for m in re.finditer(r"use crate::\{([^;]*)\};", text, re.S):
        for name in re.findall(r"(?:^|[{,\s])([A-Za-z_][A-Za-z0-9_]*)(?=::|,|\s|\}|$)", m.group(1)):
            found.add(roots.get(name, name))
    parent = me[:-1]
    if parent:
        # super:: from a file below a folder stays inside that folder.
        return found
    for m in re.finditer(r"\bsuper::([a-z_][a-z0-9_]*)", text):
        found.add(m.group(1))
    return found


def check(crate, layers):
    rank = {m: len(layers) - i for i, layer in enumerate(layers) for m in layer}
    root = os.path.join(REPO, crate)
    roots = reexports(root)
    bad = []
    for d, _, names in os.walk(root):
        for n in sorted(names):
            full = os.path.join(d, n)
            if not n.endswith(".rs") or fn_length.is_test_file(full):
                continue
            path = os.path.relpath(full, root)
            me = module_of(path)[0]
            if me not in rank:
                bad.append(f"{crate}/{path}: module `{me}` has no layer in scripts/check-layers.py")
                continue
            for t in sorted(targets(path, production(full), roots)):
                if t in rank and t != me and rank[t] > rank[me]:
                    bad.append(f"{crate}/{path}: `{me}` imports `{t}`, a higher layer")
    return bad


def main(argv):
    crates = [c.rstrip("/") for c in argv] or list(CRATES)
    bad = []
    for crate in crates:
        if crate not in CRATES:
            bad.append(f"{crate}: no layers declared in scripts/check-layers.py")
            continue
        bad += check(crate, CRATES[crate])
    for b in bad:
        print("architecture: " + b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
