//! The emit write (issue 16): one atomic D1 batch on the tenant's shard
//! that claims the Idempotency-Key (if any), raises the monthly delta quota,
//! the storage meter and the unverified backlog (issue 27), writes the submission, its ledgers and deltas,
//! stores the answer under the key, and reads back what the response needs.
//!
//! Every statement after the claim runs only while the claim holds this
//! request's token (`?N IS NULL OR EXISTS (...)`; without a key the token
//! is NULL and everything runs), so a replay, a request still in flight
//! under its lease, or a conflicting body writes nothing and counts
//! nothing. A raise past its cap fails its `CHECK (used <= cap)`, and D1
//! rolls the whole batch back: claim, quota, bytes and rows together
//! (migrations/ledger/0051_emit_claims.sql).

use bvs_core::hash::Hash32;
use bvs_core::types::{Asset, CustomerId};
use serde::Deserialize;
use worker::D1Database;

use super::idempotency::{ClaimKey, ClaimRow, ClaimState};
use super::meters::{self, Meter, Raise};
use super::submissions::{NewDelta, NewSubmission};
use super::{args, int, over_json, Query};
use crate::error::{ApiError, ApiResult};
use crate::ids::{ClaimToken, TenantId};

/// Claims a free key; takes over an in-flight claim of the same request
/// whose lease has passed and whose write never committed (no answer).
const CLAIM: &str = "INSERT INTO idempotency_claims \
     (tenant_id, env, key, request_hash, token, state, lease_until, expires_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
     ON CONFLICT (tenant_id, env, key) DO UPDATE SET token = excluded.token, \
     state = excluded.state, lease_until = excluded.lease_until \
     WHERE idempotency_claims.state = 'in_flight' AND idempotency_claims.lease_until <= ?9 \
     AND idempotency_claims.request_hash = excluded.request_hash \
     AND NOT EXISTS (SELECT 1 FROM idempotency_results r \
     WHERE r.tenant_id = ?1 AND r.env = ?2 AND r.key = ?3)";
/// The three raises (`?1..?5`, `?6..?10`, `?11..?15`: tenant, meter,
/// period, add, cap) in one statement.
const RAISE_ALL_IF_MINE: &str = "INSERT INTO meters (tenant_id, meter, period, used, cap) \
     SELECT column1, column2, column3, column4, column5 \
     FROM (VALUES (?1, ?2, ?3, ?4, ?5), (?6, ?7, ?8, ?9, ?10), (?11, ?12, ?13, ?14, ?15)) \
     WHERE ?16 IS NULL OR EXISTS (SELECT 1 FROM idempotency_claims WHERE token = ?16) \
     ON CONFLICT (tenant_id, meter, period) DO UPDATE SET used = used + excluded.used, \
     cap = excluded.cap";
const INSERT_SUBMISSION_IF_MINE: &str =
    "INSERT INTO submissions (id, tenant_id, contract_id, kind, items_root, item_count, received_at) \
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 \
     WHERE ?8 IS NULL OR EXISTS (SELECT 1 FROM idempotency_claims WHERE token = ?8)";
/// The deltas' ledger rows (`?1`: `[customer_id, ledger_id, asset]`
/// each, [`ledger_set`]): every customer has its default-asset row (the
/// rows with asset '' are the tenant's customers) and, for a named asset,
/// that asset's row (issue 43).
const INSERT_LEDGER_SET_IF_MINE: &str =
    "INSERT OR IGNORE INTO ledgers (tenant_id, customer_id, asset, ledger_id, created_at) \
     SELECT ?2, json_extract(value, '$[0]'), json_extract(value, '$[2]'), \
     json_extract(value, '$[1]'), ?3 FROM json_each(?1) \
     WHERE ?4 IS NULL OR EXISTS (SELECT 1 FROM idempotency_claims WHERE token = ?4)";
/// A named asset's code `?2` registered for tenant `?1` with precision
/// `?3` the first time it is used; a later use with another precision
/// inserts a NULL code into `asset_guard`, whose NOT NULL fails the whole
/// batch ([`ASSET_PRECISION_REFUSED`]).
const REGISTER_ASSET_IF_MINE: &str =
    "INSERT OR IGNORE INTO assets (tenant_id, code, precision, created_at) \
     SELECT ?1, ?2, ?3, ?4 \
     WHERE ?5 IS NULL OR EXISTS (SELECT 1 FROM idempotency_claims WHERE token = ?5)";
