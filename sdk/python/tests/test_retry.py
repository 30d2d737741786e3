"""Retries without a service: 429 waits Retry-After, 5xx and network errors
back off, 400 and 409 are not retried, and every attempt of one POST
carries the same Idempotency-Key."""

from __future__ import annotations

import json

import httpx
import pytest

from bvs_sdk import Client, RateLimitError, ServerError, ValidationError


def scripted(answers: list[object]) -> tuple[Client, list[str], list[float]]:
    keys: list[str] = []
    waits: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers.get("idempotency-key", ""))
        nxt = answers.pop(0)
        if isinstance(nxt, Exception):
            raise nxt
        status, headers = nxt if isinstance(nxt, tuple) else (nxt, {})
        body = {"success": True, "data": {"ok": True}} if status < 300 else {"statusCode": status, "code": "x", "message": "m"}
        return httpx.Response(status, headers=headers, content=json.dumps(body).encode())

    c = Client(base_url="http://x.invalid", api_key="k", max_retries=3, http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    c._sleep = waits.append
    return c, keys, waits


def test_429_waits_retry_after_then_5xx_and_network_errors_back_off_with_one_key() -> None:
    c, keys, waits = scripted([(429, {"retry-after": "2"}), 503, httpx.ConnectError("reset"), 202])
    assert c.deltas.emit({"customerId": "c", "delta": 1, "reason": "r"}) == {"ok": True}
    assert len(keys) == 4 and len(set(keys)) == 1
    assert waits[0] == 2.0
    assert 0 < waits[1] <= 1.0 and 0 < waits[2] <= 2.0


def test_after_the_retries_the_typed_error_and_400_is_not_retried() -> None:
    c, keys, _ = scripted([500, 500, 500, 500])
    with pytest.raises(ServerError):
        c.checkpoints.create()
    assert len(keys) == 4
    c, keys, _ = scripted([429, 429, 429, 429])
    with pytest.raises(RateLimitError):
        c.facts.create({"content": "x"})
    c, keys, _ = scripted([400])
    with pytest.raises(ValidationError):
        c.facts.create({"content": "x"})
    assert len(keys) == 1
