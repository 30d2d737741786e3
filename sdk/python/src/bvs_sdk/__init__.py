"""Python SDK of the balance verification service (sdk/README.md)."""

from . import errors, liabilities, receipts, webhooks
from .client import SDK_VERSION, AsyncClient, Client, backoff_seconds
from .errors import (
    AuthenticationError,
    BvsError,
    ConflictError,
    ConnectionError,
    GoneError,
    NotFoundError,
    PaymentRequiredError,
    PermissionError,
    RateLimitError,
    ServerError,
    UnprocessableError,
    ValidationError,
    WebhookVerificationError,
)
from .liabilities import verify_liabilities_proof
from .receipts import verify_as_of
from .models import LiabilitiesProof, LiabilitiesStatement, Receipt, VerificationReport

__version__ = SDK_VERSION
__all__ = [
    "AsyncClient",
    "AuthenticationError",
    "BvsError",
    "Client",
    "ConflictError",
    "ConnectionError",
    "GoneError",
    "LiabilitiesProof",
    "LiabilitiesStatement",
    "NotFoundError",
    "PaymentRequiredError",
    "PermissionError",
    "RateLimitError",
    "Receipt",
    "SDK_VERSION",
    "ServerError",
    "UnprocessableError",
    "ValidationError",
    "VerificationReport",
    "WebhookVerificationError",
    "backoff_seconds",
    "errors",
    "liabilities",
    "receipts",
    "verify_as_of",
    "verify_liabilities_proof",
    "webhooks",
]