const GUARD_ASSET_PRECISION: &str = "INSERT INTO asset_guard (code) SELECT NULL \
     WHERE EXISTS (SELECT 1 FROM assets WHERE tenant_id = ?1 AND code = ?2 AND precision != ?3)";
/// What D1 says when [`GUARD_ASSET_PRECISION`] fails a batch.
pub const ASSET_PRECISION_REFUSED: &str = "asset_guard.code";
/// The deltas of a submission (`?1`: [`DeltaSetRow`] each) of tenant
/// `?2`, submission `?3` over items root `?4`, received at `?5`, in the
/// set's order.
const INSERT_DELTA_SET_IF_MINE: &str =
    "INSERT INTO deltas (anchor_id, tenant_id, customer_id, submission_id, position, \
     item_hash, items_root, delta, reason, reference_id, metadata, declared_at, \
     received_at, status, ledger_root, asset, conditions) \
     SELECT json_extract(value, '$[0]'), ?2, json_extract(value, '$[1]'), ?3, \
     json_extract(value, '$[2]'), json_extract(value, '$[3]'), ?4, json_extract(value, '$[4]'), \
     json_extract(value, '$[5]'), json_extract(value, '$[6]'), json_extract(value, '$[7]'), \
     json_extract(value, '$[8]'), ?5, 'QUEUED', json_extract(value, '$[9]'), \
     json_extract(value, '$[10]'), json_extract(value, '$[11]') FROM json_each(?1) \
     WHERE ?6 IS NULL OR EXISTS (SELECT 1 FROM idempotency_claims WHERE token = ?6) \
     ORDER BY key";
/// A single emit's delta without an Idempotency-Key, answering the
/// customer's verified and queued deltas, the new one included (no
/// statement of its own for `estimatedVerifiedDeltas`).
const INSERT_DELTA_COUNTING: &str = concat!(
    "INSERT INTO deltas (anchor_id, tenant_id, customer_id, submission_id, position, \
     item_hash, items_root, delta, reason, reference_id, metadata, declared_at, \
     received_at, status, ledger_root, asset, conditions) \
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'QUEUED', ?15, ?16, ?17 \
     WHERE ?14 IS NULL OR EXISTS (SELECT 1 FROM idempotency_claims WHERE token = ?14)",
    " RETURNING COALESCE((SELECT verified_count FROM ledgers \
     WHERE tenant_id = ?2 AND customer_id = ?3 AND asset = ?16), 0) \
     + (SELECT COUNT(*) FROM deltas WHERE tenant_id = ?2 AND customer_id = ?3 \
     AND asset = ?16 AND status = 'QUEUED') AS estimated"
);
/// The answer, with the estimate the batch computes put in place of the
/// placeholder `?7` (as `?8` followed by the number).
const INSERT_RESULT_IF_MINE: &str = "INSERT INTO idempotency_results \
     (tenant_id, env, key, request_hash, response_status, response_body, expires_at) \
     SELECT ?1, ?2, ?3, ?4, ?5, replace(?6, ?7, ?8 || (\
     COALESCE((SELECT verified_count FROM ledgers WHERE tenant_id = ?1 AND customer_id = ?9 \
     AND asset = ?12), 0) \
     + (SELECT COUNT(*) FROM deltas WHERE tenant_id = ?1 AND customer_id = ?9 AND asset = ?12 \
     AND status = 'QUEUED'))), \
     ?10 WHERE EXISTS (SELECT 1 FROM idempotency_claims WHERE token = ?11)";
