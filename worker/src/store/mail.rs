//! Mail requests (control database): one row per resend-verification or
//! request-password-reset call, for any address, until the queue consumer
//! claims it.

use serde::Deserialize;
use worker::D1Database;

use super::Query;
use super::{all, args, first, run};
use crate::error::ApiResult;
use crate::ids::MailRequestId;

const INSERT: &str =
    "INSERT INTO mail_requests (id, kind, email, created_at) VALUES (?1, ?2, ?3, ?4)";
/// Claims a request: whoever deletes it processes it, once.
const CLAIM: &str = "DELETE FROM mail_requests WHERE id = ?1 RETURNING kind, email";
const SELECT_STALE: &str =
    "SELECT id FROM mail_requests WHERE created_at < ?1 ORDER BY created_at LIMIT ?2";

super::text_enum! {
    /// Which mail a request asks for: a request row's `kind`.
    pub enum MailKind {
        /// A new verification link, if the address has an unverified account.
        VerifyEmail = "verify_email",
        /// A password-reset link, if the address has an account.
        ResetPassword = "reset_password",
    }
}

#[derive(Debug, Deserialize)]
pub struct Claimed {
    pub kind: MailKind,
    pub email: String,
}

#[derive(Debug, Deserialize)]
pub struct Stale {
    pub id: MailRequestId,
}

pub async fn insert(
    db: &D1Database,
    id: &MailRequestId,
    kind: MailKind,
    email: &str,
    now_ms: u64,
) -> ApiResult<()> {
    run(db, Query::new(INSERT, args![id, kind, email, now_ms])).await?;
    Ok(())
}

/// Deletes the request and returns it; `None` when it was already claimed.
pub async fn claim(db: &D1Database, id: &MailRequestId) -> ApiResult<Option<Claimed>> {
    first(db, Query::new(CLAIM, args![id])).await
}

/// Requests older than `before_ms` (a lost doorbell), oldest first.
pub async fn stale(db: &D1Database, before_ms: u64, limit: u64) -> ApiResult<Vec<Stale>> {
    all(db, Query::new(SELECT_STALE, args![before_ms, limit])).await
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_request_reads_its_kind_from_the_stored_word() {
        let c: Claimed =
            serde_json::from_str(r#"{"kind":"reset_password","email":"a@b.c"}"#).unwrap();
        assert_eq!(c.kind, MailKind::ResetPassword);
        assert_eq!(MailKind::VerifyEmail.as_str(), "verify_email");
        assert!(serde_json::from_str::<Claimed>(r#"{"kind":"spam","email":"a@b.c"}"#).is_err());
    }
}
