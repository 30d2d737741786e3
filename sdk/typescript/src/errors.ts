// Errors as typed objects: every answer of the service that is not a
// success becomes a BvsError (or a subclass chosen by status), carrying the
// envelope's stable `code`, the invalid `field` (or `errors` when several
// are), and the `requestId` to quote to support (docs/errors.md).

export interface FieldProblem {
  field: string;
  reason: string;
}

/** The service's error envelope (docs/errors.md). */
export interface ErrorBody {
  statusCode?: number;
  error?: string;
  message?: string;
  code?: string;
  field?: string;
  errors?: FieldProblem[];
  requestId?: string;
}

export class BvsError extends Error {
  /** HTTP status; 0 when no answer came back (ConnectionError). */
  readonly status: number;
  /** The stable, machine-readable code (`validation_failed`, `rate_limited`, ...). */
  readonly code: string;
  /** The one invalid field of a validation failure. */
  readonly field: string | undefined;
  /** Every invalid field, when several are. */
  readonly errors: FieldProblem[];
  /** The answer's Request-Id: quote it to support. */
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait (429). */
  readonly retryAfter: number | undefined;
  readonly body: ErrorBody | undefined;

  constructor(
    message: string,
    init: {
      status: number;
      code: string;
      body?: ErrorBody;
      requestId?: string;
      retryAfter?: number;
      cause?: unknown;
    },
  ) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.body = init.body;
    this.field = init.body?.field ?? init.body?.errors?.[0]?.field;
    this.errors = init.body?.errors ?? (init.body?.field ? [{ field: init.body.field, reason: init.body.message ?? "" }] : []);
    this.requestId = init.body?.requestId ?? init.requestId;
    this.retryAfter = init.retryAfter;
  }
}

/** 400: a field is missing or invalid; `field` names it. */
export class ValidationError extends BvsError {}
/** 401: the API key is missing, malformed, disabled or deleted. */
export class AuthenticationError extends BvsError {}
/** 402: the plan's quota or storage is spent. */
export class PaymentRequiredError extends BvsError {}
/** 403: not allowed (environment not provisioned, e-mail not verified, ...). */
export class PermissionError extends BvsError {}
/** 404: no such record (or another tenant's). */
export class NotFoundError extends BvsError {}
/** 409: an Idempotency-Key reused with another body, or a state conflict. Never retried. */
export class ConflictError extends BvsError {}
/** 410: an invitation that is unknown, used or expired. */
export class GoneError extends BvsError {}
/** 413: the body is larger than the route accepts. */
export class PayloadTooLargeError extends BvsError {}
/** 422: well-formed but semantically invalid. */
export class UnprocessableError extends BvsError {}
/** 429: rate limited, after the SDK's own retries. */
export class RateLimitError extends BvsError {}
/** 5xx: the service failed, after the SDK's own retries. */
export class ServerError extends BvsError {}
/** No answer: a network error or a time-out, after the SDK's own retries. */
export class ConnectionError extends BvsError {}

const BY_STATUS: Record<number, typeof BvsError> = {
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
};

/** The typed error for an answer with this status and body. */
export function errorFor(
  status: number,
  body: ErrorBody | undefined,
  requestId: string | undefined,
  retryAfter: number | undefined,
): BvsError {
  const Kind = BY_STATUS[status] ?? (status >= 500 ? ServerError : BvsError);
  const message = body?.message ?? `HTTP ${status}`;
  return new Kind(message, {
    status,
    code: body?.code ?? (status >= 500 ? "internal_error" : "http_" + status),
    body,
    requestId,
    retryAfter,
  });
}

/** A webhook delivery that fails verification. */
export class WebhookVerificationError extends Error {
  /** `missing_header`, `stale`, `bad_timestamp` or `bad_signature`. */
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}