/// What the response needs, read inside the batch: the customer's verified
/// and queued deltas (the new one included), and the key's claim and
/// stored answer (NULLs without a key).
const OUTCOME: &str = "SELECT \
     COALESCE((SELECT verified_count FROM ledgers WHERE tenant_id = ?1 AND customer_id = ?2 \
     AND asset = ?5), 0) \
     + (SELECT COUNT(*) FROM deltas WHERE tenant_id = ?1 AND customer_id = ?2 AND asset = ?5 \
     AND status = 'QUEUED') AS estimated, \
     c.request_hash, c.token, c.state, c.lease_until, r.response_status, r.response_body \
     FROM (SELECT 1) \
     LEFT JOIN idempotency_claims c ON c.tenant_id = ?1 AND c.env = ?3 AND c.key = ?4 \
     LEFT JOIN idempotency_results r ON r.tenant_id = ?1 AND r.env = ?3 AND r.key = ?4";
const COMPLETE: &str = "UPDATE idempotency_claims SET state = 'done' WHERE token = ?1";
const DELETE_EXPIRED_CLAIMS: &str = "DELETE FROM idempotency_claims WHERE expires_at <= ?1";

/// An Idempotency-Key claim made inside the write's batch.
pub struct NewClaim<'a> {
    pub claim: ClaimKey<'a>,
    /// `false` leaves the claim in flight (the DEV_MODE fault point after
    /// the write); completed by [`complete`].
    pub done: bool,
    pub lease_until: u64,
    /// The answer stored under the key.
    pub status: u16,
    pub body: &'a str,
}

/// The answer's placeholder for `estimatedVerifiedDeltas`: the batch puts
/// `prefix` and the number in place of `text`.
pub struct Estimate<'a> {
    pub customer_id: &'a CustomerId,
    /// The estimate counts this asset's deltas of the customer.
    pub asset: &'a Asset,
    pub text: &'a str,
    pub prefix: &'a str,
}

/// Everything one emit or emit-batch writes.
pub struct EmitWrite<'a> {
    pub submission: &'a NewSubmission<'a>,
    pub deltas: &'a [&'a NewDelta],
    /// The monthly delta quota, then the storage ceiling, then the
    /// backlog's bound (issue 27): the first that does not fit is the one
    /// reported.
    pub raises: [Raise<'a>; 3],
    pub claim: Option<NewClaim<'a>>,
    pub estimate: Option<Estimate<'a>>,
}

/// What the batch did.
pub enum EmitOutcome {
    /// Written (and, under a key, claimed and answered): the customer's
    /// verified and queued deltas, the new ones included.
    Written { estimated: u64 },
    /// The key belongs to another request (or this one, replayed): nothing
    /// was written or counted.
    Claimed(ClaimRow),
    /// A raise did not fit: nothing was written (no claim either).
    Refused(Meter),
    /// A named asset's code was first used with another precision in
    /// this tenant: nothing was written.
    AssetPrecision,
}

#[derive(Deserialize)]
struct OutcomeRow {
    estimated: u64,
    request_hash: Option<Hash32>,
    token: Option<ClaimToken>,
    state: Option<ClaimState>,
    lease_until: Option<u64>,
    response_status: Option<u16>,
    response_body: Option<String>,
}

/// Runs the emit's batch: one round trip.
///
/// # Errors
/// D1 errors other than a raise past its cap.
pub async fn write(db: &D1Database, w: &EmitWrite<'_>) -> ApiResult<EmitOutcome> {
    let tenant = w.submission.tenant_id;
    let token = w.claim.as_ref().map(|c| c.claim.token);
    let mut statements = Vec::with_capacity(8 + 2 * w.deltas.len());
    if let Some(c) = &w.claim {
        statements.extend(claim_statements(tenant, c)?);
    }
    statements.push(raise_statement(w, token)?);
    // Without a claim, a single emit's estimate comes back from its delta's
    // insert (the last row statement) and a batch needs none: no OUTCOME.
    let counting = w.claim.is_none() && w.estimate.is_some() && w.deltas.len() == 1;
    statements.extend(row_statements(w, token, counting)?);
    let counted_at = statements.len() - 1;
    if let Some(c) = &w.claim {
        statements.extend(result_statements(w, c)?);
    }
    let results = match meters::batch_within_caps(db, statements, &w.raises).await {
        Ok(Ok(results)) => results,
        Ok(Err(meter)) => return Ok(EmitOutcome::Refused(meter)),
        Err(ApiError::Internal(text)) if text.contains(ASSET_PRECISION_REFUSED) => {
            return Ok(EmitOutcome::AssetPrecision)
        }
        Err(e) => return Err(e),
    };
    if w.claim.is_none() {
        let estimated = if counting {
            first_row::<Counted>(&results, counted_at)?.estimated
        } else {
            0
        };
        return Ok(EmitOutcome::Written { estimated });
    }
    let row: OutcomeRow = first_row(&results, results.len().saturating_sub(1))?;
    claimed_outcome(row, token)
}

