"""A customer's liabilities proof without a service (issue 31): the proof
saved from a liabilities.rs run (sdk/testdata) verifies with the log key and
the customer's balance; a changed leaf amount, sibling sum or balance fails
with the check named; a period receipt's proof is tied to it; the client's
routes keep the answer's exact text for verify()."""

from __future__ import annotations

import asyncio
import json
import re
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from bvs_sdk import AsyncClient, Client, LiabilitiesProof, receipts, verify_liabilities_proof

TESTDATA = Path(__file__).resolve().parents[2] / "testdata"
PROOF = (TESTDATA / "liabilities-proof.json").read_text()  # liab-002, balance 6.88
NEGATIVE = (TESTDATA / "liabilities-proof-negative.json").read_text()
KEY: str = json.loads(PROOF)["log"]["publicKey"]
# The fixtures' heads were made without witnesses: a policy that requires
# none (one that requires a witness fails them, below).
NONE = "quorum none\n"
ONE_WITNESS = (
    f"log {KEY}\nwitness w1 w1.example/bvs+b5ca3c68+BJoOY0yqJdeQgPyUGY676znsgL3V42EGcvp2MbKPNjtS\nquorum w1\n"
)


def failed(report: object) -> list[str]:
    return [c["name"] for c in report["checks"] if not c["ok"]]  # type: ignore[index]


def test_a_customers_proof_verifies_with_the_log_key_and_its_balance() -> None:
    r = verify_liabilities_proof(PROOF, witness_policy=NONE, customer_id="liab-002", key=KEY, balance="6.88")
    assert r["ok"], r
    names = [c["name"] for c in r["checks"]]
    for n in ["statementHash", "log.inclusion", "customer.ledgerId", "balance", "liabilities.amount", "liabilities.path"]:
        assert n in names
    assert names[-1] == "summary"
    assert "your balance of 6.88 is counted in a total of 34424 owed to 200 customers" in r["checks"][-1]["detail"]
    assert verify_liabilities_proof(NEGATIVE, witness_policy=NONE, customer_id="liab-001", key=KEY, balance=Decimal("-1.43"))["ok"]


def test_a_tampered_proof_fails_with_the_check_named() -> None:
    amount = verify_liabilities_proof(
        PROOF.replace('"amount":6.88', '"amount":0.01', 1), witness_policy=NONE, customer_id="liab-002", key=KEY, balance="6.88"
    )
    assert not amount["ok"] and "liabilities.amount" in failed(amount)
    bumped = re.sub(r'"sum":[0-9.]+', '"sum":123456', PROOF, count=1)
    assert bumped != PROOF
    assert failed(verify_liabilities_proof(bumped, witness_policy=NONE, customer_id="liab-002", key=KEY)) == ["liabilities.path"]
    assert failed(verify_liabilities_proof(PROOF, witness_policy=NONE, customer_id="liab-002", key=KEY, balance="6.89")) == ["balance"]


def test_without_a_key_the_caller_must_choose_the_proofs_own_key() -> None:
    with pytest.raises(TypeError):
        verify_liabilities_proof(PROOF, witness_policy=NONE, customer_id="liab-002")
    with pytest.raises(TypeError):
        verify_liabilities_proof(PROOF, witness_policy=NONE, customer_id="liab-002", key=KEY, balance=6.88)  # type: ignore[arg-type]
    r = verify_liabilities_proof(PROOF, witness_policy=NONE, customer_id="liab-002", policy="proof-key")
    assert r["ok"]
    assert "not pinned" in next(c["detail"] for c in r["checks"] if c["name"] == "log.publicKey")


