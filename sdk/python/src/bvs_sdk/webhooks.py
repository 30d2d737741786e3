"""Standard Webhooks verification (docs/webhooks.md).

Signed content ``{webhook-id}.{webhook-timestamp}.{body}``; ``v1,`` is
HMAC-SHA256 keyed with the base64 decoding of the secret after ``whsec_``
(checked with the standard library), ``v1a,`` Ed25519 with the endpoint's
own ``whpk_`` key, its ``publicKey`` in the dashboard answers (issue 40;
checked by the service's verifier
module: Python's standard library has no Ed25519). A delivery passes when
one of its signatures verifies with one of the given secrets or keys and
its timestamp is within the tolerance (300 s by default).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import WebhookVerificationError

DEFAULT_TOLERANCE_SECONDS = 300


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def _listed(v: str | Iterable[str] | None) -> list[str]:
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


def verify(
    payload: bytes | str,
    headers: Mapping[str, str],
    *,
    secret: str | Iterable[str] | None = None,
    public_key: str | Iterable[str] | None = None,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: int | None = None,
) -> dict[str, Any]:
    """Verifies a delivery and returns its parsed body. ``payload`` is the
    raw body exactly as received, never a re-serialized object.

    Raises WebhookVerificationError.
    """
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signature = _header(headers, "webhook-signature")
    if not msg_id or not timestamp or not signature:
        raise WebhookVerificationError(
            "missing_header", "webhook-id, webhook-timestamp and webhook-signature are required"
        )
    if not timestamp.isdigit():
        raise WebhookVerificationError("bad_timestamp", "webhook-timestamp is not unix seconds")
    current = int(time.time()) if now is None else now
    if abs(current - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError("stale", f"webhook-timestamp is more than {tolerance_seconds} s from now")
    secrets = _listed(secret)
    keys = _listed(public_key)
    if not secrets and not keys:
        raise TypeError("give a secret (v1) or a public_key (v1a) to verify with")
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    content = f"{msg_id}.{timestamp}.".encode() + body
    v1: list[bytes] = []
    v1a: list[bytes] = []
    for part in signature.split(" "):
        version, _, b64 = part.partition(",")
        try:
            sig = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            continue
        if version == "v1":
            v1.append(sig)
        elif version == "v1a":
            v1a.append(sig)
    ok = False
    for s in secrets:
        if not s.startswith("whsec_"):
            raise TypeError("a webhook secret starts with whsec_")
        mac = hmac.new(base64.b64decode(s[len("whsec_") :]), content, hashlib.sha256).digest()
        ok = ok or any(hmac.compare_digest(mac, sig) for sig in v1)
    if keys and v1a and not ok:
        from ._verifier import verifier

        for k in keys:
            if not k.startswith("whpk_"):
                raise TypeError("a webhook public key starts with whpk_")
            raw = base64.b64decode(k[len("whpk_") :])
            ok = ok or any(verifier().verify_ed25519(raw, content, sig) for sig in v1a)
    if not ok:
        raise WebhookVerificationError(
            "bad_signature", "no signature of the delivery verifies with the given secret or key"
        )
    event: dict[str, Any] = json.loads(body)
    return event
