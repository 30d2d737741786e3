//! Two-party agreement, the service side (docs/agreement.md): a vendor's
//! single-use invitation for a customer ledger, the customer's counterparty
//! key registered through it, and the customer's signed statements about a
//! committed checkpoint (`balance`: agreed; `dispute`: not, from a named
//! delta).
//!
//! Every accepted key binding and statement is recorded in the log as an
//! item whose hash is `bvs_core::agreement::item_hash` (SHA-256 of the whole
//! signed note): it is a fact of the tenant whose content is the signed
//! note, so the sequencer appends it like any fact and it is provable by
//! the facts routes. The service keeps no identity, only the key.

use bvs_core::agreement::{self, CheckpointRef, Origin, Statement, StatementError};
use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::types::{CustomerId, Env, Period};
use serde::Serialize;
use worker::D1Database;

use crate::app::App;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::ids::{CheckpointId, TenantId};
use crate::ledger::{db, LogId, LogKey};
use crate::meter;
use crate::plan::Plan;
use crate::store::agreement::{self as agreements, AgreementRow, InvitationRow, KeyRow};
use crate::store::checkpoints::{self, CheckpointRow};
use crate::store::meters::{self, Meter};
use crate::store::CheckpointStatus;
use crate::{ids, views};

/// How long an invitation stays usable. // spec: silent; a week covers a
/// customer who opens it days later, and it is single-use anyway.
pub const INVITATION_TTL_MS: u64 = 7 * 24 * 60 * 60 * 1000;
/// Random base62 characters of an invitation token (~190 bits).
const INVITATION_TOKEN_CHARS: usize = 32;
/// The public page an invitation opens; the token rides in the fragment,
/// so it never reaches a server log.
pub const INVITATION_PAGE: &str = "/agree";

/// Statements one checkpoint can have, all keys and kinds together: a
/// customer's key signs one `balance` statement per checkpoint and may
/// name disputes, each a distinct statement, so the cap bounds what one
/// key holder can add to the vendor's log and to every public answer.
/// // spec: silent; docs/agreement.md "Limits"
pub const STATEMENTS_PER_CHECKPOINT_MAX: u64 = 20;

/// One page of a checkpoint's statements on the public answer.
pub struct StatementsPage {
    pub limit: u64,
    pub offset: u64,
}

pub use crate::store::events::EventKind;

fn token_prefix(env: Env) -> &'static str {
    match env {
        Env::Sandbox => "inv_test_",
        Env::Production => "inv_live_",
    }
}

/// A new invitation token: `inv_test_` / `inv_live_` (the environment),
/// the shard's number and `_`, then the random part. The token names its
/// shard so that opening it reads that one shard's database.
fn new_token(log: LogId) -> ApiResult<String> {
    Ok(format!(
        "{}{}_{}",
        token_prefix(log.env),
        log.shard,
        ids::random_token(INVITATION_TOKEN_CHARS)?
    ))
}

/// The shard a token names: its environment from the prefix, its shard
/// from the number after it (canonical decimal, below `shards(env)`). A
/// token without a number (issued before tokens named their shard) is
/// shard 0's, where every invitation lived before sharding. `None` for a
/// token this service could not have issued.
fn token_log(token: &str, shards: impl Fn(Env) -> u32) -> Option<LogId> {
    let (env, rest) = [Env::Sandbox, Env::Production]
        .into_iter()
        .find_map(|env| {
            token
                .strip_prefix(token_prefix(env))
                .map(|rest| (env, rest))
        })?;
    let shard = match rest.split_once('_') {
        None => 0,
        Some((n, _)) => {
            let canonical = n == "0" || (!n.is_empty() && !n.starts_with('0'));
            if !canonical || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            n.parse::<u32>().ok()?
        }
    };
    (shard < shards(env)).then(|| LogId::new(env, shard))
}

/// Where a key registration's Idempotency-Key lives: the shard its token
/// names, scoped by the token's hash. `None` for a token this service
/// could not have issued (the registration then says why).
pub fn token_scope(app: &App, token: &str) -> Option<(LogId, String)> {
    let log = token_log(token, |env| crate::ledger::shard::count(app, env))?;
    Some((log, format!("invitation:{}", token_hash(token).to_hex())))
}

/// Where a statement's Idempotency-Key lives: the shard of the log its
/// origin names, scoped by its ledger. `None` for a statement that cannot
/// be read (the submission then says why).
pub fn statement_scope(app: &App, signed: &str) -> Option<(LogId, String)> {
    let named = match agreement::read_unverified(signed).ok()? {
        Statement::Balance(b) => b.checkpoint,
        Statement::Dispute(d) => d.checkpoint,
        Statement::Key(_) => return None,
    };
    let log = log_of_origin(app, &named.origin).ok()?;
    Some((log, format!("ledger:{}", named.ledger.to_hex())))
}

/// What is stored of a token: its SHA-256, hex.
fn token_hash(token: &str) -> Hash32 {
    Hash32::digest(token.as_bytes())
}

