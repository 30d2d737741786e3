//! The one error type of the HTTP boundary, mapped to a status in one place.

use serde::Serialize;

/// A field that failed validation, ready for a 400 message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    pub field: String,
    pub reason: String,
}

impl FieldProblem {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// The stable, machine-readable `code` of an error body. Every named case of
/// the spec's Errors table has one, and so has each case of our own. Adding a
/// case: add a variant here, its `as_str` and `status`, and a row to
/// docs/errors.md; then raise it with `ApiError::coded(ErrorCode::X, message)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    // The spec's named cases.
    InvalidApiKey,
    ApiKeyDisabled,
    JwtExpired,
    PlanLimitExceeded,
    ValidationFailed,
    RecordNotFound,
    EnvironmentNotProvisioned,
    ProductionRequiresPlan,
    RateLimited,
    FactNotFound,
    // Our own.
    StorageLimitReached,
    ApiKeyDeleted,
    InvalidJwt,
    JwtRevoked,
    AuthenticationRequired,
    InvalidCredentials,
    EmailNotVerified,
    MalformedJson,
    BadRequest,
    Forbidden,
    RouteNotFound,
    MethodNotAllowed,
    IdempotencyKeyReused,
    Conflict,
    PayloadTooLarge,
    Unprocessable,
    InternalError,
    InvitationInvalid,
    StatementRejected,
    StatementLimitReached,
    KeyAlreadyRegistered,
    VerificationBacklog,
    PeriodNotClosed,
    LiabilitiesPurged,
}

impl ErrorCode {
    /// Every code, for the documentation check.
    #[cfg(test)]
    pub const ALL: &'static [ErrorCode] = &[
        Self::InvalidApiKey,
        Self::ApiKeyDisabled,
        Self::JwtExpired,
        Self::PlanLimitExceeded,
        Self::ValidationFailed,
        Self::RecordNotFound,
        Self::EnvironmentNotProvisioned,
        Self::ProductionRequiresPlan,
        Self::RateLimited,
        Self::FactNotFound,
        Self::StorageLimitReached,
        Self::ApiKeyDeleted,
        Self::InvalidJwt,
        Self::JwtRevoked,
        Self::AuthenticationRequired,
        Self::InvalidCredentials,
        Self::EmailNotVerified,
        Self::MalformedJson,
        Self::BadRequest,
        Self::Forbidden,
        Self::RouteNotFound,
        Self::MethodNotAllowed,
        Self::IdempotencyKeyReused,
        Self::Conflict,
        Self::PayloadTooLarge,
        Self::Unprocessable,
        Self::InternalError,
        Self::InvitationInvalid,
        Self::StatementRejected,
        Self::StatementLimitReached,
        Self::KeyAlreadyRegistered,
        Self::VerificationBacklog,
        Self::PeriodNotClosed,
        Self::LiabilitiesPurged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidApiKey => "invalid_api_key",
            Self::ApiKeyDisabled => "api_key_disabled",
            Self::JwtExpired => "jwt_expired",
            Self::PlanLimitExceeded => "plan_limit_exceeded",
            Self::ValidationFailed => "validation_failed",
            Self::RecordNotFound => "record_not_found",
            Self::EnvironmentNotProvisioned => "environment_not_provisioned",
            Self::ProductionRequiresPlan => "production_requires_plan",
            Self::RateLimited => "rate_limited",
            Self::FactNotFound => "fact_not_found",
            Self::StorageLimitReached => "storage_limit_reached",
            Self::ApiKeyDeleted => "api_key_deleted",
            Self::InvalidJwt => "invalid_jwt",
            Self::JwtRevoked => "jwt_revoked",
            Self::AuthenticationRequired => "authentication_required",
            Self::InvalidCredentials => "invalid_credentials",
            Self::EmailNotVerified => "email_not_verified",
            Self::MalformedJson => "malformed_json",
            Self::BadRequest => "bad_request",
            Self::Forbidden => "forbidden",
            Self::RouteNotFound => "route_not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::IdempotencyKeyReused => "idempotency_key_reused",
            Self::Conflict => "conflict",
            Self::PayloadTooLarge => "payload_too_large",
            Self::Unprocessable => "unprocessable",
            Self::InternalError => "internal_error",
            Self::InvitationInvalid => "invitation_invalid",
            Self::StatementRejected => "statement_rejected",
            Self::StatementLimitReached => "statement_limit_reached",
            Self::KeyAlreadyRegistered => "key_already_registered",
            Self::VerificationBacklog => "verification_backlog",
            Self::PeriodNotClosed => "period_not_closed",
            Self::LiabilitiesPurged => "liabilities_purged",
        }
    }

    /// The one place a code becomes an HTTP status.
    pub fn status(self) -> u16 {
        match self {
            Self::ValidationFailed | Self::MalformedJson | Self::BadRequest => 400,
            Self::InvalidApiKey
            | Self::ApiKeyDisabled
            | Self::ApiKeyDeleted
            | Self::JwtExpired
            | Self::InvalidJwt
            | Self::JwtRevoked
            | Self::AuthenticationRequired
            | Self::InvalidCredentials => 401,
            Self::PlanLimitExceeded | Self::StorageLimitReached => 402,
            Self::EnvironmentNotProvisioned
            | Self::ProductionRequiresPlan
            | Self::EmailNotVerified
            | Self::Forbidden => 403,
            Self::RecordNotFound | Self::FactNotFound | Self::RouteNotFound => 404,
            Self::MethodNotAllowed => 405,
            Self::IdempotencyKeyReused
            | Self::Conflict
            | Self::StatementLimitReached
            | Self::KeyAlreadyRegistered
            | Self::PeriodNotClosed => 409,
            Self::PayloadTooLarge => 413,
            Self::InvitationInvalid | Self::LiabilitiesPurged => 410,
            Self::Unprocessable | Self::StatementRejected => 422,
            Self::RateLimited | Self::VerificationBacklog => 429,
            Self::InternalError => 500,
        }
    }
}

