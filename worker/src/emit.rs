//! Submit: how a delta enters its ledger. It is prepared (anchor id, item
//! hash), written with its submission as QUEUED in one D1 batch (with the
//! quota, the storage meter and the Idempotency-Key claim), and the
//! environment's sequencer is rung after the response. D1 is written
//! before the doorbell.

pub mod prepare;

use std::collections::BTreeMap;

use bvs_core::hash::Hash32;
use bvs_core::merkle;
use bvs_core::types::CustomerId;

use worker::D1Database;

use self::prepare::{items_root, Prepared};
use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::idempotency::{Claim, Submitted};
use crate::ids;
use crate::ids::{AnchorId, ContractId, SubmissionId, TenantId};
use crate::ledger::{db, doorbell, LogId};
use crate::ledgers::ledger_id;
use crate::plan::{Account, Plan};
use crate::profile::{EmitProbe, Fault};
use crate::quota;
use crate::store::deltas;
use crate::store::emit::{self as emit_store, EmitOutcome, EmitWrite, Estimate};
use crate::store::meters::{self, Meter};
use crate::store::submissions::{NewDelta, NewSubmission};
use crate::views::{anchor_status, BatchMember, DeltaRecord};

/// Gives prepared deltas (one submission's) their per-ledger roots: each
/// delta's is the RFC 9162 root over the itemHashes of its own ledger's
/// deltas in the submission, in position order (the items root when the
/// submission holds one ledger). That root is what the customer is given
/// (derive, receipts, `delta.verified`), so it opens no other customer's
/// deltas. Nothing of it depends on the tenant: an emit computes it before
/// its key is read, whose read indexes it (issue 42).
pub fn ledger_roots(prepared: &mut [Prepared]) {
    // Each ledger's root once: a batch of n deltas to one customer hashed
    // its n items n times when every delta computed its own ledger's root.
    let mut items: BTreeMap<&str, Vec<Hash32>> = BTreeMap::new();
    for p in prepared.iter() {
        items
            .entry(p.row.customer_id.as_str())
            .or_default()
            .push(p.item);
    }
    let roots: BTreeMap<String, Hash32> = items
        .into_iter()
        .map(|(customer, own)| (customer.to_string(), merkle::root(&own)))
        .collect();
    for p in prepared.iter_mut() {
        if let Some(root) = roots.get(p.row.customer_id.as_str()) {
            p.row.ledger_root = *root;
        }
    }
}

/// Gives prepared deltas (one submission's, after [`ledger_roots`]) the
/// ledger ids of `tenant_id`'s customers.
pub fn for_tenant(prepared: &mut [Prepared], tenant_id: &TenantId) {
    for p in prepared.iter_mut() {
        p.row.ledger_id = ledger_id(tenant_id, &p.row.customer_id);
    }
}

/// Every distinct proof root of a submission of `prepared` (after
/// [`ledger_roots`]): its items root `items_root` and its ledgers' roots.
pub fn roots_of(prepared: &[Prepared], items_root: &Hash32) -> Vec<Hash32> {
    let mut roots: Vec<Hash32> = prepared.iter().map(|p| p.row.ledger_root).collect();
    roots.push(*items_root);
    roots.sort_unstable();
    roots.dedup();
    roots
}

pub use crate::store::submissions::SubmissionKind;

/// The prefix of a submission id of `kind`.
fn id_prefix(kind: SubmissionKind) -> &'static str {
    match kind {
        SubmissionKind::Single => "sub",
        SubmissionKind::Batch => "bat",
    }
}

/// Who submits: the API key's tenant, its shard of the key's environment,
/// and its contract.
pub struct Submitter<'a> {
    pub tenant_id: &'a TenantId,
    pub log: LogId,
    pub contract_id: &'a ContractId,
    /// Whose storage ceiling the deltas count against.
    pub plan: Plan,
    /// The submission's proof root is in the control database's index
    /// already (written with the key's read,
    /// `auth::authenticate_emit`).
    pub root_indexed: bool,
    /// The emit's DEV_MODE profiling stops and fault points
    /// (`crate::profile`; all pass in production).
    pub probe: EmitProbe,
}

