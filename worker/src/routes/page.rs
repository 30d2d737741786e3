//! Static pages the Worker serves from Workers assets (`public/`).

use worker::{Request, Response};

use crate::app::App;
use crate::error::ApiResult;

/// `GET /verify/:proofRoot`: the public verify page, `public/verify.html`.
/// The page reads the root from its own address, fetches the proof and
/// checks it in the browser; nothing about the root is decided here.
pub async fn verify(app: &App, req: Request) -> ApiResult<Response> {
    let mut url = req.url()?;
    // Workers assets serve `verify.html` at `/verify` (and redirect
    // `/verify.html` there), so ask for the clean path.
    url.set_path("/verify");
    url.set_query(None);
    Ok(app
        .env
        .assets("ASSETS")?
        .fetch(url.to_string(), None)
        .await?)
}
