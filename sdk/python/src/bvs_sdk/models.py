"""Typed shapes of the requests and answers (worker/src/openapi.json is the
reference; field names are the API's own). Answers are plain dicts typed
with these TypedDicts; amounts are JSON numbers as the API writes them
(a receipt keeps its exact text for verification: ``Receipt.raw``)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict



class DeltaInput(TypedDict):
    customerId: str
    delta: float | int | str
    reason: str
    referenceId: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]


class EmitRecord(TypedDict):
    anchorId: str
    customerId: str
    delta: float
    status: str
    receiptId: str
    itemsRoot: str
    itemHashes: list[str]
    estimatedVerifiedDeltas: int
    receivedAt: str
    message: str


class DeltaObject(TypedDict):
    anchorId: str
    itemHash: str
    itemsRoot: str
    receiptId: str
    delta: float
    reason: str | None
    referenceId: str | None
    window: str
    declaredTimestamp: str
    blockTimestamp: str
    dataPurged: bool
    verified: bool


class Pagination(TypedDict):
    total: int
    limit: int
    offset: int


class Derivation(TypedDict):
    customerId: str
    startingBalance: float
    computedBalance: float
    deltasCount: int
    latestCheckpoint: str | None
    deltas: list[DeltaObject]
    pagination: Pagination


class CheckpointInput(TypedDict, total=False):
    customerId: str
    period: str


class Checkpoint(TypedDict):
    checkpointId: str
    period: str
    merkleRoot: str
    deltaCount: int
    customerId: str
    status: Literal["QUEUED", "COMMITTED", "FAILED"]


class Customer(TypedDict):
    customerId: str
    ledgerId: str
    totalDeltas: int
    computedBalance: float


class FactInput(TypedDict):
    content: str
    metadata: NotRequired[dict[str, Any]]


class CompareInput(TypedDict):
    yourBalance: float | int
    theirBalance: float | int
    startingBalance: NotRequired[float | int]
    customerId: NotRequired[str]
    deltas: NotRequired[list[dict[str, Any]]]
    deltasAfter: NotRequired[str]


class Check(TypedDict):
    name: str
    ok: bool
    detail: str


class VerificationReport(TypedDict):
    ok: bool
    checks: list[Check]


class Receipt(dict[str, Any]):
    """A receipt's ``data``, with ``raw``: the exact answer text it was read
    from (verification reads amounts from the text, never through floats)."""

    raw: str
