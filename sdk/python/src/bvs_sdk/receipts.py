"""Receipt verification with the service's own verifier (``_verifier``):
the tree head's signature, every delta's itemHash and inclusion proof, the
roots, the count, the replayed balance, and the receipt's agreement side."""

from __future__ import annotations

import json
from typing import Any

from .models import Receipt, VerificationReport


NO_WITNESS_POLICY = (
    "give the witness policy you trust (witness_policy=...: C2SP tlog-policy text, e.g. the log list's "
    "witnessPolicyText from GET /api/v1/logs), or verify through a Client, which pins its log list's "
    "policy on first use"
)


def text_of(doc: str | dict[str, Any]) -> str:
    """A document's exact text: given as text, kept by the client (``.raw``),
    or else written out as JSON."""
    if isinstance(doc, str):
        return doc
    raw = getattr(doc, "raw", None)
    if isinstance(raw, str) and raw:
        return raw
    return json.dumps(doc)


def verify(
    receipt: Receipt | str | dict[str, Any],
    *,
    key: str | None = None,
    policy: str | None = None,
    liabilities: str | dict[str, Any] | None = None,
    witness_policy: str | None = None,
) -> VerificationReport:
    """``key``: the log's verifier key you trust (pinned from GET
    /api/v1/logs). Without one, ``policy="receipt-key"`` accepts the key the
    receipt names (every proof is checked, not who signed the head).
    Give the receipt as ``Client.receipts.get`` returned it (its exact text
    is kept), or as the text saved from the API. A period receipt's
    ``liabilities`` proof, or ``liabilities`` (a proof saved apart), is
    checked too and tied to the receipt's customer, period and
    ``finalBalance`` (checks named ``liabilities.*``), as ``bvs-verify
    receipt`` does. ``witness_policy``: C2SP tlog-policy text (the log
    list's ``witnessPolicyText``, saved, or one you wrote) the receipt's
    signed tree head is held to, as ``bvs-verify receipt --policy`` does
    (checks ``policy``, ``policy.log``, ``witnesses``): a receipt whose
    cosignatures were stripped fails. Required here; ``Client.receipts.verify``
    pins its log list's policy on first use when none is given."""
    if key is None and policy != "receipt-key":
        raise TypeError('give the log key you trust (key=...), or policy="receipt-key"')
    if witness_policy is None:
        raise TypeError(NO_WITNESS_POLICY)
    text = text_of(receipt)
    from ._verifier import verifier

    v = verifier()
    report = v.verify_receipt(text, key)
    proof = None if liabilities is None else text_of(liabilities)
    tied = v.verify_receipt_liabilities(text, proof, key)
    witnessed = v.verify_witness_policy(text, key, witness_policy)
    reports = [report, tied, witnessed]
    return {"ok": all(bool(r["ok"]) for r in reports), "checks": [c for r in reports for c in r["checks"]]}


def verify_as_of(answer: str | dict[str, Any], *, key: str) -> VerificationReport:
    """A balance as of a moment: derive's answer with ``asOf`` (or its
    ``data``, or the ``asOf`` object; docs/balance.md "As of"), checked by
    core's ``verify::verify_as_of`` as ``bvs-verify as-of`` does: the tree
    head's signature, each listed delta's inclusion and raw content, that
    they are the ledger's consecutive deltas, the boundary, the count, the
    last delta and the balance. ``key``: the log's verifier key you trust."""
    if not key:
        raise TypeError("give the log key you trust (key=...)")
    from ._verifier import verifier

    report: VerificationReport = verifier().verify_as_of(text_of(answer), key)  # type: ignore[assignment]
    return report


def named_log_key(text: str) -> str | None:
    """The log key a document names (a receipt's ``proof.publicKey``, a
    liabilities proof's ``log.publicKey``): only to pick which log's policy
    a Client pins; the verifier checks the key itself."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    doc = value.get("data") if isinstance(value, dict) and isinstance(value.get("success"), bool) else value
    if not isinstance(doc, dict):
        return None
    for holder in ("proof", "log"):
        h = doc.get(holder)
        if isinstance(h, dict) and isinstance(h.get("publicKey"), str):
            return str(h["publicKey"])
    return None


def verifier_version() -> str:
    from ._verifier import verifier

    return verifier().version()
