"""A customer's liabilities proof (issue 31, docs/liabilities.md §4 and
§8), checked by the service's own verifier (``_verifier``): the same Rust
``core`` check as ``bvs-verify liabilities`` and the agreement page."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .models import LiabilitiesProof, VerificationReport
from .receipts import NO_WITNESS_POLICY, text_of


def verify_liabilities_proof(
    proof: LiabilitiesProof | str | dict[str, Any],
    *,
    customer_id: str | None = None,
    ledger_id: str | None = None,
    key: str | None = None,
    policy: str | None = None,
    balance: str | int | Decimal | None = None,
    witness_policy: str | None = None,
) -> VerificationReport:
    """Checks a customer's liabilities proof: the statement's hash, the
    statement in the signed log, the ledger id, the leaf amounts and each
    sum-tree path to the statement's root, total and leaf count, that the
    proof is for the customer checking it, and, with
    ``balance``, the balance. Checks are named as in docs/liabilities.md §4
    (``statementHash``, ``log.inclusion``, ``liabilities.amount``,
    ``liabilities.path``, ...); the last, ``summary``, is the sentence to
    show once all passed.

    ``customer_id``: who is checking, your own customerId (the vendor's
    name for you, on your receipts): the proof must be for your ledger,
    recomputed from it and the statement's tenantId, so another
    customer's proof fails ``customer.ledgerId``. Or ``ledger_id``: your
    ledger id (64 hex characters). One of the two is required.
    ``key``: the log's verifier key you trust (pinned from GET
    /api/v1/logs). Without one, ``policy="proof-key"`` accepts the key the
    proof names (every proof is checked, not who signed the head).
    ``balance``: the balance the customer knows (its period receipt's
    ``finalBalance``, or its own books) as decimal text, an int or a
    ``Decimal`` (a float is refused: it is not exact). ``witness_policy``:
    the C2SP tlog-policy text the statement's signed tree head is held to
    (checks ``policy``, ``policy.log``, ``witnesses``, before the others);
    required here, pinned on first use by ``Client.liabilities.verify``.
    Give the proof as the client returned it (its exact text is kept), or
    as saved text."""
    if key is None and policy != "proof-key":
        raise TypeError('give the log key you trust (key=...), or policy="proof-key"')
    if witness_policy is None:
        raise TypeError(NO_WITNESS_POLICY)
    if (customer_id is None) == (ledger_id is None):
        raise TypeError(
            "say who is checking: customer_id=<your customerId> (or ledger_id=...), one of them: "
            "a proof passes only for its own customer"
        )
    if isinstance(balance, (float, bool)):
        raise TypeError("balance: give decimal text, an int or a Decimal, not a float")
    from ._verifier import verifier

    expected = None if balance is None else format(balance, "f") if isinstance(balance, Decimal) else str(balance)
    v = verifier()
    text = text_of(proof)
    if customer_id is not None:
        report = v.verify_liabilities(text, customer_id, key, expected)
    else:
        report = v.verify_liabilities_of_ledger(text, str(ledger_id), key, expected)
    # The witness checks first: ``summary`` stays the last check.
    witnessed = v.verify_witness_policy(text, key, witness_policy)
    return {  # type: ignore[return-value]
        "ok": bool(witnessed["ok"] and report["ok"]),
        "checks": [*witnessed["checks"], *report["checks"]],
    }