fn invalid(message: &str) -> ApiError {
    ApiError::coded(ErrorCode::InvitationInvalid, message)
}

/// A refused statement, its reason named first.
pub fn rejected(e: &StatementError) -> ApiError {
    ApiError::coded(
        ErrorCode::StatementRejected,
        format!("Statement rejected ({}): {e}", e.reason()),
    )
}

/// The origin of a shard's log, as its signed heads name it.
fn origin(app: &App, log: LogId) -> ApiResult<Origin> {
    let text = LogKey::load(app, log)?.origin;
    Origin::parse(&text).map_err(|e| ApiError::internal(format!("log origin: {e}")))
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvitationView {
    pub invitation_url: String,
    pub token: String,
    pub customer_id: CustomerId,
    pub ledger_id: Hash32,
    pub origin: String,
    pub expires_at: String,
}

/// Who invites: the API key's tenant, its shard and plan.
pub struct Inviter<'a> {
    pub tenant_id: &'a TenantId,
    pub log: LogId,
    pub plan: Plan,
}

/// Issues a single-use invitation for `customer_id`'s ledger; only the
/// token's SHA-256 is stored. Counted against the plan's invitations per
/// month in the same batch (issue 25).
///
/// # Errors
/// 404 for a customer without a ledger; 402 past the plan's invitations.
pub async fn invite<'x>(
    app: &App,
    by: &Inviter<'_>,
    customer_id: &CustomerId,
    base_url: &str,
    extra: &'x dyn Fn(&InvitationView) -> ApiResult<Vec<crate::store::Query<'x>>>,
) -> ApiResult<InvitationView> {
    let (log, tenant_id) = (by.log, by.tenant_id);
    let db = db(app, log)?;
    let ledger = crate::ledgers::require_ledger(
        &db,
        tenant_id,
        customer_id,
        &bvs_core::types::Asset::Default,
    )
    .await?;
    let token = new_token(log)?;
    let row = InvitationRow {
        token_hash: token_hash(&token),
        tenant_id: tenant_id.clone(),
        customer_id: customer_id.clone(),
        ledger_id: ledger.ledger_id,
        created_at: app.now_ms,
        expires_at: app.now_ms + INVITATION_TTL_MS,
        used_at: None,
    };
    let view = InvitationView {
        invitation_url: format!("{base_url}{INVITATION_PAGE}#{token}"),
        token,
        customer_id: row.customer_id.clone(),
        ledger_id: row.ledger_id,
        origin: origin(app, log)?.as_str().to_string(),
        expires_at: views::iso(row.expires_at),
    };
    let period = meter::month(app.now_ms).to_string();
    let raises = [meter::monthly(
        tenant_id,
        Meter::Invitations,
        &period,
        by.plan,
    )];
    // The meter, the invitation and `extra` (an Idempotency-Key's claim and
    // answer) in one batch: a retried POST never makes a second invitation,
    // and a refused one leaves nothing behind.
    let mut statements = vec![
        meters::raise(&raises[0])?,
        agreements::insert_invitation(&row)?,
    ];
    statements.extend(extra(&view)?);
    meters::batch_within_caps(&db, statements, &raises)
        .await?
        .map_err(|m| meter::over(m, by.plan, log.env, app.now_ms))?;
    Ok(view)
}

