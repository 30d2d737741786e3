#!/usr/bin/env python3
"""Calls go one way (ARCHITECTURE.md): every module of worker/src sits on a
layer, and a file may import only from its own layer or a lower one. Reads
`crate::a::b` and `super::a` paths (and `use` groups of both), tests
aside; exits 1 naming each import that runs back up.

The layers, top first (a module's layer is that of its first path part;
a folder is one module):"""
import os
import re
import sys

LAYERS = [
    ["lib"],
    ["router"],
    ["routes"],
    ["consumer", "cron", "tenant"],
    ["webhooks", "search", "request_log"],
    ["auth", "ping", "retention"],
    ["ledger"],
    ["views", "mail", "profile", "quota", "idempotency", "owned"],
    ["store"],
    ["plan"],
    ["secret", "limiter", "request_id", "fields"],
    ["app", "http"],
    ["jobs", "ids", "error", "roundtrips"],
]
RANK = {m: len(LAYERS) - i for i, layer in enumerate(LAYERS) for m in layer}
ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "worker", "src")


def module_of(path):
    parts = path[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts or ["lib"]


def targets(path, text):
    """The first path part of every module this file names."""
    me = module_of(path)
    found = set()
    for m in re.finditer(r"\bcrate::([a-z_][a-z0-9_]*)", text):
        found.add(m.group(1))
    for m in re.finditer(r"use crate::\{([^;]*)\};", text, re.S):
        found.update(re.findall(r"(?:^|[{,\s])([a-z_][a-z0-9_]*)(?=::|,|\s|\}|$)", m.group(1)))
    parent = me[:-1]
    if parent:
        # super:: from a file below a folder stays inside that folder.
        return found
    for m in re.finditer(r"\bsuper::([a-z_][a-z0-9_]*)", text):
        found.add(m.group(1))
    return found


def main():
    bad = []
    for d, _, names in os.walk(ROOT):
        for n in sorted(names):
            if not n.endswith(".rs") or n.endswith("_tests.rs"):
                continue
            path = os.path.relpath(os.path.join(d, n), ROOT)
            text = open(os.path.join(ROOT, path), encoding="utf-8").read()
            text = re.split(r"#\[cfg\(test\)\]", text)[0]
            text = re.sub(r"//[^\n]*", "", text)
            me = module_of(path)[0]
            if me not in RANK:
                bad.append(f"{path}: module `{me}` has no layer in scripts/check-layers.py")
                continue
            for t in sorted(targets(path, text)):
                if t in RANK and t != me and RANK[t] > RANK[me]:
                    bad.append(f"{path}: `{me}` imports `{t}`, a higher layer")
    for b in bad:
        print("architecture: " + b, file=sys.stderr)
    sys.exit(1 if bad else 0)


main()
