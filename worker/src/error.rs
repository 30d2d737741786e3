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

/// Every way a request can fail. `into_response` is the only place that knows
/// which HTTP status each one becomes.
#[derive(Debug)]
pub enum ApiError {
    /// 400: one or more fields are missing or invalid; the message names each.
    Validation(Vec<FieldProblem>),
    /// 400: the request is unusable for another reason (malformed JSON, bad UTF-8).
    BadRequest(String),
    /// 401: missing, invalid, disabled or expired credentials.
    Unauthorized(String),
    /// 402: a plan quota is exhausted.
    PaymentRequired(String),
    /// 403: authenticated but not allowed.
    Forbidden(String),
    /// 404: the named resource does not exist (or belongs to someone else).
    NotFound(String),
    /// 405: the path exists but not with this method.
    MethodNotAllowed(String),
    /// 409: state conflict.
    Conflict(String),
    /// 413: the body is larger than the route accepts.
    PayloadTooLarge(String),
    /// 422: well-formed but semantically invalid.
    Unprocessable(String),
    /// 429: too many requests; retry after this many whole seconds.
    RateLimited { retry_after_secs: u64 },
    /// 500: a bug or an unexpected platform failure. The cause is logged, never sent.
    Internal(String),
}

pub type ApiResult<T> = Result<T, ApiError>;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    pub status_code: u16,
    pub error: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Validation(vec![FieldProblem::new(field, reason)])
    }

    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self::Internal(cause.to_string())
    }

    pub fn status(&self) -> u16 {
        match self {
            Self::Validation(_) | Self::BadRequest(_) => 400,
            Self::Unauthorized(_) => 401,
            Self::PaymentRequired(_) => 402,
            Self::Forbidden(_) => 403,
            Self::NotFound(_) => 404,
            Self::MethodNotAllowed(_) => 405,
            Self::Conflict(_) => 409,
            Self::PayloadTooLarge(_) => 413,
            Self::Unprocessable(_) => 422,
            Self::RateLimited { .. } => 429,
            Self::Internal(_) => 500,
        }
    }

    /// The envelope the spec prescribes: statusCode, error, message.
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
            | Self::Unprocessable(m) => m.clone(),
        };
        ErrorBody {
            status_code,
            error: reason_phrase(status_code),
            message,
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
    }

    #[test]
    fn an_internal_error_never_leaks_its_cause() {
        let e = ApiError::internal("D1_ERROR: secret table name");
        assert_eq!(e.body().message, "Internal error");
        assert_eq!(e.status(), 500);
    }
}