/// The emit's three meters raised together, each up to its cap, only while
/// the claim `token` (if any) is still this request's.
fn raise_statement<'a>(
    w: &'a EmitWrite<'a>,
    token: Option<&'a ClaimToken>,
) -> ApiResult<Query<'a>> {
    let [a, b, c] = &w.raises;
    let raises = args![
        a.tenant_id,
        a.meter.as_str(),
        a.period,
        a.add,
        a.cap,
        b.tenant_id,
        b.meter.as_str(),
        b.period,
        b.add,
        b.cap,
        c.tenant_id,
        c.meter.as_str(),
        c.period,
        c.add,
        c.cap,
        token
    ];
    Ok(Query::new(RAISE_ALL_IF_MINE, raises))
}

/// After the rows, with an Idempotency-Key: the stored result (if the
/// claim is still this request's), then the outcome row read back.
fn result_statements<'a>(w: &EmitWrite<'a>, new: &NewClaim<'a>) -> ApiResult<[Query<'a>; 2]> {
    let tenant = w.submission.tenant_id;
    let (customer, asset, text, prefix) = match &w.estimate {
        Some(e) => (Some(e.customer_id), Some(e.asset), e.text, e.prefix),
        None => (None, None, "", ""),
    };
    let c = &new.claim;
    let result = args![
        tenant,
        c.env,
        c.key,
        c.request_hash,
        new.status,
        new.body,
        text,
        prefix,
        customer,
        c.expires_at,
        c.token,
        asset
    ];
    let outcome = args![tenant, customer, c.env, c.key, asset];
    Ok([
        Query::new(INSERT_RESULT_IF_MINE, result),
        Query::new(OUTCOME, outcome),
    ])
}

/// What an emit with an Idempotency-Key wrote, from its outcome row: its
/// rows (the claim is still `token`), or another request's claim.
fn claimed_outcome(row: OutcomeRow, token: Option<&ClaimToken>) -> ApiResult<EmitOutcome> {
    let claim = match (row.request_hash, row.token, row.state) {
        (Some(request_hash), Some(token), Some(state)) => Some(ClaimRow {
            request_hash,
            token,
            state,
            lease_until: row.lease_until.unwrap_or(0),
            response_status: row.response_status,
            response_body: row.response_body,
        }),
        _ => None,
    };
    Ok(match (token, claim) {
        (None, _) => EmitOutcome::Written {
            estimated: row.estimated,
        },
        (Some(mine), Some(c)) if &c.token == mine => EmitOutcome::Written {
            estimated: row.estimated,
        },
        (Some(_), Some(c)) => EmitOutcome::Claimed(c),
        (Some(_), None) => return Err(ApiError::internal("idempotency claim missing")),
    })
}

fn claim_statements<'a>(tenant: &'a TenantId, new: &'a NewClaim<'a>) -> ApiResult<Vec<Query<'a>>> {
    let [expired_claim, expired_result] = super::idempotency::drop_expired(tenant, &new.claim)?;
    let c = &new.claim;
    let state = if new.done {
        ClaimState::Done
    } else {
        ClaimState::InFlight
    }
    .as_str();
    let claim = args![
        tenant,
        c.env,
        c.key,
        c.request_hash,
        c.token,
        state,
        new.lease_until,
        c.expires_at,
        c.now_ms
    ];
    Ok(vec![
        expired_claim,
        expired_result,
        Query::new(CLAIM, claim),
    ])
}

/// What [`INSERT_DELTA_COUNTING`] answers.
#[derive(Deserialize)]
struct Counted {
    estimated: u64,
}