impl<'a> Submitter<'a> {
    pub fn new(
        (tenant_id, log, plan): (&'a TenantId, LogId, Plan),
        contract_id: &'a ContractId,
        root_indexed: bool,
        probe: EmitProbe,
    ) -> Self {
        Submitter {
            tenant_id,
            log,
            contract_id,
            plan,
            root_indexed,
            probe,
        }
    }
}

/// What an answer carries in place of `estimatedVerifiedDeltas` until the
/// write's batch has counted it (`u64::MAX`, never a real count).
pub const ESTIMATE_PENDING: u64 = u64::MAX;
const ESTIMATE_PREFIX: &str = "\"estimatedVerifiedDeltas\":";
static DEFAULT_ASSET: bvs_core::types::Asset = bvs_core::types::Asset::Default;

/// Writes the submission and its deltas (QUEUED) in one atomic batch on the
/// tenant's shard (`store::emit`) with the monthly quota, the storage
/// meter and, under an Idempotency-Key, the claim and its stored answer;
/// with it, unless the key's read did already ([`Submitter::root_indexed`]),
/// indexes the proof root ([`with_root_index`]); after the response, rings
/// the sequencer's doorbell. A lost ring only delays verification (the sweeper
/// re-rings for QUEUED items); a lost index row is written again by the
/// sequencer when it appends the submission. `respond` builds the answer
/// from the submission id and items root before the write, so that under a
/// claim the answer is stored in the write's own batch; for a single emit
/// (`estimate_for` names its customer) the answer carries
/// [`ESTIMATE_PENDING`] as `estimatedVerifiedDeltas`, which the batch
/// replaces with the customer's verified and queued deltas.
///
/// # Errors
/// 402 `plan_limit_exceeded` past the monthly quota, 402
/// `storage_limit_reached` past the plan's storage ceiling, or D1 errors;
/// nothing is written or counted then.
pub async fn submit<R>(
    app: &App,
    by: &Submitter<'_>,
    kind: SubmissionKind,
    prepared: &[Prepared],
    claim: Option<&Claim>,
    estimate_for: Option<&CustomerId>,
    respond: R,
) -> ApiResult<Submitted>
where
    R: FnOnce(&SubmissionId, &Hash32) -> ApiResult<(u16, String)>,
{
    let claimed = claim.is_some();
    by.probe.fault_point(Fault::AfterQuota, claimed).await?;
    let root = items_root(prepared);
    let submission_id = SubmissionId::from_text(ids::new_id(id_prefix(kind))?);
    let (status, text) = respond(&submission_id, &root)?;
    if by.probe.answers_unwritten() {
        return Ok(Submitted::Answer(status, text));
    }
    let rows: Vec<&NewDelta> = prepared.iter().map(|p| &p.row).collect();
    let submission = new_submission(app, by, kind, (&submission_id, &root), prepared.len());
    let account = Account {
        tenant_id: by.tenant_id,
        env: by.log.env,
        plan: by.plan,
    };
    let period = quota::period(app.now_ms).to_string();
    let count = prepared.len() as u64;
    // The deltas' bytes count against the storage ceiling in the same batch.
    let stored = rows.iter().map(|d| d.stored_bytes()).sum();
    let placeholder = format!("{ESTIMATE_PREFIX}{ESTIMATE_PENDING}");
    let backlog_cap = crate::meter::backlog_cap(app, by.plan);
    let write = EmitWrite {
        submission: &submission,
        deltas: &rows,
        raises: [
            quota::raise(&account, &period, count),
            crate::meter::bytes(by.tenant_id, stored, by.plan),
            crate::meter::backlog(by.tenant_id, count, backlog_cap),
        ],
        claim: claim.map(|c| c.new_claim(status, &text)),
        estimate: estimate_for.map(|customer_id| Estimate {
            customer_id,
            asset: prepared.first().map_or(&DEFAULT_ASSET, |p| &p.row.asset),
            text: &placeholder,
            prefix: ESTIMATE_PREFIX,
        }),
    };
    let ledger = db(app, by.log)?;
    let estimated = match write_indexed(app, by, &ledger, &write, prepared).await? {
        EmitOutcome::Written { estimated } => estimated,
        EmitOutcome::Claimed(held) => return Ok(Submitted::Claimed(held)),
        EmitOutcome::Refused(m) => {
            return Err(refusal(app, (by, &account), &ledger, m, (count, backlog_cap)).await?)
        }
        EmitOutcome::AssetPrecision => return Err(ApiError::internal("asset precision")),
    };
    by.probe.fault_point(Fault::AfterWrite, claimed).await?;
    if by.probe.rings() {
        doorbell::ring(app, by.log).await;
    }
    let text = if estimate_for.is_some() {
        text.replace(&placeholder, &format!("{ESTIMATE_PREFIX}{estimated}"))
    } else {
        text
    };
    Ok(Submitted::Answer(status, text))
}

/// The 400 for deltas naming an asset code with another precision than
/// the one the tenant first used it with (nothing was written): each such
/// delta's `asset` field, with the precision its code keeps.
async fn precision_refusal(
    ledger: &D1Database,
    tenant_id: &TenantId,
    prepared: &[Prepared],
) -> ApiResult<ApiError> {
    let known = crate::store::assets::of_tenant(ledger, tenant_id).await?;
    let mut problems = Vec::new();
    let mut first_seen: BTreeMap<&str, u32> = BTreeMap::new();
    for p in prepared {
        let Some(code) = p.row.asset.code() else {
            continue;
        };
        let precision = p.row.asset.precision();
        let kept = known
            .iter()
            .find(|a| a.code == code)
            .map(|a| a.precision)
            .unwrap_or(*first_seen.entry(code).or_insert(precision));
        if kept != precision {
            problems.push(crate::error::FieldProblem::new(
                &p.asset_field,
                format!("asset {code} has precision {kept} in this tenant (first used as {code}/{kept}); {code}/{precision} is refused"),
            ));
        }
    }
    if problems.is_empty() {
        // Another request registered the code meanwhile and the read
        // came after it: still, this write was refused.
        problems.push(crate::error::FieldProblem::new(
            "asset",
            "names a precision other than the one its code was first used with in this tenant",
        ));
    }
    Ok(ApiError::Validation(problems))
}

/// The submission row of `count` deltas under `id`, over their items root.
fn new_submission<'a>(
    app: &App,
    by: &Submitter<'a>,
    kind: SubmissionKind,
    (id, root): (&'a SubmissionId, &'a Hash32),
    count: usize,
) -> NewSubmission<'a> {
    NewSubmission {
        id,
        tenant_id: by.tenant_id,
        contract_id: by.contract_id,
        kind,
        items_root: root,
        item_count: count as u64,
        received_at: app.now_ms,
    }
}

