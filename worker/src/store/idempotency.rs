//! Idempotency-Key records (ledger databases): the claims and the answers
//! of committed writes. The emit's live in its own batch (`store::emit`);
//! the other writes under a key (checkpoints, facts, invitations, key
//! registrations, statements: issue 29) take this generic pair, a strict
//! claim and the stored answer, into their batch. Here too: their expiry.

use bvs_core::hash::Hash32;
use bvs_core::types::Env;
use serde::Deserialize;
use worker::D1Database;

use super::{args, first, run, Query};
use crate::error::ApiResult;
use crate::ids::{ClaimToken, TenantId};

/// The key's expired claim and answer (each claim drops them first).
const DELETE_EXPIRED_CLAIM: &str = "DELETE FROM idempotency_claims \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND expires_at <= ?4";
const DELETE_EXPIRED_RESULT: &str = "DELETE FROM idempotency_results \
     WHERE tenant_id = ?1 AND env = ?2 AND key = ?3 AND expires_at <= ?4";
const DELETE_EXPIRED_RESULTS: &str = "DELETE FROM idempotency_results WHERE expires_at <= ?1";
/// A strict claim: a plain INSERT, so a key held by another request fails
/// it (UNIQUE) and D1 rolls the whole batch back, the write included.
const CLAIM_STRICT: &str = "INSERT INTO idempotency_claims \
     (tenant_id, env, key, request_hash, token, state, lease_until, expires_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, 'done', ?6, ?7)";
const INSERT_ANSWER: &str = "INSERT INTO idempotency_results \
     (tenant_id, env, key, request_hash, response_status, response_body, expires_at) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
/// The key's live claim and its answer, if any.
const HELD: &str = "SELECT c.request_hash, c.token, c.state, c.lease_until, \
     r.response_status, r.response_body FROM idempotency_claims c \
     LEFT JOIN idempotency_results r ON r.tenant_id = c.tenant_id AND r.env = c.env AND r.key = c.key \
     WHERE c.tenant_id = ?1 AND c.env = ?2 AND c.key = ?3 AND c.expires_at > ?4";

pub async fn delete_expired_results(ledger: &D1Database, now_ms: u64) -> ApiResult<u64> {
    run(ledger, Query::new(DELETE_EXPIRED_RESULTS, args![now_ms])).await
}

/// The key's claim and stored answer as the batch left them.
#[derive(Debug, Deserialize)]
pub struct ClaimRow {
    pub request_hash: Hash32,
    pub token: ClaimToken,
    pub state: ClaimState,
    pub lease_until: u64,
    pub response_status: Option<u16>,
    pub response_body: Option<String>,
}

super::text_enum! {
    /// An idempotency claim's `state` column.
    pub enum ClaimState {
        /// Claimed, its answer not stored yet (only under the DEV_MODE fault
        /// point that stops a write after its batch).
        InFlight = "in_flight",
        /// The answer is stored under the key.
        Done = "done",
    }
}

/// An Idempotency-Key claim, whichever batch takes it (a strict one here,
/// the emit's in `store::emit`): the key of an environment (the tenant is
/// the batch's), the request's body hash and random token, and its window.
pub struct ClaimKey<'a> {
    pub env: Env,
    pub key: &'a str,
    pub request_hash: &'a Hash32,
    /// This request's random id: the later statements test it.
    pub token: &'a ClaimToken,
    pub now_ms: u64,
    pub expires_at: u64,
}

/// The statements dropping the expired claim and answer of `tenant_id`'s key.
///
/// # Errors
/// A value that cannot be bound.
pub(super) fn drop_expired<'a>(
    tenant_id: &'a TenantId,
    c: &ClaimKey<'a>,
) -> ApiResult<[Query<'a>; 2]> {
    let expired = args![tenant_id, c.env, c.key, c.now_ms];
    Ok([
        Query::new(DELETE_EXPIRED_CLAIM, expired.clone()),
        Query::new(DELETE_EXPIRED_RESULT, expired),
    ])
}

/// A key under which a write claims and stores its answer.
pub struct KeyClaim<'a> {
    pub tenant_id: &'a TenantId,
    pub claim: ClaimKey<'a>,
}

/// The statements that put the claim and `status`/`body` under the key:
/// expired records of the key dropped, the strict claim, the answer.
pub fn claim_and_answer<'a>(
    k: &KeyClaim<'a>,
    status: u16,
    body: String,
) -> ApiResult<Vec<Query<'a>>> {
    let [expired_claim, expired_result] = drop_expired(k.tenant_id, &k.claim)?;
    let c = &k.claim;
    let claim = args![
        k.tenant_id,
        c.env,
        c.key,
        c.request_hash,
        c.token,
        c.now_ms,
        c.expires_at
    ];
    let answer = args![
        k.tenant_id,
        c.env,
        c.key,
        c.request_hash,
        status,
        body,
        c.expires_at
    ];
    Ok(vec![
        expired_claim,
        expired_result,
        Query::new(CLAIM_STRICT, claim),
        Query::new(INSERT_ANSWER, answer),
    ])
}

/// The key's live claim (not expired at `now_ms`) and its answer.
pub async fn held(
    db: &D1Database,
    tenant_id: &TenantId,
    env: Env,
    key: &str,
    now_ms: u64,
) -> ApiResult<Option<ClaimRow>> {
    first(db, Query::new(HELD, args![tenant_id, env, key, now_ms])).await
}