/// Every way a request can fail. Each carries an `ErrorCode` (`code()`),
/// which alone decides the HTTP status. The status-named variants carry
/// their generic code; a named case uses `Coded` via `ApiError::coded`.
#[derive(Debug)]
pub enum ApiError {
    /// 400 `validation_failed`: one or more fields are missing or invalid.
    Validation(Vec<FieldProblem>),
    /// 400 `bad_request`: the request is unusable for another reason.
    BadRequest(String),
    /// 401 `invalid_api_key`: missing or invalid credentials.
    Unauthorized(String),
    /// 402 `plan_limit_exceeded`: a plan quota is exhausted.
    PaymentRequired(String),
    /// 403 `forbidden`: authenticated but not allowed. (Every current 403
    /// is a named case; kept for generic ones.)
    #[allow(dead_code)]
    Forbidden(String),
    /// 404 `record_not_found`: the resource does not exist (or is someone else's).
    NotFound(String),
    /// 405 `method_not_allowed`: the path exists but not with this method.
    MethodNotAllowed(String),
    /// 409 `conflict`: state conflict.
    Conflict(String),
    /// 413 `payload_too_large`: the body is larger than the route accepts.
    PayloadTooLarge(String),
    /// 422 `unprocessable`: well-formed but semantically invalid.
    Unprocessable(String),
    /// 429 `rate_limited`: retry after this many whole seconds.
    RateLimited { retry_after_secs: u64 },
    /// 429 `verification_backlog`: the tenant's unverified deltas on its
    /// shard are at its plan's bound; retry after this many whole seconds.
    Backlogged {
        retry_after_secs: u64,
        message: String,
    },
    /// 500 `internal_error`: a bug or platform failure. The cause is logged, never sent.
    Internal(String),
    /// A named case: the code decides the status.
    Coded(ErrorCode, String),
}

pub type ApiResult<T> = Result<T, ApiError>;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    pub status_code: u16,
    pub error: &'static str,
    pub message: String,
    pub code: &'static str,
    /// The one invalid field, when validation failed on exactly one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Every invalid field, when validation failed on several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<FieldProblemBody>>,
    /// The response's `Request-Id`, filled in at the HTTP boundary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

#[derive(Serialize)]
pub struct FieldProblemBody {
    pub field: String,
    pub reason: String,
}