/// The answer to an emit of `count` deltas that `meter` refused (nothing
/// was written): 402 past the monthly quota or the storage ceiling, 429
/// `verification_backlog` past the backlog's bound `backlog_cap`.
async fn refusal(
    app: &App,
    (by, account): (&Submitter<'_>, &Account<'_>),
    ledger: &D1Database,
    meter: Meter,
    (count, backlog_cap): (u64, u64),
) -> ApiResult<ApiError> {
    Ok(match meter {
        Meter::Deltas => quota::exceeded(ledger, account, count, app.now_ms).await?,
        Meter::Backlog => {
            let used = meters::used_of(ledger, by.tenant_id, Meter::Backlog, "").await?;
            crate::meter::backlogged(by.plan, by.log.env, backlog_cap, (used, count))
        }
        m => crate::meter::over(m, by.plan, by.log.env, app.now_ms),
    })
}

/// The write's batch and, alongside it (not after it: one more call, no
/// more sequential trips), the proof-root index rows in the control
/// database: the items root and, for a batch over several ledgers, each
/// ledger's root.
/// A refusal of a named asset's precision becomes its 400 here.
async fn write_indexed(
    app: &App,
    by: &Submitter<'_>,
    ledger: &D1Database,
    write: &EmitWrite<'_>,
    prepared: &[Prepared],
) -> ApiResult<EmitOutcome> {
    let outcome = if by.root_indexed || !by.probe.indexes() {
        emit_store::write(ledger, write).await?
    } else {
        let roots = roots_of(prepared, write.submission.items_root);
        let written = emit_store::write(ledger, write);
        crate::ledger::roots::with_roots_index(app, by.log, &roots, written).await?
    };
    match outcome {
        EmitOutcome::AssetPrecision => {
            Err(precision_refusal(ledger, by.tenant_id, prepared).await?)
        }
        outcome => Ok(outcome),
    }
}

