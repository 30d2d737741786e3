#!/usr/bin/env python3
"""A second implementation of docs/liabilities.md, written from that page
(and docs/hashes.md for the log's leaves) alone, with nothing but the
Python standard library. core/tests/liabilities_cross_check.rs feeds it
statements to build and proof documents to check, on stdin as JSON, and
compares its answers with bvs-core's.

Input:  {"build": [{"tenantId", "environment", "period", "seed",
                    "balances": [[customerId, "decimal"], ...]}, ...],
         "verify": ["<proof document JSON text>", ...]}
Output: {"build": [{"statement": "<RFC 8785 JSON>", "statementHash",
                    "customers": {customerId: {"liabilities": {...},
                                               "receivables": {...}|null}}}],
         "verify": [{"ok": bool, "why": str}, ...]}

The log's signature (Ed25519) is not checked here: the standard library
has no Ed25519. Everything else of section 4 is.
"""

import base64
import hashlib
import json
import sys
from decimal import Decimal, getcontext

# Exact decimals: amounts have up to 21 + 18 digits; Python's default
# context rounds products to 28.
getcontext().prec = 100

SCALE = 10**18
AMOUNT_MAX = 10**20 * SCALE  # section 2: from 0 to 10^20
FF = b"\xff"


def sha(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.digest()


# ---------------------------------------------------------------- amounts


def units(value):
    """An amount (JSON number or string) as an integer of 10^-18 units."""
    d = Decimal(str(value))
    u = d * SCALE
    if u != u.to_integral_value():
        raise ValueError("more than 18 decimals: %s" % value)
    return int(u)


def text(u):
    """Canonical decimal text: plain, no exponent, no trailing zeros."""
    sign = "-" if u < 0 else ""
    u = abs(u)
    whole, frac = divmod(u, SCALE)
    if frac == 0:
        return "%s%d" % (sign, whole)
    return "%s%d.%s" % (sign, whole, ("%018d" % frac).rstrip("0"))


def in_range(u):
    return 0 <= u <= AMOUNT_MAX


# ---------------------------------------------------------------- the tree


class Bad(Exception):
    pass


def tags(kind):
    return {
        "leaf": ("bvs-%s-leaf-v1" % kind).encode(),
        "node": ("bvs-%s-node-v1" % kind).encode(),
        "root": ("bvs-%s-root-v1" % kind).encode(),
    }


def leaf(kind, salt, ledger, amount):
    if not in_range(amount):
        raise Bad("leaf amount out of range")
    return (sha(FF, tags(kind)["leaf"], salt, ledger, text(amount).encode()), amount)


def node(kind, left, right):
    for _, s in (left, right):
        if not in_range(s):
            raise Bad("a sum out of range")
    total = left[1] + right[1]
    if not in_range(total):
        raise Bad("a node sum out of range")
    h = sha(
        FF,
        tags(kind)["node"],
        left[0],
        right[0],
        text(left[1]).encode(),
        b"\n",
        text(right[1]).encode(),
    )
    return (h, total)


def seal(kind, top, count):
    return sha(FF, tags(kind)["root"], top[0], text(top[1]).encode(), b"\n", str(count).encode())


def split(n):
    """Largest power of two strictly below n (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(kind, leaves):
    if len(leaves) == 0:
        return (bytes(32), 0)
    if len(leaves) == 1:
        return leaves[0]
    k = split(len(leaves))
    return node(kind, mth(kind, leaves[:k]), mth(kind, leaves[k:]))


def path(kind, leaves, m):
    """RFC 9162 PATH(m, D[n]), leaf side first."""
    n = len(leaves)
    if n <= 1:
        return []
    k = split(n)
    if m < k:
        return path(kind, leaves[:k], m) + [mth(kind, leaves[k:])]
    return path(kind, leaves[k:], m - k) + [mth(kind, leaves[:k])]


def walk(kind, start, index, count, siblings):
    """RFC 9162 section 2.1.3.2's walk, each step a checked node."""
    if index >= count:
        raise Bad("index out of range")
    fn, sn = index, count - 1
    r = start
    for p in siblings:
        if sn == 0:
            raise Bad("path too long")
        if fn & 1 == 1 or fn == sn:
            r = node(kind, p, r)
            if fn & 1 == 0:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node(kind, r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise Bad("path too short")
    return r


# ---------------------------------------------------------------- statements


def ledger_id(tenant, customer):
    return sha(b"bvs-ledger-v1\n" + tenant.encode() + b"\n" + customer.encode())


def statement_json(st):
    """RFC 8785 form: keys sorted, no white space (json.dumps with
    sort_keys and compact separators is that for these ASCII values)."""
    return json.dumps(st, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def statement_hash(st):
    return sha(FF, b"bvs-liabilities-statement-v1", statement_json(st).encode())


def build(case):
    tenant, seed = case["tenantId"], bytes.fromhex(case["seed"])
    ledgers = []
    for customer, balance in case["balances"]:
        lid = ledger_id(tenant, customer)
        order = sha(FF, b"bvs-liabilities-order-v1", seed, lid)
        ledgers.append((order, customer, lid, units(balance)))
    ledgers.sort()
    trees = {"liabilities": [], "receivables": []}
    where = {}
    for _, customer, lid, b in ledgers:
        place = {}
        owed = b if b > 0 else 0
        salt = sha(FF, b"bvs-liabilities-salt-v1", seed, tags("liabilities")["leaf"], lid)
        place["liabilities"] = (len(trees["liabilities"]), salt, owed)
        trees["liabilities"].append(leaf("liabilities", salt, lid, owed))
        if b < 0:
            salt = sha(FF, b"bvs-liabilities-salt-v1", seed, tags("receivables")["leaf"], lid)
            place["receivables"] = (len(trees["receivables"]), salt, -b)
            trees["receivables"].append(leaf("receivables", salt, lid, -b))
        where[customer] = place
    summary = {}
    for kind, leaves in trees.items():
        top = mth(kind, leaves)
        summary[kind] = {
            "leafCount": len(leaves),
            "root": seal(kind, top, len(leaves)).hex(),
            "total": text(top[1]),
        }
    st = {
        "environment": case["environment"],
        "liabilities": summary["liabilities"],
        "period": case["period"],
        "receivables": summary["receivables"],
        "scheme": "bvs-liabilities-v1",
        "supersedes": None,
        "tenantId": tenant,
    }
    customers = {}
    for customer, place in where.items():
        out = {"receivables": None}
        for kind, (index, salt, amount) in place.items():
            out[kind] = {
                "leafIndex": index,
                "salt": salt.hex(),
                "amount": text(amount),
                "path": [
                    {"hash": h.hex(), "sum": text(s)} for h, s in path(kind, trees[kind], index)
                ],
            }
        customers[customer] = out
    return {
        "statement": statement_json(st),
        "statementHash": statement_hash(st).hex(),
        "customers": customers,
    }


# ---------------------------------------------------------------- checking a proof


def log_leaf(item):
    return sha(b"\x00bvs-log-v1", item)


def log_node(left, right):
    return sha(b"\x01", left, right)


def check_log(log, item):
    if log is None:
        raise Bad("no log proof")
    if log["hashScheme"] != "bvs-log-v1":
        raise Bad("unknown hashScheme")
    lines = log["treeHead"].split("\n")
    size, root = int(lines[1]), base64.b64decode(lines[2])
    index = log["leafIndex"]
    if index >= size:
        raise Bad("log index out of range")
    fn, sn = index, size - 1
    r = log_leaf(item)
    for p in log["inclusionProof"]:
        p = bytes.fromhex(p)
        if sn == 0:
            raise Bad("log path too long")
        if fn & 1 == 1 or fn == sn:
            r = log_node(p, r)
            while fn & 1 == 0 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = log_node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0 or r != root:
        raise Bad("statement not in the signed log")


def check_tree(kind, st, ledger, proof, want):
    if units(proof["amount"]) != want:
        raise Bad("%s leaf holds the wrong amount" % kind)
    start = leaf(kind, bytes.fromhex(proof["salt"]), ledger, units(proof["amount"]))
    siblings = []
    for p in proof["path"]:
        s = units(p["sum"])
        if not in_range(s):
            raise Bad("a sibling sum out of range")
        siblings.append((bytes.fromhex(p["hash"]), s))
    count = st[kind]["leafCount"]
    top = walk(kind, start, proof["leafIndex"], count, siblings)
    if seal(kind, top, count).hex() != st[kind]["root"]:
        raise Bad("%s root differs" % kind)
    if top[1] != units(st[kind]["total"]):
        raise Bad("%s total differs" % kind)


def verify(doc_text):
    doc = json.loads(doc_text, parse_float=Decimal)
    if doc.get("success") is not None:
        doc = doc["data"]
    if doc["scheme"] != "bvs-liabilities-v1":
        raise Bad("unknown scheme")
    st = doc["statement"]
    item = statement_hash(st)
    if item.hex() != doc["statementHash"]:
        raise Bad("statementHash differs")
    check_log(doc.get("log"), item)
    c = doc["customer"]
    ledger = bytes.fromhex(c["ledgerId"])
    if c.get("customerId") is not None and ledger_id(st["tenantId"], c["customerId"]) != ledger:
        raise Bad("ledgerId differs")
    balance = units(c["balance"])
    check_tree("liabilities", st, ledger, doc["liabilities"], max(balance, 0))
    if balance < 0:
        if doc.get("receivables") is None:
            raise Bad("no receivables leaf")
        check_tree("receivables", st, ledger, doc["receivables"], -balance)
    elif doc.get("receivables") is not None:
        raise Bad("a receivables leaf for a balance that is not negative")
    return "ok"


def main():
    request = json.load(sys.stdin)
    out = {"build": [build(c) for c in request.get("build", [])], "verify": []}
    for d in request.get("verify", []):
        try:
            out["verify"].append({"ok": True, "why": verify(d)})
        except (Bad, KeyError, ValueError, TypeError, IndexError) as e:
            out["verify"].append({"ok": False, "why": "%s: %s" % (type(e).__name__, e)})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
