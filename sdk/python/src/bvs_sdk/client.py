"""The client, sync (``Client``) and async (``AsyncClient``), on httpx.

Every POST carries an ``Idempotency-Key`` (the same on each retry, so a
retried POST never makes a second object); 429 (honouring Retry-After),
5xx, network errors and time-outs are retried with exponential backoff and
jitter (2 retries by default, as Stripe's SDKs do); 409 and the other 4xx
never are. An answer "still processing" (202 with ``data.status:
"processing"``) is retried too. Lists come page after page through
``iterate`` (a generator, or an async generator on ``AsyncClient``).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import quote

import httpx

from . import webhooks as _webhooks
from .errors import BvsError, ConnectionError, error_for
from .liabilities import verify_liabilities_proof as _verify_liabilities
from .models import (
    Checkpoint,
    CheckpointInput,
    CompareInput,
    DeltaInput,
    DeltaObject,
    Derivation,
    EmitRecord,
    FactInput,
    LiabilitiesProof,
    LiabilitiesStatement,
    Receipt,
    VerificationReport,
)
from .receipts import named_log_key as _named_log_key
from .receipts import text_of as _text_of
from .receipts import verify as _verify_receipt

SDK_VERSION = "0.1.0"
RETRY_AFTER_MAX_SECONDS = 60.0


def backoff_seconds(retry: int) -> float:
    """Before retry n (1-based): 0.5 s doubling, capped at 8 s, with jitter."""
    base = min(0.5 * 2 ** (retry - 1), 8.0)
    return base / 2 + random.random() * base / 2


@dataclass
class _Spec:
    method: str
    path: str
    body: Any = None
    query: dict[str, Any] = field(default_factory=dict)
    idempotency_key: str | None = None
    receipt: bool = False
    proof: bool = False


def _seg(v: str) -> str:
    return quote(v, safe="")


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _processing(status: int, body: Any) -> bool:
    data = body.get("data") if isinstance(body, dict) else None
    return (
        status == 202
        and isinstance(data, dict)
        and data.get("status") == "processing"
        and isinstance(data.get("idempotencyKey"), str)
    )


class _Base:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        dashboard_token: str | None = None,
        max_retries: int = 2,
        timeout: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.timeout = timeout
        self.headers = {"user-agent": f"bvs-sdk-python/{SDK_VERSION}", "accept": "application/json"}
        if api_key:
            self.headers["x-api-key"] = api_key
        if dashboard_token:
            self.headers["authorization"] = f"Bearer {dashboard_token}"
        # The log list's witness policies by log key, pinned on first use.
        self._policies: dict[str, tuple[str, str]] | None = None
        self.deltas = _Deltas(self)
        self.checkpoints = _Checkpoints(self)
        self.customers = _Customers(self)
        self.facts = _Facts(self)
        self.receipts = _Receipts(self)
        self.invitations = _Invitations(self)
        self.agreement = _Agreement(self)
        self.webhooks = _Webhooks(self)
        self.liabilities = _Liabilities(self)

    def _prepare(self, spec: _Spec) -> tuple[dict[str, str], bytes | None, dict[str, Any]]:
        headers = dict(self.headers)
        content = None
        if spec.method == "POST":
            headers["content-type"] = "application/json"
            headers["idempotency-key"] = spec.idempotency_key or str(uuid.uuid4())
            content = json.dumps(spec.body if spec.body is not None else {}).encode()
        query = {k: v for k, v in spec.query.items() if v is not None}
        return headers, content, query

    def _decide(self, response: httpx.Response, attempt: int, spec: _Spec) -> tuple[float | None, Any]:
        """(seconds to wait before retrying, None) or (None, the result)."""
        text = response.text
        body = _parse(text)
        request_id = response.headers.get("request-id")
        ra = response.headers.get("retry-after")
        retry_after = float(ra) if ra and ra.replace(".", "", 1).isdigit() else None
        retryable = response.status_code == 429 or response.status_code >= 500 or _processing(response.status_code, body)
        if retryable and attempt < self.max_retries:
            wait = min(retry_after, RETRY_AFTER_MAX_SECONDS) if retry_after is not None else backoff_seconds(attempt + 1)
            return wait, None
        if response.status_code >= 400:
            raise error_for(response.status_code, body, request_id, retry_after)
        if not isinstance(body, dict):
            raise BvsError(f"not JSON from {spec.method} {spec.path}", status=response.status_code, code="bad_answer")
        data = body.get("data")
        if spec.receipt and isinstance(data, dict):
            receipt = Receipt(data)
            receipt.raw = text
            return None, receipt
        if spec.proof and isinstance(data, dict):
            proof = LiabilitiesProof(data)
            proof.raw = text
            return None, proof
        return None, data

    def _no_answer(self, spec: _Spec, cause: Exception) -> ConnectionError:
        return ConnectionError(
            f"no answer from {spec.method} {spec.path}: {cause}", status=0, code="connection_error"
        )


class Client(_Base):
    """The synchronous client."""

    def __init__(self, *, http_client: httpx.Client | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self._http = http_client or httpx.Client()
        self._sleep: Callable[[float], None] = time.sleep

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, spec: _Spec) -> Any:
        headers, content, query = self._prepare(spec)
        url = f"{self.base_url}/{spec.path}"
        for attempt in range(self.max_retries + 1):
            try:
                response = self._http.request(
                    spec.method, url, headers=headers, content=content, params=query, timeout=self.timeout
                )
            except httpx.TransportError as e:
                if attempt < self.max_retries:
                    self._sleep(backoff_seconds(attempt + 1))
                    continue
                raise self._no_answer(spec, e) from e
            wait, result = self._decide(response, attempt, spec)
            if wait is None:
                return result
            self._sleep(wait)
        raise AssertionError("unreachable")

    def _pages(self, page: Callable[[int, int], _Spec], items: str, limit: int) -> Iterator[Any]:
        offset = 0
        while True:
            data = self._send(page(offset, limit))
            got = data[items]
            yield from got
            offset += len(got)
            if not got or offset >= data["pagination"]["total"]:
                return

    def _each(self, spec: _Spec) -> Iterator[Any]:
        yield from self._send(spec)

    def compare(self, body: CompareInput, *, idempotency_key: str | None = None) -> dict[str, Any]:
        return self._send(_Spec("POST", "api/v1/balance/compare", body, idempotency_key=idempotency_key))  # type: ignore[no-any-return]


class AsyncClient(_Base):
    """The asynchronous client: the same surface, awaited."""

    def __init__(self, *, http_client: httpx.AsyncClient | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self._http = http_client or httpx.AsyncClient()
        self._sleep: Callable[[float], Any] = asyncio.sleep

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, spec: _Spec) -> Any:
        headers, content, query = self._prepare(spec)
        url = f"{self.base_url}/{spec.path}"
        for attempt in range(self.max_retries + 1):
            try:
                response = await self._http.request(
                    spec.method, url, headers=headers, content=content, params=query, timeout=self.timeout
                )
            except httpx.TransportError as e:
                if attempt < self.max_retries:
                    await self._sleep(backoff_seconds(attempt + 1))
                    continue
                raise self._no_answer(spec, e) from e
            wait, result = self._decide(response, attempt, spec)
            if wait is None:
                return result
            await self._sleep(wait)
        raise AssertionError("unreachable")

    async def _pages(self, page: Callable[[int, int], _Spec], items: str, limit: int) -> AsyncIterator[Any]:
        offset = 0
        while True:
            data = await self._send(page(offset, limit))
            got = data[items]
            for item in got:
                yield item
            offset += len(got)
            if not got or offset >= data["pagination"]["total"]:
                return

    async def _each(self, spec: _Spec) -> AsyncIterator[Any]:
        for item in await self._send(spec):
            yield item

    async def compare(self, body: CompareInput, *, idempotency_key: str | None = None) -> dict[str, Any]:
        return await self._send(_Spec("POST", "api/v1/balance/compare", body, idempotency_key=idempotency_key))  # type: ignore[no-any-return]


# Resources: each method builds a request and hands it to the client's
# `_send` (a value on Client, an awaitable on AsyncClient), so both clients
# share one definition of the API.


class _Resource:
    def __init__(self, client: _Base) -> None:
        self._c: Any = client


def _with_policy(
    c: Any,
    doc: Any,
    key: str | None,
    witness_policy: str | None,
    run: Callable[[str], VerificationReport],
) -> VerificationReport:
    """Runs ``run`` with the caller's witness policy, or with the one the
    client pinned from GET /api/v1/logs on first use for the document's log
    (by the trusted key, else the one the document names), adding the
    check ``policy.pinned``. An AsyncClient does not fetch here: give it
    ``witness_policy=``."""
    if witness_policy is not None:
        return run(witness_policy)
    if isinstance(c, AsyncClient):
        raise TypeError(
            "an AsyncClient does not pin a witness policy inside verify(): give witness_policy= "
            "(the log list's witnessPolicyText from GET /api/v1/logs)"
        )
    if c._policies is None:
        logs = c._send(_Spec("GET", "api/v1/logs"))["logs"]
        c._policies = {str(entry["verifierKey"]): (str(entry["name"]), str(entry["witnessPolicyText"])) for entry in logs}
    log_key = key if key is not None else _named_log_key(_text_of(doc))
    pinned = c._policies.get(log_key or "")
    if pinned is None:
        return {
            "ok": False,
            "checks": [
                {
                    "name": "policy.pinned",
                    "ok": False,
                    "detail": f"the log list (GET /api/v1/logs) has no log with key {log_key!r}: give witness_policy=",
                }
            ],
        }
    name, text = pinned
    r = run(text)
    note = {
        "name": "policy.pinned",
        "ok": True,
        "detail": f'the witness policy of log "{name}" pinned on first use from GET /api/v1/logs '
        "(witnessPolicyText); give witness_policy= to hold documents to one you chose",
    }
    return {"ok": bool(r["ok"]), "checks": [note, *r["checks"]]}  # type: ignore[typeddict-item]


class _Deltas(_Resource):
    def emit(self, delta: DeltaInput, *, idempotency_key: str | None = None) -> EmitRecord:
        """Records a delta (QUEUED); safe to retry."""
        return self._c._send(_Spec("POST", "api/v1/balance/delta", delta, idempotency_key=idempotency_key))  # type: ignore[no-any-return]

    def batch(self, deltas: list[DeltaInput], *, idempotency_key: str | None = None) -> dict[str, Any]:
        return self._c._send(  # type: ignore[no-any-return]
            _Spec("POST", "api/v1/balance/delta/batch", {"deltas": deltas}, idempotency_key=idempotency_key)
        )

    def status(self, anchor_id: str) -> dict[str, Any]:
        return self._c._send(_Spec("GET", f"api/v1/balance/delta/{_seg(anchor_id)}"))  # type: ignore[no-any-return]

    def derive(self, customer_id: str, **query: Any) -> Derivation:
        """One page: startingBalance, startingCheckpoint, startingCheckpointType, limit, offset;
        asset (CODE/p), asOf and asOfBasis (the answer adds asOf: check it with
        bvs_sdk.verify_as_of)."""
        return self._c._send(_Spec("GET", f"api/v1/balance/derive/{_seg(customer_id)}", query=query))  # type: ignore[no-any-return]

    def iterate(self, customer_id: str, *, page_size: int = 1000, **query: Any) -> Iterator[DeltaObject]:
        """Every verified delta of the derivation, page after page."""
        path = f"api/v1/balance/derive/{_seg(customer_id)}"
        return self._c._pages(  # type: ignore[no-any-return]
            lambda off, lim: _Spec("GET", path, query={**query, "offset": off, "limit": lim}), "deltas", page_size
        )


class _Checkpoints(_Resource):
    def create(self, body: CheckpointInput | None = None, *, idempotency_key: str | None = None) -> Checkpoint:
        return self._c._send(  # type: ignore[no-any-return]
            _Spec("POST", "api/v1/balance/checkpoint", body or {}, idempotency_key=idempotency_key)
        )

    def list(self, **query: Any) -> dict[str, Any]:
        return self._c._send(_Spec("GET", "api/v1/balance/checkpoints", query=query))  # type: ignore[no-any-return]

    def iterate(self, *, page_size: int = 100, **query: Any) -> Iterator[Checkpoint]:
        return self._c._pages(  # type: ignore[no-any-return]
            lambda off, lim: _Spec("GET", "api/v1/balance/checkpoints", query={**query, "offset": off, "limit": lim}),
            "checkpoints",
            page_size,
        )


class _Customers(_Resource):
    def list(self, **query: Any) -> dict[str, Any]:
        return self._c._send(_Spec("GET", "api/v1/balance/customers", query=query))  # type: ignore[no-any-return]

    def get(self, customer_id: str) -> dict[str, Any]:
        return self._c._send(_Spec("GET", f"api/v1/balance/customers/{_seg(customer_id)}"))  # type: ignore[no-any-return]

    def iterate(self, *, page_size: int = 100) -> Iterator[dict[str, Any]]:
        return self._c._pages(  # type: ignore[no-any-return]
            lambda off, lim: _Spec("GET", "api/v1/balance/customers", query={"offset": off, "limit": lim}),
            "customers",
            page_size,
        )


class _Facts(_Resource):
    def create(self, body: FactInput, *, idempotency_key: str | None = None) -> dict[str, Any]:
        return self._c._send(_Spec("POST", "api/v1/facts", body, idempotency_key=idempotency_key))  # type: ignore[no-any-return]

    def get(self, content_hash: str) -> dict[str, Any]:
        return self._c._send(_Spec("GET", f"api/v1/facts/{_seg(content_hash)}"))  # type: ignore[no-any-return]

    def verify(self, content_hash: str) -> dict[str, Any]:
        return self._c._send(_Spec("GET", f"api/v1/facts/{_seg(content_hash)}/verify"))  # type: ignore[no-any-return]


class _Receipts(_Resource):
    def get(self, customer_id: str, *, period: str | None = None) -> Receipt:
        """The receipt (its exact text kept in ``.raw`` for verify())."""
        return self._c._send(  # type: ignore[no-any-return]
            _Spec("GET", f"api/v1/balance/receipt/{_seg(customer_id)}", query={"period": period}, receipt=True)
        )

    def verify(
        self,
        receipt: Receipt | str | dict[str, Any],
        *,
        key: str | None = None,
        policy: str | None = None,
        liabilities: str | dict[str, Any] | None = None,
        witness_policy: str | None = None,
    ) -> VerificationReport:
        """Checks a receipt with the service's own verifier (``receipts.verify``);
        without ``witness_policy``, the log list's policy for the receipt's
        log is pinned on first use (the check ``policy.pinned`` says so)."""
        return _with_policy(
            self._c,
            receipt,
            key,
            witness_policy,
            lambda wp: _verify_receipt(receipt, key=key, policy=policy, liabilities=liabilities, witness_policy=wp),
        )


class _Invitations(_Resource):
    def create(self, customer_id: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        return self._c._send(  # type: ignore[no-any-return]
            _Spec("POST", f"api/v1/balance/customers/{_seg(customer_id)}/invitations", {}, idempotency_key=idempotency_key)
        )


class _Agreement(_Resource):
    def submit_statement(self, statement: str, *, idempotency_key: str | None = None) -> dict[str, Any]:
        return self._c._send(  # type: ignore[no-any-return]
            _Spec("POST", "api/v1/agreement/statements", {"statement": statement}, idempotency_key=idempotency_key)
        )


class _Liabilities(_Resource):
    """Liabilities statements and a customer's proof (docs/liabilities.md §9, §10)."""

    def create_statement(
        self, *, environment: str, period: str, idempotency_key: str | None = None
    ) -> LiabilitiesStatement:
        """Asks for a statement of a closed period (202: being built)."""
        body = {"environment": environment, "period": period}
        return self._c._send(  # type: ignore[no-any-return]
            _Spec("POST", "api/v1/liabilities", body, idempotency_key=idempotency_key)
        )

    def list_statements(self, *, period: str | None = None) -> Any:
        """A period's statements, newest first, as ``{"statements": [...]}``."""
        return self._c._send(_Spec("GET", "api/v1/liabilities", query={"period": period}))

    def get_statement(self, statement_id: str) -> LiabilitiesStatement:
        return self._c._send(_Spec("GET", f"api/v1/liabilities/{_seg(statement_id)}"))  # type: ignore[no-any-return]

    def get_proof(self, customer_id: str, *, period: str) -> LiabilitiesProof:
        """A customer's proof for the period's latest published statement (the
        vendor's route); its exact text is kept in ``.raw`` for verify()."""
        path = f"api/v1/balance/customers/{_seg(customer_id)}/liabilities-proof"
        return self._c._send(_Spec("GET", path, query={"period": period}, proof=True))  # type: ignore[no-any-return]

    def get_proof_by_root(self, merkle_root: str) -> LiabilitiesProof:
        """The customer's own proof by its checkpoint's merkleRoot (its period
        receipt's ``itemsRoot``): public, no API key needed."""
        path = f"api/v1/agreement/liabilities-proof/{_seg(merkle_root)}"
        return self._c._send(_Spec("GET", path, proof=True))  # type: ignore[no-any-return]

    def verify(
        self,
        proof: LiabilitiesProof | str | dict[str, Any],
        *,
        customer_id: str | None = None,
        ledger_id: str | None = None,
        key: str | None = None,
        policy: str | None = None,
        balance: str | int | Decimal | None = None,
        witness_policy: str | None = None,
    ) -> VerificationReport:
        """Checks a proof with the service's own verifier, for the customer
        checking it (see ``bvs_sdk.verify_liabilities_proof``); without
        ``witness_policy``, as ``receipts.verify``."""
        return _with_policy(
            self._c,
            proof,
            key,
            witness_policy,
            lambda wp: _verify_liabilities(
                proof,
                customer_id=customer_id,
                ledger_id=ledger_id,
                key=key,
                policy=policy,
                balance=balance,
                witness_policy=wp,
            ),
        )


class _Webhooks(_Resource):
    verify = staticmethod(_webhooks.verify)

    def keys(self) -> Any:
        """Deprecated, always ``{"keys": [], ...}`` (issue 40): each webhook signs
        ``v1a,`` with a key of its own; pin its ``publicKey`` from ``get(webhook_id)``."""
        return self._c._send(_Spec("GET", "api/v1/webhooks/keys"))

    def get(self, webhook_id: str) -> Any:
        """A webhook with its own ``publicKey``, the key its ``v1a,`` signatures
        verify with (needs dashboard_token)."""
        return self._c._send(_Spec("GET", f"dashboard/webhooks/{_seg(webhook_id)}"))

    def deliveries(self, webhook_id: str) -> Iterator[dict[str, Any]]:
        """A webhook's latest deliveries with their attempts (needs dashboard_token):
        a generator on Client, an async iterator on AsyncClient, as the other lists."""
        return self._c._each(_Spec("GET", f"dashboard/webhooks/{_seg(webhook_id)}/deliveries"))  # type: ignore[no-any-return]
