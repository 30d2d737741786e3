"""The Python SDK holds a receipt's signed tree head to a witness policy
(issue 40), against a real ``wrangler dev`` with three local witnesses (run
by tests/tests/sdk_witness.rs, which saves a witnessed receipt's answer): a
Client pins the log list's policy on first use and the receipt passes; its
cosignature lines stripped, it fails ``witnesses``, pinned or given;
without a Client a policy is required. Not a pytest module (it needs that
service). Prints "sdk ok"."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bvs_sdk import Client, receipts


def failed(report: object) -> list[str]:
    return [c["name"] for c in report["checks"] if not c["ok"]]  # type: ignore[index]


def main() -> None:
    base, key, policy = os.environ["BVS_BASE"], os.environ["BVS_LOG_KEY"], os.environ["BVS_POLICY"]
    text = Path(os.environ["BVS_RECEIPT_FILE"]).read_text()
    head = json.loads(text)["data"]["proof"]["treeHead"]
    body, sigs = head.split("\n\n", 1)
    lines = [line for line in sigs.split("\n") if line]
    assert len(lines) >= 3, head
    bare = f"{body}\n\n{lines[0]}\n"
    stripped = text.replace(json.dumps(head, ensure_ascii=False)[1:-1], json.dumps(bare, ensure_ascii=False)[1:-1])
    assert stripped != text
    assert json.loads(stripped)["data"]["proof"]["witnessed"] is True

    with Client(base_url=base, api_key=os.environ["BVS_API_KEY"]) as client:
        r = client.receipts.verify(text, key=key)
        assert r["ok"], failed(r)
        assert any(c["name"] == "policy.pinned" and c["ok"] for c in r["checks"])
        assert any(c["name"] == "witnesses" and c["ok"] for c in r["checks"])
        assert failed(client.receipts.verify(stripped, key=key)) == ["witnesses"]

    try:
        receipts.verify(text, key=key)
    except TypeError:
        pass
    else:
        raise AssertionError("verify without a Client and without a witness policy must raise TypeError")
    assert receipts.verify(text, key=key, witness_policy=policy)["ok"]
    assert failed(receipts.verify(stripped, key=key, witness_policy=policy)) == ["witnesses"]
    print("sdk ok")


if __name__ == "__main__":
    main()
