//! A tenant's assets (issue 43, docs/balance.md "Assets" and
//! "Conditions"): their list, and each one's default floor.

use bvs_core::amount::Amount;
use bvs_core::types::Asset;
use bvs_core::FieldError;
use serde_json::{json, Value};
use worker::{Request, Response};

use crate::app::App;
use crate::auth::KeyContext;
use crate::error::{ApiError, ApiResult};
use crate::fields::Fields;
use crate::http;
use crate::ledger;
use crate::ledgers;
use crate::views;

/// `GET /api/v1/balance/assets` (issue 43): the tenant's named assets,
/// each with the precision its code keeps; the default asset is not
/// listed (it has no name).
pub async fn assets(app: &App, ctx: KeyContext) -> ApiResult<Response> {
    let db = ledger::db(app, ctx.log())?;
    let rows = ledgers::customers::tenant_assets(&db, &ctx.tenant_id).await?;
    let assets: Vec<Value> = rows.iter().map(asset_view).collect();
    http::balance(200, &json!({ "assets": assets }))
}

/// An asset as `GET /api/v1/balance/assets` lists it; the default
/// asset's row (code `''`, only once it has a floor) as `default`.
fn asset_view(a: &ledgers::customers::AssetRow) -> Value {
    let (asset, code) = if a.code.is_empty() {
        ("default".to_string(), "default")
    } else {
        (format!("{}/{}", a.code, a.precision), a.code.as_str())
    };
    json!({
        "asset": asset,
        "code": code,
        "precision": a.precision,
        "balanceAtLeast": a.balance_at_least,
        "createdAt": views::iso(a.created_at),
    })
}

/// `PUT /api/v1/balance/assets/:asset` (issue 43, docs/balance.md
/// "Conditions"): the tenant's default floor for debits of the asset
/// (`:asset` its code, or `default`): `{balanceAtLeast}` (a number, or
/// `null` for none), and `precision` to register a code not used yet.
pub async fn put_asset(
    app: &App,
    mut req: Request,
    ctx: KeyContext,
    code: &str,
) -> ApiResult<Response> {
    let mut f = Fields::read(&mut req).await?;
    let precision_text = f.number("precision", false);
    let precision = f.parse("precision", precision_text, |t| {
        t.parse::<u32>()
            .ok()
            .filter(|p| *p <= 18)
            .ok_or_else(|| FieldError::new("precision", "must be a whole number from 0 to 18"))
    });
    let floor_text = f.number("balanceAtLeast", false);
    if !f.has("balanceAtLeast") {
        f.problem("balanceAtLeast", "is required (a number, or null for none)");
    }
    let floor = f.parse("balanceAtLeast", floor_text, |t| {
        Amount::parse(t)
            .map_err(|e| FieldError::new("balanceAtLeast", format!("must be a number: {e}")))
    });
    f.finish()?;
    let db = ledger::db(app, ctx.log())?;
    let (code, asset) = if code == "default" {
        (String::new(), Asset::Default)
    } else {
        let known = ledgers::customers::tenant_asset(&db, &ctx.tenant_id, code).await?;
        let Some(p) = precision.or(known.map(|k| k.precision)) else {
            return Err(ApiError::field(
                "asset",
                format!("asset {code} is not used yet: pass its precision to register it"),
            ));
        };
        (
            code.to_string(),
            Asset::parse("asset", &format!("{code}/{p}"))?,
        )
    };
    if let Some(floor) = floor {
        asset.check("balanceAtLeast", floor)?;
    }
    let row = ledgers::customers::set_floor(
        &db,
        &ctx.tenant_id,
        &code,
        asset.precision(),
        floor.as_ref(),
        app.now_ms,
    )
    .await?
    .ok_or_else(|| {
        ApiError::field(
            "precision",
            format!("asset {code} keeps another precision in this tenant"),
        )
    })?;
    http::balance(200, &asset_view(&row))
}
