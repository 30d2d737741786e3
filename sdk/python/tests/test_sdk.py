"""The Python SDK against a real `wrangler dev` (run by tests/tests/quickstart/sdks.rs,
which starts the service and passes BVS_BASE, an Enterprise BVS_API_KEY and
the tenant's dashboard BVS_JWT)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from bvs_sdk import (
    AsyncClient,
    Client,
    ConflictError,
    ValidationError,
    WebhookVerificationError,
    webhooks,
)

BASE = os.environ["BVS_BASE"]
API_KEY = os.environ["BVS_API_KEY"]
JWT = os.environ["BVS_JWT"]
RUN = f"py{int(time.time() * 1000):x}"


def no_wait(_: float) -> None:
    pass


@pytest.fixture
def client() -> Client:
    c = Client(base_url=BASE, api_key=API_KEY)
    c._sleep = no_wait
    return c


def eventually(what: str, f: Callable[[], Any], seconds: float = 120) -> Any:
    until = time.time() + seconds
    while True:
        v = f()
        if v:
            return v
        if time.time() > until:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.3)


def dashboard(method: str, path: str, body: Any = None) -> dict[str, Any]:
    r = httpx.request(
        method, BASE + path, headers={"authorization": f"Bearer {JWT}"}, json=body, timeout=30
    )
    out: dict[str, Any] = r.json()
    return out


class _Flaky(httpx.BaseTransport):
    """Sends every request; the first POST's answer is then lost (a network
    error after the write), so the SDK retries it."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent: list[httpx.Request] = []
        self.dropped = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        response = self.inner.handle_request(request)
        if not self.dropped and request.method == "POST":
            self.dropped = True
            response.read()
            raise httpx.ReadError("connection reset", request=request)
        return response


def test_a_post_retried_through_a_transient_failure_records_one_delta(client: Client) -> None:
    customer = f"{RUN}_retry"
    flaky = _Flaky()
    c = Client(base_url=BASE, api_key=API_KEY, http_client=httpx.Client(transport=flaky))
    c._sleep = no_wait
    record = c.deltas.emit({"customerId": customer, "delta": 12.5, "reason": "retried"})
    assert record["status"] == "QUEUED"
    posts = [r for r in flaky.sent if r.method == "POST"]
    assert len(posts) == 2
    assert posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
    detail = eventually(
        "the delta to verify",
        lambda: (d := client.customers.get(customer))["totalDeltas"] == 1 and d["pendingDeltas"] == 0 and d,
    )
    assert detail["computedBalance"] == 12.5

    # The same key with another body: 409, typed, never retried.
    key = f"{RUN}-k"
    client.deltas.emit({"customerId": customer, "delta": 1, "reason": "one"}, idempotency_key=key)
    with pytest.raises(ConflictError) as e:
        client.deltas.emit({"customerId": customer, "delta": 2, "reason": "two"}, idempotency_key=key)
    assert e.value.code == "idempotency_key_reused"


def test_derive_pages_over_250_deltas_sync_and_async(client: Client) -> None:
    customer = f"{RUN}_pages"
    for start in range(0, 250, 100):
        items = [
            {"customerId": customer, "delta": i + 1, "reason": f"page {i}"} for i in range(start, min(250, start + 100))
        ]
        assert client.deltas.batch(items)["totalQueued"] == len(items)
    eventually("250 verified deltas", lambda: client.customers.get(customer)["totalDeltas"] == 250)
    seen = list(client.deltas.iterate(customer, page_size=100))
    assert [d["delta"] for d in seen] == list(range(1, 251))
    assert len({d["anchorId"] for d in seen}) == 250

    async def collect() -> list[Any]:
        async with AsyncClient(base_url=BASE, api_key=API_KEY) as ac:
            return [d async for d in ac.deltas.iterate(customer, page_size=64)]

    assert [d["delta"] for d in asyncio.run(collect())] == list(range(1, 251))


def test_a_validation_error_is_typed_and_names_the_field(client: Client) -> None:
    with pytest.raises(ValidationError) as e:
        client.deltas.emit({"customerId": "not a valid id!", "delta": 1, "reason": "x"})
    assert e.value.status == 400
    assert e.value.code == "validation_failed"
    assert e.value.field == "customerId"
    assert (e.value.request_id or "").startswith("req_")


class _Receiver:
    def __init__(self) -> None:
        got: list[tuple[dict[str, str], bytes]] = []
        self.got = got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["content-length"]))
                got.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"

    def close(self) -> None:
        self.server.shutdown()