impl ApiError {
    pub fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Validation(vec![FieldProblem::new(field, reason)])
    }

    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self::Internal(cause.to_string())
    }

    /// A named case with its code.
    pub fn coded(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::Coded(code, message.into())
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Validation(_) => ErrorCode::ValidationFailed,
            Self::BadRequest(_) => ErrorCode::BadRequest,
            Self::Unauthorized(_) => ErrorCode::InvalidApiKey,
            Self::PaymentRequired(_) => ErrorCode::PlanLimitExceeded,
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::NotFound(_) => ErrorCode::RecordNotFound,
            Self::MethodNotAllowed(_) => ErrorCode::MethodNotAllowed,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::PayloadTooLarge(_) => ErrorCode::PayloadTooLarge,
            Self::Unprocessable(_) => ErrorCode::Unprocessable,
            Self::RateLimited { .. } => ErrorCode::RateLimited,
            Self::Backlogged { .. } => ErrorCode::VerificationBacklog,
            Self::Internal(_) => ErrorCode::InternalError,
            Self::Coded(code, _) => *code,
        }
    }

    pub fn status(&self) -> u16 {
        self.code().status()
    }

    /// The `Retry-After` seconds of a 429.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            Self::RateLimited { retry_after_secs }
            | Self::Backlogged {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            _ => None,
        }
    }

    /// The envelope the spec prescribes (statusCode, error, message) plus
    /// `code` and, for validation, `field` or `errors`.
    pub fn body(&self) -> ErrorBody {
        let status_code = self.status();
        let message = match self {
            Self::Validation(problems) => {
                let parts: Vec<String> = problems
                    .iter()
                    .map(|p| format!("{}: {}", p.field, p.reason))
                    .collect();
                format!("Validation failed: {}", parts.join("; "))
            }
            Self::RateLimited { retry_after_secs } => {
                format!("Rate limit exceeded: retry after {retry_after_secs} second(s)")
            }
            Self::Internal(_) => "Internal error".to_string(),
            Self::BadRequest(m)
            | Self::Unauthorized(m)
            | Self::PaymentRequired(m)
            | Self::Forbidden(m)
            | Self::NotFound(m)
            | Self::MethodNotAllowed(m)
            | Self::Conflict(m)
            | Self::PayloadTooLarge(m)
            | Self::Unprocessable(m)
            | Self::Backlogged { message: m, .. }
            | Self::Coded(_, m) => m.clone(),
        };
        let (field, errors) = match self {
            Self::Validation(problems) if problems.len() == 1 => {
                (problems.first().map(|p| p.field.clone()), None)
            }
            Self::Validation(problems) if problems.len() > 1 => (
                None,
                Some(
                    problems
                        .iter()
                        .map(|p| FieldProblemBody {
                            field: p.field.clone(),
                            reason: p.reason.clone(),
                        })
                        .collect(),
                ),
            ),
            _ => (None, None),
        };
        ErrorBody {
            status_code,
            error: reason_phrase(status_code),
            message,
            code: self.code().as_str(),
            field,
            errors,
            request_id: None,
        }
    }
}

impl From<worker::Error> for ApiError {
    fn from(e: worker::Error) -> Self {
        Self::Internal(format!("platform: {e}"))
    }
}

impl From<serde_json::Error> for ApiError {
    fn from(e: serde_json::Error) -> Self {
        Self::Internal(format!("json: {e}"))
    }
}

pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

impl From<bvs_core::FieldError> for FieldProblem {
    fn from(e: bvs_core::FieldError) -> Self {
        FieldProblem::new(e.field, e.reason)
    }
}

impl From<bvs_core::FieldError> for ApiError {
    fn from(e: bvs_core::FieldError) -> Self {
        ApiError::Validation(vec![e.into()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_validation_error_names_every_field() {
        let e = ApiError::Validation(vec![
            FieldProblem::new("customerId", "is required"),
            FieldProblem::new("delta", "must be non-zero"),
        ]);
        let body = e.body();
        assert_eq!(body.status_code, 400);
        assert_eq!(body.error, "Bad Request");
        assert!(body.message.contains("customerId: is required"));
        assert!(body.message.contains("delta: must be non-zero"));
        assert_eq!(body.code, "validation_failed");
        assert!(body.field.is_none());
        assert_eq!(body.errors.map(|e| e.len()), Some(2));
    }

    #[test]
    fn one_invalid_field_is_named_in_field() {
        let body = ApiError::field("email", "is required").body();
        assert_eq!(body.field.as_deref(), Some("email"));
        assert!(body.errors.is_none());
    }

    #[test]
    fn every_code_is_snake_case_unique_and_documented() {
        let doc = include_str!("../../docs/errors.md");
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(s.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{s}");
            assert!(seen.insert(s), "duplicate code {s}");
            let row = format!("| `{s}` | {} |", code.status());
            assert!(doc.contains(&row), "docs/errors.md lacks the row {row}");
        }
    }

    #[test]
    fn an_internal_error_never_leaks_its_cause() {
        let e = ApiError::internal("D1_ERROR: secret table name");
        assert_eq!(e.body().message, "Internal error");
        assert_eq!(e.status(), 500);
    }
}