def test_another_customers_proof_fails_for_the_customer_checking_it() -> None:
    """Issue 40: who checks is required; liab-002's proof, with its
    customerId taken out, fails for liab-001, by customerId or ledger id."""
    with pytest.raises(TypeError):
        verify_liabilities_proof(PROOF, witness_policy=NONE, key=KEY)
    unnamed = PROOF.replace('"customerId":"liab-002"', '"customerId":null', 1)
    assert unnamed != PROOF
    assert failed(verify_liabilities_proof(unnamed, witness_policy=NONE, customer_id="liab-001", key=KEY)) == ["customer.ledgerId"]
    assert failed(verify_liabilities_proof(PROOF, witness_policy=NONE, customer_id="liab-001", key=KEY)) == ["customer.ledgerId"]
    assert verify_liabilities_proof(unnamed, witness_policy=NONE, customer_id="liab-002", key=KEY)["ok"]
    own = json.loads(PROOF)["customer"]["ledgerId"]
    other = json.loads(NEGATIVE)["customer"]["ledgerId"]
    assert verify_liabilities_proof(unnamed, witness_policy=NONE, ledger_id=own, key=KEY, balance="6.88")["ok"]
    assert failed(verify_liabilities_proof(unnamed, witness_policy=NONE, ledger_id=other, key=KEY)) == ["customer.ledgerId"]


def test_a_period_receipts_liabilities_proof_is_tied_to_the_receipt() -> None:
    receipt = (TESTDATA / "liabilities-receipt.json").read_text()
    r = receipts.verify(receipt, witness_policy=NONE, key=KEY)
    assert r["ok"], failed(r)
    assert any(c["name"] == "liabilities.receipt" and c["ok"] for c in r["checks"])
    other = receipts.verify(receipt, witness_policy=NONE, key=KEY, liabilities=NEGATIVE)
    assert not other["ok"] and "liabilities.receipt" in failed(other)


def _transport(seen: list[str]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, content=f'{{"success":true,"statusCode":200,"data":{PROOF}}}'.encode())

    return httpx.MockTransport(handler)


def test_the_clients_proof_routes_keep_the_exact_text() -> None:
    seen: list[str] = []
    c = Client(base_url="http://x.invalid", api_key="k", http_client=httpx.Client(transport=_transport(seen)))
    by_vendor = c.liabilities.get_proof("liab 002", period="2026-11")
    root = "ab" * 32
    by_root = c.liabilities.get_proof_by_root(root)
    assert seen == [
        "http://x.invalid/api/v1/balance/customers/liab%20002/liabilities-proof?period=2026-11",
        f"http://x.invalid/api/v1/agreement/liabilities-proof/{root}",
    ]
    for p in (by_vendor, by_root):
        assert isinstance(p, LiabilitiesProof) and p["customer"]["customerId"] == "liab-002"
        assert c.liabilities.verify(p, witness_policy=NONE, customer_id="liab-002", key=KEY, balance="6.88")["ok"]


def test_the_async_client_too() -> None:
    seen: list[str] = []
    c = AsyncClient(base_url="http://x.invalid", http_client=httpx.AsyncClient(transport=_transport(seen)))

    async def fetch() -> LiabilitiesProof:
        return await c.liabilities.get_proof_by_root("cd" * 32)  # type: ignore[no-any-return, misc]

    p = asyncio.run(fetch())
    assert isinstance(p, LiabilitiesProof)
    assert c.liabilities.verify(p, witness_policy=NONE, customer_id="liab-002", key=KEY)["ok"]


def test_a_witness_policy_is_required_without_a_client_and_an_uncosigned_head_fails() -> None:
    """Issue 40: the client-free checks need a witness policy; a policy of
    one witness fails the fixtures' heads, which no witness cosigned."""
    with pytest.raises(TypeError):
        verify_liabilities_proof(PROOF, customer_id="liab-002", key=KEY)
    receipt = (TESTDATA / "liabilities-receipt.json").read_text()
    with pytest.raises(TypeError):
        receipts.verify(receipt, key=KEY)
    r = verify_liabilities_proof(PROOF, witness_policy=ONE_WITNESS, customer_id="liab-002", key=KEY)
    assert failed(r) == ["witnesses"]
    assert r["checks"][-1]["name"] == "summary"
    rr = receipts.verify(receipt, witness_policy=ONE_WITNESS, key=KEY)
    assert failed(rr) == ["witnesses"]
    assert any(c["name"] == "policy.log" and c["ok"] for c in rr["checks"])
