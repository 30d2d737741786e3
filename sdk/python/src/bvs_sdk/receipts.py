"""Receipt verification with the service's own verifier (``_verifier``):
the tree head's signature, every delta's itemHash and inclusion proof, the
roots, the count, the replayed balance, and the receipt's agreement side."""

from __future__ import annotations

import json
from typing import Any

from .models import Receipt, VerificationReport


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
) -> VerificationReport:
    """``key``: the log's verifier key you trust (pinned from GET
    /api/v1/logs). Without one, ``policy="receipt-key"`` accepts the key the
    receipt names (every proof is checked, not who signed the head).
    Give the receipt as ``Client.receipts.get`` returned it (its exact text
    is kept), or as the text saved from the API. A period receipt's
    ``liabilities`` proof, or ``liabilities`` (a proof saved apart), is
    checked too and tied to the receipt's customer, period and
    ``finalBalance`` (checks named ``liabilities.*``), as ``bvs-verify
    receipt`` does."""
    if key is None and policy != "receipt-key":
        raise TypeError('give the log key you trust (key=...), or policy="receipt-key"')
    text = text_of(receipt)
    from ._verifier import verifier

    v = verifier()
    report = v.verify_receipt(text, key)
    proof = None if liabilities is None else text_of(liabilities)
    tied = v.verify_receipt_liabilities(text, proof, key)
    return {"ok": bool(report["ok"] and tied["ok"]), "checks": [*report["checks"], *tied["checks"]]}


def verifier_version() -> str:
    from ._verifier import verifier

    return verifier().version()
