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


class LiabilitiesTotals(TypedDict):
    total: str
    leafCount: int


class LiabilitiesStatement(TypedDict):
    """A liabilities statement's progress and, once built, what it states
    (``GET /api/v1/liabilities/{id}``; docs/liabilities.md §9)."""

    id: str
    environment: Literal["sandbox", "production"]
    period: str
    status: Literal["snapshot", "building", "queued", "published", "failed"]
    ledgersSnapshotted: int
    ledgersBuilt: int
    statementHash: NotRequired[str | None]
    supersedes: NotRequired[str | None]
    supersededBy: NotRequired[str | None]
    liabilities: NotRequired[LiabilitiesTotals | None]
    receivables: NotRequired[LiabilitiesTotals | None]
    leafIndex: NotRequired[int | None]
    treeSize: NotRequired[int | None]
    createdAt: str
    publishedAt: NotRequired[str | None]
    failure: NotRequired[str | None]


# A customer's liabilities proof (docs/liabilities.md §8). The verifier
# reads amounts from the answer's exact text (``LiabilitiesProof.raw``),
# never through these parsed values.


class LiabilitiesTree(TypedDict):
    root: str
    total: str
    leafCount: int


class LiabilitiesProofStatement(TypedDict):
    """The statement as logged and hashed (docs/liabilities.md §1)."""

    scheme: Literal["bvs-liabilities-v1"]
    tenantId: str
    environment: Literal["sandbox", "production"]
    period: str
    liabilities: LiabilitiesTree
    receivables: LiabilitiesTree
    supersedes: str | None


class PathStep(TypedDict):
    hash: str
    sum: float | int


class LiabilitiesLeafProof(TypedDict):
    leafIndex: int
    salt: str
    amount: float | int
    path: list[PathStep]


class LiabilitiesCustomer(TypedDict):
    customerId: str | None
    ledgerId: str
    balance: float | int


class LiabilitiesLog(TypedDict):
    hashScheme: str
    leafIndex: int
    inclusionProof: list[str]
    treeHead: str
    publicKey: str


class LiabilitiesProof(dict[str, Any]):
    """A customer's proof document (keys: ``scheme``, ``statement``
    (:class:`LiabilitiesProofStatement`), ``statementHash``, ``customer``
    (:class:`LiabilitiesCustomer`), ``liabilities`` and ``receivables``
    (:class:`LiabilitiesLeafProof`, ``receivables`` None unless the balance
    is negative), ``log`` (:class:`LiabilitiesLog`)), with ``raw``: the
    exact answer text it was read from, which is what is verified."""

    raw: str