/// A delta as the status route shows it: its record, the hash of the
/// signed tree head that first includes it (`txHash`), and, for a batch,
/// its siblings.
///
/// # Errors
/// 404 for an anchor id this tenant does not have.
pub async fn status(
    app: &App,
    tenant_id: &TenantId,
    log: LogId,
    anchor_id: &AnchorId,
) -> ApiResult<DeltaRecord> {
    let db = db(app, log)?;
    // One round trip: the delta, its tree head and its submission's deltas.
    let read = deltas::status(&db, tenant_id, anchor_id).await?;
    let row = read
        .delta
        .ok_or_else(|| ApiError::NotFound(format!("No delta with anchorId {anchor_id}")))?;
    let tx_hash = read.head.map(|h| h.note_hash);
    let siblings = read.siblings;
    let batch = (siblings.len() > 1).then(|| {
        siblings
            .iter()
            .map(|d| BatchMember {
                anchor_id: d.anchor_id.clone(),
                customer_id: d.customer_id.clone(),
                delta: d.delta,
                item_hash: d.item_hash,
                status: anchor_status(d.status),
            })
            .collect::<Vec<_>>()
    });
    let mut data = DeltaRecord::from_row(&row, tx_hash)?;
    data.status = anchor_status(row.status);
    data.batch_id = batch.as_ref().map(|_| row.submission_id.clone());
    data.delta_count = batch.as_ref().map(Vec::len);
    data.deltas = batch;
    data.witnessed = (row.status == crate::store::ItemStatus::Verified).then_some(read.witnessed);
    Ok(data)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bvs_core::amount::Amount;
    use bvs_core::types::CustomerId;

    fn delta(customer: &str, n: u8) -> Prepared {
        let item = Hash32::digest(&[n]);
        Prepared {
            row: NewDelta {
                anchor_id: AnchorId::from_text(format!("anc_{n}")),
                customer_id: CustomerId::parse(customer).unwrap(),
                ledger_id: Hash32([0; 32]),
                position: u64::from(n),
                item_hash: item,
                delta: Amount::parse("1").unwrap(),
                delta_text: "1".into(),
                asset: bvs_core::types::Asset::Default,
                reason: "r".to_string(),
                reference_id: None,
                metadata: None,
                declared_at: 0,
                ledger_root: Hash32([0; 32]),
                conditions: None,
            },
            item,
            delta: Amount::parse("1").unwrap(),
            asset_field: "asset".into(),
        }
    }

    /// Each delta gets the root over its own ledger's items of the
    /// submission, in position order, whatever the interleaving.
    #[test]
    fn each_delta_gets_its_own_ledgers_root() {
        let mut batch: Vec<Prepared> = (0..7)
            .map(|n| delta(if n % 3 == 0 { "a" } else { "b" }, n))
            .collect();
        ledger_roots(&mut batch);
        for_tenant(&mut batch, &"ten_1".into());
        let of = |c: &str| -> Hash32 {
            let own: Vec<Hash32> = batch
                .iter()
                .filter(|p| p.row.customer_id.as_str() == c)
                .map(|p| p.item)
                .collect();
            merkle::root(&own)
        };
        let (a, b) = (of("a"), of("b"));
        assert_ne!(a, b);
        for p in &batch {
            let want = if p.row.customer_id.as_str() == "a" {
                a
            } else {
                b
            };
            assert_eq!(p.row.ledger_root, want);
            assert_eq!(
                p.row.ledger_id,
                ledger_id(&"ten_1".into(), &p.row.customer_id)
            );
        }
    }
}
