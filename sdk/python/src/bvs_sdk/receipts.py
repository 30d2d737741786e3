"""Receipt verification with the service's own verifier (``_verifier``):
the tree head's signature, every delta's itemHash and inclusion proof, the
roots, the count, the replayed balance, and the receipt's agreement side."""

from __future__ import annotations

import json
from typing import Any

from .models import Receipt, VerificationReport


def verify(
    receipt: Receipt | str | dict[str, Any], *, key: str | None = None, policy: str | None = None
) -> VerificationReport:
    """``key``: the log's verifier key you trust (pinned from GET
    /api/v1/logs). Without one, ``policy="receipt-key"`` accepts the key the
    receipt names (every proof is checked, not who signed the head).
    Give the receipt as ``Client.receipts.get`` returned it (its exact text
    is kept), or as the text saved from the API."""
    if key is None and policy != "receipt-key":
        raise TypeError('give the log key you trust (key=...), or policy="receipt-key"')
    if isinstance(receipt, str):
        text = receipt
    elif isinstance(receipt, Receipt) and getattr(receipt, "raw", None):
        text = receipt.raw
    else:
        text = json.dumps(receipt)
    from ._verifier import verifier

    return verifier().verify_receipt(text, key)  # type: ignore[return-value]


def verifier_version() -> str:
    from ._verifier import verifier

    return verifier().version()