/// The shard and live invitation row of a token: one read, of the shard
/// the token names (nothing scans the environment's shards).
async fn live_invitation(app: &App, token: &str) -> ApiResult<(LogId, D1Database, InvitationRow)> {
    let unknown = || invalid("Invitation token is not one this service issued");
    let log = token_log(token, |env| crate::ledger::shard::count(app, env)).ok_or_else(unknown)?;
    let db = db(app, log)?;
    let row = agreements::invitation(&db, &token_hash(token))
        .await?
        .ok_or_else(unknown)?;
    if row.used_at.is_some() {
        return Err(invalid(
            "Invitation was already used; ask the vendor for a new one",
        ));
    }
    if row.expires_at <= app.now_ms {
        return Err(invalid(
            "Invitation has expired; ask the vendor for a new one",
        ));
    }
    Ok((log, db, row))
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenedInvitation {
    pub origin: String,
    pub ledger_id: Hash32,
    pub expires_at: String,
    /// The key statement to sign, with `<verifier key>` to fill in.
    pub key_statement_template: String,
}

/// What the invitation page needs to build the key statement (does not
/// use the invitation up).
///
/// # Errors
/// 410 `invitation_invalid` for an unknown, used or expired token.
pub async fn open(app: &App, token: &str) -> ApiResult<OpenedInvitation> {
    let (log, _, row) = live_invitation(app, token).await?;
    let origin = origin(app, log)?;
    Ok(OpenedInvitation {
        key_statement_template: format!(
            "{} key\norigin {}\nledger {}\nkey <verifier key>\n",
            agreement::STATEMENT_FORMAT,
            origin.as_str(),
            row.ledger_id
        ),
        origin: origin.as_str().to_string(),
        ledger_id: row.ledger_id,
        expires_at: views::iso(row.expires_at),
    })
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyView {
    pub ledger_id: Hash32,
    pub counterparty_key: String,
    /// The binding's log item (a fact's contentHash).
    pub item_hash: Hash32,
    pub registered_at: String,
    pub status: &'static str,
    /// `null` for a ledger's first key; whether the key before it signed
    /// this binding (a rotation) or not (a change through an invitation).
    pub signed_by_previous: Option<bool>,
    /// For a change not signed by the previous key: what every receipt and
    /// public answer says of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl KeyView {
    fn from_row(k: &KeyRow, status: &'static str) -> KeyView {
        KeyView {
            ledger_id: k.ledger_id,
            counterparty_key: k.verifier_key.clone(),
            item_hash: k.item_hash,
            registered_at: views::iso(k.registered_at),
            status,
            signed_by_previous: k.signed_by_previous.map(|v| v == 1),
            warning: key_warning(k),
        }
    }
}

/// What receipts and public answers say of a key change the previous key
/// did not sign.
pub fn key_warning(k: &KeyRow) -> Option<String> {
    (k.signed_by_previous == Some(0)).then(|| {
        format!(
            "key changed on {}, not signed by the previous key: {} was registered through a new \
             invitation from the vendor",
            views::iso(k.registered_at),
            k.verifier_key
        )
    })
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatementView {
    /// `balance` (agreed) or `dispute`.
    pub kind: String,
    pub checkpoint_id: CheckpointId,
    pub period: String,
    pub merkle_root: Hash32,
    pub ledger_id: Hash32,
    pub counterparty_key: String,
    /// The statement's log item (a fact's contentHash).
    pub item_hash: Hash32,
    pub statement: String,
    pub recorded_at: String,
}

impl StatementView {
    fn from_row(a: &AgreementRow, c: &CheckpointRow) -> StatementView {
        StatementView {
            kind: a.kind.as_str().to_owned(),
            checkpoint_id: a.checkpoint_id.clone(),
            period: c.period.clone(),
            merkle_root: c.merkle_root,
            ledger_id: a.ledger_id,
            counterparty_key: a.verifier_key.clone(),
            item_hash: a.item_hash,
            statement: a.statement.clone(),
            recorded_at: views::iso(a.created_at),
        }
    }
}

/// The shard whose log a statement's origin names.
fn log_of_origin(app: &App, named: &Origin) -> ApiResult<LogId> {
    for log in crate::ledger::shard::all(app) {
        if &origin(app, log)? == named {
            return Ok(log);
        }
    }
    Err(rejected(&StatementError::OriginMismatch {
        expected: origin(app, LogId::new(Env::Sandbox, 0))?
            .as_str()
            .to_string(),
        got: named.as_str().to_string(),
    }))
}

/// The committed, single-customer checkpoint a statement names.
async fn named_checkpoint(
    db: &D1Database,
    key: &KeyRow,
    named: &CheckpointRef,
) -> ApiResult<CheckpointRow> {
    let root = &named.root;
    let found = checkpoints::by_root(db, root)
        .await?
        .into_iter()
        .filter(|c| {
            c.tenant_id == key.tenant_id && c.customer_id.customer() == Some(&key.customer_id)
        })
        .collect::<Vec<_>>();
    let committed = found
        .iter()
        .find(|c| c.status == CheckpointStatus::Committed)
        .cloned();
    match committed {
        Some(c) => Ok(c),
        None if found.is_empty() => Err(ApiError::NotFound(format!(
            "No checkpoint with merkleRoot {root} for this ledger"
        ))),
        None => Err(ApiError::Conflict(format!(
            "Checkpoint {root} is not committed yet; sign it once its checkpoint.verified arrives"
        ))),
    }
}

/// What a checkpoint of one customer says, as statements name it.
fn reference(
    app: &App,
    log: LogId,
    c: &CheckpointRow,
    ledger_id: &Hash32,
) -> ApiResult<CheckpointRef> {
    Ok(CheckpointRef {
        origin: origin(app, log)?,
        ledger: *ledger_id,
        period: Period::parse(&c.period)?,
        root: c.merkle_root,
        deltas: c.delta_count,
    })
}

/// [`reference`], and the checkpoint's closing balance read from D1.
async fn checkpoint_ref(
    app: &App,
    log: LogId,
    db: &D1Database,
    c: &CheckpointRow,
    ledger_id: &Hash32,
) -> ApiResult<(CheckpointRef, Amount)> {
    let reference = reference(app, log, c, ledger_id)?;
    let balance = agreements::balance_at_leaf(
        db,
        &c.tenant_id,
        (c.ledger_customer()?, &c.asset),
        c.to_index,
    )
    .await?;
    Ok((reference, balance))
}

mod keys;
pub use keys::register_key;

mod statements;
pub use statements::submit_statement;

mod inclusion;

mod public;
pub use public::{of_checkpoint, CheckpointAgreement};

mod receipt;
pub use receipt::{plan_receipt, ReceiptAgreementPlan};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