fn first_row<T: serde::de::DeserializeOwned>(
    results: &[worker::D1Result],
    index: usize,
) -> ApiResult<T> {
    super::rows(results, index)?
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::internal("emit outcome row missing"))
}

/// The submission, ledger and delta rows; `counting`: the (one) delta's
/// insert answers the estimate ([`INSERT_DELTA_COUNTING`]). Otherwise the
/// ledger and delta rows go as JSON sets (one statement per table, not
/// two per delta: issue 42), so binding does not grow with the batch.
fn row_statements<'a>(
    w: &'a EmitWrite<'a>,
    token: Option<&'a ClaimToken>,
    counting: bool,
) -> ApiResult<Vec<Query<'a>>> {
    let sub = w.submission;
    let received_at = int(sub.received_at)?;
    let submission = args![
        sub.id,
        sub.tenant_id,
        sub.contract_id,
        sub.kind,
        sub.items_root,
        sub.item_count,
        sub.received_at,
        token
    ];
    let mut statements = vec![Query::new(INSERT_SUBMISSION_IF_MINE, submission)];
    statements.extend(asset_statements(w, token, &received_at)?);
    statements.extend(ledger_set(w, token, &received_at)?);
    if !counting {
        let rows: Vec<DeltaSetRow<'_>> = w.deltas.iter().map(|d| DeltaSetRow::of(d)).collect();
        let fixed = args![
            sub.tenant_id,
            sub.id,
            sub.items_root,
            received_at.clone(),
            token
        ];
        statements.extend(over_json(INSERT_DELTA_SET_IF_MINE, &rows, &fixed)?);
        return Ok(statements);
    }
    for d in w.deltas {
        let delta = args![
            &d.anchor_id,
            sub.tenant_id,
            &d.customer_id,
            sub.id,
            d.position,
            &d.item_hash,
            sub.items_root,
            &d.delta,
            &d.reason,
            d.reference_id.as_deref(),
            d.metadata.as_deref(),
            d.declared_at,
            received_at.clone(),
            token,
            &d.ledger_root,
            &d.asset,
            d.conditions.as_deref()
        ];
        statements.push(Query::new(INSERT_DELTA_COUNTING, delta));
    }
    Ok(statements)
}

/// A delta's row in [`INSERT_DELTA_SET_IF_MINE`]'s JSON set, in its
/// `$[0]..$[11]` order; amounts and hashes as the text they are stored as.
#[derive(serde::Serialize)]
struct DeltaSetRow<'a>(
    &'a str,
    &'a str,
    u64,
    &'a Hash32,
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    u64,
    &'a Hash32,
    String,
    Option<&'a str>,
);

impl<'a> DeltaSetRow<'a> {
    fn of(d: &'a NewDelta) -> Self {
        DeltaSetRow(
            d.anchor_id.as_str(),
            d.customer_id.as_str(),
            d.position,
            &d.item_hash,
            &d.delta_text,
            &d.reason,
            d.reference_id.as_deref(),
            d.metadata.as_deref(),
            d.declared_at,
            &d.ledger_root,
            d.asset.key(),
            d.conditions.as_deref(),
        )
    }
}

/// Each ledger row the deltas need once ([`INSERT_LEDGER_SET_IF_MINE`]):
/// every customer's default-asset row, and each named asset's.
fn ledger_set<'a>(
    w: &'a EmitWrite<'a>,
    token: Option<&'a ClaimToken>,
    received_at: &super::Arg<'a>,
) -> ApiResult<Vec<Query<'a>>> {
    let mut rows: Vec<(&str, &Hash32, String)> = Vec::with_capacity(w.deltas.len() + 1);
    for d in w.deltas {
        let (customer, ledger) = (d.customer_id.as_str(), &d.ledger_id);
        if d.asset.code().is_some() {
            rows.push((customer, ledger, d.asset.key()));
        }
        rows.push((customer, ledger, String::new()));
    }
    rows.sort_unstable();
    rows.dedup();
    let fixed = args![w.submission.tenant_id, received_at.clone(), token];
    over_json(INSERT_LEDGER_SET_IF_MINE, &rows, &fixed)
}

