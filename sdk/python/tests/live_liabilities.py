"""A customer's liabilities proof through the Python SDK against a real
``wrangler dev`` with a published statement (run by tests/tests/liabilities.rs,
which makes the statement and passes what the customer knows): the vendor's
route and the public one by the checkpoint's merkleRoot each give a proof
that verifies with the pinned log key and the customer's balance; a changed
sibling sum fails ``liabilities.path``; the period receipt's own proof is
checked and tied to it. Not a pytest module (it needs that service). Prints
"sdk ok"."""

from __future__ import annotations

import os
import re

from bvs_sdk import Client


def failed(report: object) -> list[str]:
    return [c["name"] for c in report["checks"] if not c["ok"]]  # type: ignore[index]


def main() -> None:
    base, key, period = os.environ["BVS_BASE"], os.environ["BVS_LOG_KEY"], os.environ["BVS_PERIOD"]
    customer, balance = os.environ["BVS_CUSTOMER"], os.environ["BVS_BALANCE"]
    with Client(base_url=base, api_key=os.environ["BVS_API_KEY"]) as vendor:
        proof = vendor.liabilities.get_proof(customer, period=period)
        assert proof["customer"]["customerId"] == customer
        r = vendor.liabilities.verify(proof, customer_id=customer, key=key, balance=balance)
        assert r["ok"], r["checks"]
        # The client pinned the log list's witness policy on first use (issue 40).
        assert any(c["name"] == "policy.pinned" and c["ok"] for c in r["checks"]), r["checks"]
        print(r["checks"][-1]["detail"])

        with Client(base_url=base) as anyone:
            mine = anyone.liabilities.get_proof_by_root(os.environ["BVS_ROOT"])
        # The public route does not name the customer (issue 40); its
        # customer checks it by its own customerId, another is refused.
        assert mine["customer"]["customerId"] is None
        receipt_customer = os.environ["BVS_RECEIPT_CUSTOMER"]
        assert vendor.liabilities.verify(mine, customer_id=receipt_customer, key=key)["ok"]
        stranger = f"{customer}-other" if customer == receipt_customer else customer
        assert "customer.ledgerId" in failed(vendor.liabilities.verify(mine, customer_id=stranger, key=key))

        tampered = re.sub(r'"sum":[0-9.]+', '"sum":123456', proof.raw, count=1)
        assert tampered != proof.raw
        assert "liabilities.path" in failed(vendor.liabilities.verify(tampered, customer_id=customer, key=key, balance=balance))

        receipt = vendor.receipts.get(receipt_customer, period=period)
        rr = vendor.receipts.verify(receipt, key=key)
        assert rr["ok"], failed(rr)
        assert any(c["name"] == "liabilities.receipt" and c["ok"] for c in rr["checks"])
    print("sdk ok")


if __name__ == "__main__":
    main()
