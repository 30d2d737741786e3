//! `GET /dev/mail?to=<email>`: the dev transport's outbox (DEV_MODE only;
//! 404 otherwise).

use bvs_core::time::format_iso_ms;
use bvs_core::types::Email;
use serde::Serialize;
use worker::{Request, Response};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::http;
use crate::mail::{self, outbox_key, SealedMail};
use crate::secret;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MailView {
    id: String,
    to: String,
    subject: String,
    kind: String,
    body: String,
    token: Option<String>,
    created_at: String,
}

/// Newest first.
pub async fn outbox(app: &App, req: Request) -> ApiResult<Response> {
    app.require_dev_mode()?;
    let to = http::query_param(&req, "to")?.unwrap_or_default();
    let to = Email::parse(&to).map_err(|e| ApiError::field("to", e.reason))?;
    let key = outbox_key(app)?;
    let rows = mail::outbox(app, to.as_str()).await?;
    let mut views = Vec::with_capacity(rows.len());
    for r in rows {
        let Some(plain) = secret::open(&key, &r.sealed)? else {
            // Sealed under an earlier JWT_SECRET: unreadable, skip it.
            continue;
        };
        let sealed: SealedMail = serde_json::from_slice(&plain)?;
        #[allow(clippy::cast_possible_wrap)]
        let created_at = format_iso_ms(r.created_at as i64);
        views.push(MailView {
            id: r.id,
            to: r.to_email,
            subject: r.subject,
            kind: r.kind.as_str().to_owned(),
            body: sealed.body,
            token: sealed.token,
            created_at,
        });
    }
    http::dashboard(200, &views, None)
}