def test_webhooks_verify_good_tampered_and_stale(client: Client) -> None:
    rx = _Receiver()
    try:
        created = dashboard("POST", "/dashboard/webhooks", {"url": rx.url, "events": ["delta.verified"], "description": "py"})
        hook_id, secret = created["data"]["id"], created["data"]["secret"]
        # Issue 40: the key is the endpoint's own, from its answer (and
        # webhooks.get with a dashboard token); no public route lists any.
        public_key = created["data"]["publicKey"]
        assert public_key.startswith("whpk_")
        assert Client(base_url=BASE, api_key=API_KEY, dashboard_token=JWT).webhooks.get(hook_id)["publicKey"] == public_key
        assert client.webhooks.keys()["keys"] == []
        sent = dashboard("POST", f"/dashboard/webhooks/{hook_id}/test", {"type": "delta.verified"})
        assert sent["data"]["success"] is True, sent
        headers, body = rx.got[-1]

        event = client.webhooks.verify(body, headers, secret=secret)
        assert event["event"] == "delta.verified"
        assert webhooks.verify(body, headers, public_key=public_key)["id"] == headers["webhook-id"]
        # The independent Standard Webhooks library agrees (v1).
        std = {k: headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
        assert Webhook(secret).verify(body, std)["id"] == event["id"]

        tampered = body.replace(b'"delta.verified"', b'"delta.verifieD"')
        for kw in ({"secret": secret}, {"public_key": public_key}):
            with pytest.raises(WebhookVerificationError) as e:
                webhooks.verify(tampered, headers, **kw)  # type: ignore[arg-type]
            assert e.value.reason == "bad_signature"
        # Another endpoint's key refuses it (a delivery forwarded from another receiver).
        other = dashboard("POST", "/dashboard/webhooks", {"url": rx.url, "events": ["test"], "description": "py other"})
        assert other["data"]["publicKey"] != public_key
        with pytest.raises(WebhookVerificationError) as e:
            webhooks.verify(body, headers, public_key=other["data"]["publicKey"])
        assert e.value.reason == "bad_signature"
        dashboard("DELETE", f"/dashboard/webhooks/{other['data']['id']}", None)
        with pytest.raises(Exception):
            Webhook(secret).verify(tampered, std)

        stale = int(headers["webhook-timestamp"]) + 301
        with pytest.raises(WebhookVerificationError) as e:
            webhooks.verify(body, headers, secret=secret, now=stale)
        assert e.value.reason == "stale"
        webhooks.verify(body, headers, secret=secret, now=stale, tolerance_seconds=600)

        # The webhook's deliveries come as the other lists do: a generator on
        # Client, an async iterator on AsyncClient, the test delivery among them.
        with_jwt = Client(base_url=BASE, api_key=API_KEY, dashboard_token=JWT)
        listed = with_jwt.webhooks.deliveries(hook_id)
        assert isinstance(listed, Iterator), type(listed)
        ids = [d["id"] for d in listed]
        assert headers["webhook-id"] in ids, ids

        async def listed_async() -> list[str]:
            async with AsyncClient(base_url=BASE, api_key=API_KEY, dashboard_token=JWT) as c:
                return [d["id"] async for d in c.webhooks.deliveries(hook_id)]

        assert asyncio.run(listed_async()) == ids
    finally:
        rx.close()


def test_a_receipt_verifies_and_a_tampered_one_is_refused(client: Client) -> None:
    customer = f"{RUN}_receipt"
    last: Any = None
    for delta in (100, -4.25):
        last = client.deltas.emit({"customerId": customer, "delta": delta, "reason": "receipt"})
    eventually("the deltas to verify", lambda: client.deltas.status(last["anchorId"])["status"] == "ANCHORED")
    cp = client.checkpoints.create({"customerId": customer})
    eventually(
        "the checkpoint to commit",
        lambda: any(
            c["checkpointId"] == cp["checkpointId"] and c["status"] == "COMMITTED"
            for c in client.checkpoints.iterate(customerId=customer)
        ),
    )
    receipt = client.receipts.get(customer, period=cp["period"])
    assert receipt["finalBalance"] == 95.75
    with urllib.request.urlopen(BASE + "/api/v1/logs") as r:  # noqa: S310 - loopback
        logs = json.load(r)["data"]["logs"]
    key = next(log for log in logs if log["name"] == receipt["log"]["name"])["verifierKey"]

    report = client.receipts.verify(receipt, key=key)
    assert report["ok"], [c for c in report["checks"] if not c["ok"]]
    forged = receipt.raw.replace('"finalBalance":95.75', '"finalBalance":96.75')
    assert forged != receipt.raw
    assert client.receipts.verify(forged, key=key)["ok"] is False
    other = next(log for log in logs if log["name"] != receipt["log"]["name"])["verifierKey"]
    assert client.receipts.verify(receipt, key=other)["ok"] is False
    with pytest.raises(TypeError):
        client.receipts.verify(receipt)
