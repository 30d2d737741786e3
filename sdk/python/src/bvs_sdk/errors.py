"""Errors as typed objects carrying ``code``, ``field`` and ``request_id``
(docs/errors.md)."""

from __future__ import annotations

from typing import Any


class BvsError(Exception):
    """An answer that is not a success, after the SDK's own retries."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str,
        body: dict[str, Any] | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.body = body or {}
        errors = self.body.get("errors") or []
        self.field: str | None = self.body.get("field") or (errors[0]["field"] if errors else None)
        self.errors: list[dict[str, str]] = errors or (
            [{"field": self.field, "reason": message}] if self.field else []
        )
        self.request_id: str | None = self.body.get("requestId") or request_id
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, field={self.field!r}, request_id={self.request_id!r})"


class ValidationError(BvsError):
    """400: a field is missing or invalid; ``field`` names it."""


class AuthenticationError(BvsError):
    """401: the API key is missing, malformed, disabled or deleted."""


class PaymentRequiredError(BvsError):
    """402: the plan's quota or storage is spent."""


class PermissionError(BvsError):  # noqa: A001 - the service's name for 403
    """403: not allowed."""


class NotFoundError(BvsError):
    """404: no such record."""


class ConflictError(BvsError):
    """409: an Idempotency-Key reused with another body, or a state conflict. Never retried."""


class GoneError(BvsError):
    """410: an invitation that is unknown, used or expired."""


class PayloadTooLargeError(BvsError):
    """413."""


class UnprocessableError(BvsError):
    """422: well-formed but semantically invalid."""


class RateLimitError(BvsError):
    """429, after the SDK's own retries."""


class ServerError(BvsError):
    """5xx, after the SDK's own retries."""


class ConnectionError(BvsError):  # noqa: A001
    """No answer (network error or time-out), after the SDK's own retries."""


class WebhookVerificationError(Exception):
    """A delivery that fails verification; ``reason`` is ``missing_header``,
    ``bad_timestamp``, ``stale`` or ``bad_signature``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


_BY_STATUS: dict[int, type[BvsError]] = {
    400: ValidationError,
    401: AuthenticationError,
    402: PaymentRequiredError,
    403: PermissionError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    413: PayloadTooLargeError,
    422: UnprocessableError,
    429: RateLimitError,
}


def error_for(
    status: int, body: dict[str, Any] | None, request_id: str | None, retry_after: float | None
) -> BvsError:
    kind = _BY_STATUS.get(status) or (ServerError if status >= 500 else BvsError)
    body = body if isinstance(body, dict) else None
    message = (body or {}).get("message") or f"HTTP {status}"
    code = (body or {}).get("code") or ("internal_error" if status >= 500 else f"http_{status}")
    return kind(message, status=status, code=code, body=body, request_id=request_id, retry_after=retry_after)