/// Each named asset of the deltas once: its registration and the guard
/// that refuses another precision for its code.
fn asset_statements<'a>(
    w: &'a EmitWrite<'a>,
    token: Option<&'a ClaimToken>,
    received_at: &super::Arg<'a>,
) -> ApiResult<Vec<Query<'a>>> {
    let mut named: Vec<(&str, u32)> = w
        .deltas
        .iter()
        .filter_map(|d| d.asset.code().map(|c| (c, d.asset.precision())))
        .collect();
    named.sort_unstable();
    named.dedup();
    let tenant = w.submission.tenant_id;
    let mut out = Vec::with_capacity(2 * named.len());
    for (code, precision) in named {
        let register = args![tenant, code, precision, received_at.clone(), token];
        out.push(Query::new(REGISTER_ASSET_IF_MINE, register));
        out.push(Query::new(
            GUARD_ASSET_PRECISION,
            args![tenant, code, precision],
        ));
    }
    Ok(out)
}

super::queries! {
    /// Marks an in-flight claim done (its answer is stored).
    pub fn complete(token: &ClaimToken) -> () = exec(COMPLETE);
    /// Drops claims past their window; returns how many.
    pub fn delete_expired_claims(now_ms: u64) -> u64 = run(DELETE_EXPIRED_CLAIMS);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use bvs_core::amount::Amount;
    use bvs_core::hash::Hash32;
    use bvs_core::types::{CustomerId, Env};

    use super::{
        claim_statements, raise_statement, result_statements, row_statements, ClaimKey, EmitWrite,
        Estimate, Meter, NewClaim, NewDelta, NewSubmission, Raise,
    };
    use crate::ids::{AnchorId, ClaimToken, ContractId, SubmissionId, TenantId};
    use crate::store::submissions::SubmissionKind;

    #[test]
    fn every_emit_statement_binds_its_placeholders() {
        let (tenant, contract) = (TenantId::from_text("ten_1"), ContractId::from_text("ctr_1"));
        let (id, root) = (SubmissionId::from_text("sub_1"), Hash32::digest(b"r"));
        let customer = CustomerId::parse("cus_1").unwrap();
        let submission = NewSubmission {
            id: &id,
            tenant_id: &tenant,
            contract_id: &contract,
            kind: SubmissionKind::Single,
            items_root: &root,
            item_count: 1,
            received_at: 1,
        };
        let delta = NewDelta {
            anchor_id: AnchorId::from_text("anc_1"),
            customer_id: customer.clone(),
            ledger_id: root,
            position: 0,
            item_hash: root,
            delta: Amount::ZERO,
            delta_text: Amount::ZERO.to_string(),
            asset: bvs_core::types::Asset::parse("asset", "USD/2").unwrap(),
            reason: "r".into(),
            reference_id: None,
            metadata: None,
            declared_at: 1,
            ledger_root: root,
            conditions: Some("{\"expectedSequence\":0}".into()),
        };
        let raise = |meter| Raise {
            tenant_id: &tenant,
            meter,
            period: "2026-11",
            add: 1,
            cap: 2,
        };
        let token = ClaimToken::from_text("clm_1");
        let claim = NewClaim {
            claim: ClaimKey {
                env: Env::Sandbox,
                key: "k",
                request_hash: &root,
                token: &token,
                now_ms: 1,
                expires_at: 2,
            },
            done: true,
            lease_until: 3,
            status: 202,
            body: "{}",
        };
        let deltas = [&delta];
        let w = EmitWrite {
            submission: &submission,
            deltas: &deltas,
            raises: [
                raise(Meter::Deltas),
                raise(Meter::Bytes),
                raise(Meter::Backlog),
            ],
            claim: None,
            estimate: Some(Estimate {
                customer_id: &customer,
                asset: &deltas[0].asset,
                text: "t",
                prefix: "p",
            }),
        };
        let mut all = claim_statements(&tenant, &claim).unwrap();
        all.push(raise_statement(&w, Some(&token)).unwrap());
        for counting in [false, true] {
            all.extend(row_statements(&w, Some(&token), counting).unwrap());
        }
        all.extend(result_statements(&w, &claim).unwrap());
        crate::store::assert_binds(&all);
    }
}
