//! A co-signed receipt, checked offline (`bvs-verify receipt`): the
//! receipt's `agreement` side names the committed checkpoint the receipt
//! answers for, the customer's key binding and the customer's signed
//! statements, each with its inclusion proof into the receipt's own signed
//! tree head. Checked here, with nothing but the receipt and the log's key:
//!
//! - `agreement.checkpoint`: the checkpoint is the receipt's own deltas
//!   (log origin of the signed head, period, merkleRoot = the root over the
//!   listed itemHashes, deltaCount = the deltas listed, balance = the
//!   receipt's finalBalance), and `balanceStatement` says exactly that;
//! - `agreement.key`: the key binding is self-signed, binds this ledger of
//!   this log to `counterpartyKey`, and is in the log;
//! - `agreement.statements[i]`: each statement is signed by that key,
//!   names the same checkpoint (a `balance` one agrees to the same
//!   balance), and is in the log.
//!
//! Each failure starts with its reason's name ([`StatementError::reason`]).

use super::{
    check, item_hash, named, statement_says, verify, verify_key_binding, CheckpointRef, KeyBinding,
    Origin, Statement, StatementError,
};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::merkle::{self, HashScheme};
use crate::note::{self, TreeHead};
use crate::receipt::{LoggedItem, Receipt, ReceiptAgreement, ReceiptKey, ReceiptStatement};
use crate::types::Period;
use crate::verify::{self, Check, Detail, VerificationReport};

/// The receipt's own checks ([`verify::verify_receipt`]) followed by its
/// agreement side's ([`receipt_checks`]), for a receipt saved from the API
/// (the whole answer or its `data`).
pub fn receipt_report(text: &str, trusted_public_key: Option<&str>) -> VerificationReport {
    let receipt = match verify::read_receipt_document(text) {
        Ok(r) => r,
        Err(e) => return VerificationReport::failure("parse", e.to_string()),
    };
    let mut report = verify::verify_receipt(&receipt, trusted_public_key);
    report
        .checks
        .extend(receipt_checks(&receipt, trusted_public_key));
    report.ok = report.checks.iter().all(|c| c.ok);
    report
}

/// The checks of a receipt's agreement side (none when it has none).
/// `trusted_public_key` is the log's pinned key; without it, the key the
/// receipt names (as [`verify::verify_receipt`] does).
pub fn receipt_checks(receipt: &Receipt, trusted_public_key: Option<&str>) -> Vec<Check> {
    let Some(a) = &receipt.agreement else {
        return Vec::new();
    };
    let key = trusted_public_key.unwrap_or(&receipt.proof.public_key);
    let head = note::verify_tree_head(&receipt.proof.tree_head, key).ok();
    let scheme = HashScheme::parse(&receipt.proof.hash_scheme).ok();
    let log = Log {
        head: head.as_ref(),
        scheme,
    };
    let mut checks = Vec::new();
    let reference = receipt_reference(receipt, a, head.as_ref());
    checks.push(check(
        "agreement.checkpoint".into(),
        checkpoint_check(a, &reference),
    ));
    let binding = key_check(a, reference.as_ref().ok(), &log);
    let key_ok = binding.is_ok();
    checks.push(check("agreement.key".into(), binding));
    // Every key of the ledger, oldest first, and which of them checked.
    let mut good_keys: Vec<&str> = Vec::new();
    if key_ok && a.keys.is_empty() {
        good_keys.extend(a.counterparty_key.as_deref());
    }
    for (i, k) in a.keys.iter().enumerate() {
        let previous = i
            .checked_sub(1)
            .map(|p| a.keys[p].counterparty_key.as_str());
        let last = i + 1 == a.keys.len();
        let r = listed_key_check(a, k, previous, last, reference.as_ref().ok(), &log);
        if r.is_ok() {
            good_keys.push(&k.counterparty_key);
        }
        checks.push(check(format!("agreement.keys[{i}]"), r));
    }
    for (i, s) in a.statements.iter().enumerate() {
        let r = statement_check(a, s, &good_keys, reference.as_ref(), &log);
        checks.push(check(format!("agreement.statements[{i}]"), r));
    }
    checks
}

/// `agreement.statements[i]`: signed by a checked key of the ledger, of
/// the kind listed, saying what the checkpoint shows, and in the log.
fn statement_check(
    a: &ReceiptAgreement,
    s: &ReceiptStatement,
    good_keys: &[&str],
    reference: Result<&(CheckpointRef, Amount), &String>,
    log: &Log<'_>,
) -> Detail {
    let counterparty = match s
        .counterparty_key
        .as_deref()
        .or(a.counterparty_key.as_deref())
    {
        Some(k) if good_keys.contains(&k) => k,
        Some(k) => {
            return Err(format!(
                "cannot check: the statement's key {k} is not a checked key of this ledger"
            ))
        }
        None => return Err("cannot check: the customer's key binding failed".into()),
    };
    let (reference, balance) = reference.map_err(Clone::clone)?;
    let statement = verify(&s.statement, counterparty).map_err(named)?;
    let listed = match s.kind.as_str() {
        "balance" => "balance",
        "dispute" => "dispute",
        "key" => "key",
        _ => "unknown",
    };
    if listed != statement.kind() {
        return Err(named(StatementError::WrongKind {
            expected: listed,
            got: statement.kind(),
        }));
    }
    let said = statement_says(&statement, reference, balance, counterparty, &s.recorded_at)
        .map_err(named)?;
    let logged = LoggedItem {
        item_hash: s.item_hash,
        leaf_index: s.leaf_index,
        inclusion_proof: s.inclusion_proof.clone(),
    };
    let at = log.includes(&s.statement, Some(&logged)).map_err(named)?;
    Ok(format!("{said}; {at}"))
}

/// That `statement` is a self-signed binding of `key` to the ledger and
/// log of the receipt's checkpoint (`reference`).
fn bound_key(
    statement: &str,
    key: &str,
    reference: Option<&(CheckpointRef, Amount)>,
) -> Result<KeyBinding, String> {
    let binding = verify_key_binding(statement).map_err(named)?;
    if binding.key() != key {
        return Err(named(StatementError::KeyMismatch {
            expected: key.to_owned(),
            got: binding.key().to_owned(),
        }));
    }
    let (r, _) = reference.ok_or("cannot check: the receipt's tree head did not verify")?;
    r.check(&CheckpointRef {
        origin: binding.origin.clone(),
        ledger: binding.ledger,
        ..r.clone()
    })
    .map_err(named)?;
    Ok(binding)
}

/// `agreement.keys[i]`: a self-signed binding of this ledger of this log,
/// in the log; the last is `counterpartyKey`; after the first, whether the
/// key before it signed it (a rotation by the customer) or not (a change
/// through the vendor's invitation alone, passed with a warning: the
/// receipt shows it, as the service must).
fn listed_key_check(
    a: &ReceiptAgreement,
    k: &ReceiptKey,
    previous: Option<&str>,
    last: bool,
    reference: Option<&(CheckpointRef, Amount)>,
    log: &Log<'_>,
) -> Detail {
    if last && a.counterparty_key.as_deref() != Some(k.counterparty_key.as_str()) {
        return Err("the last key listed is not counterpartyKey".into());
    }
    bound_key(&k.key_statement, &k.counterparty_key, reference)?;
    let at = log
        .includes(&k.key_statement, Some(&k.key_proof))
        .map_err(named)?;
    let Some(previous) = previous else {
        return Ok(format!(
            "the ledger's first key {} (registered through the vendor's invitation: trust on first use); {at}",
            k.counterparty_key
        ));
    };
    let signed = super::signed_by(&k.key_statement, previous).map_err(named)?;
    match (k.signed_by_previous, signed) {
        (_, true) => Ok(format!(
            "key {} replaced {previous}, which signed the change; {at}",
            k.counterparty_key
        )),
        (Some(true), false) => Err(format!(
            "the binding says the previous key {previous} signed it; it carries no such signature"
        )),
        (_, false) => Ok(format!(
            "WARNING: key changed on {}, not signed by the previous key {previous}: registered \
             through a new invitation from the vendor, {} is trusted only as much as the vendor; {at}",
            k.registered_at, k.counterparty_key
        )),
    }
}

/// The checkpoint as the receipt itself shows it: the signed head's log,
/// the agreement's ledger, the receipt's period (the agreement's when the
/// receipt covers the whole history), the root over the listed itemHashes,
/// their count, and the receipt's finalBalance.
fn receipt_reference(
    receipt: &Receipt,
    a: &ReceiptAgreement,
    head: Option<&TreeHead>,
) -> Result<(CheckpointRef, Amount), String> {
    let head = head.ok_or("cannot check: the receipt's tree head did not verify")?;
    let origin = Origin::parse(&head.origin).map_err(named)?;
    let period_text = receipt.period.as_deref().unwrap_or(&a.checkpoint.period);
    let period = Period::parse(period_text).map_err(|e| format!("period: {}", e.reason))?;
    let hashes: Vec<Hash32> = receipt.deltas.iter().map(|d| d.item_hash).collect();
    Ok((
        CheckpointRef {
            origin,
            ledger: a.checkpoint.ledger_id,
            period,
            root: merkle::root(&hashes),
            deltas: receipt.deltas.len() as u64,
        },
        receipt.final_balance,
    ))
}

/// `agreement.checkpoint`: what the agreement side says of the checkpoint
/// (and the balance statement it offers for signing) is the receipt's.
fn checkpoint_check(
    a: &ReceiptAgreement,
    reference: &Result<(CheckpointRef, Amount), String>,
) -> Detail {
    let (r, balance) = reference.as_ref().map_err(Clone::clone)?;
    let c = &a.checkpoint;
    let named_ref = CheckpointRef {
        origin: Origin::parse(&c.origin).map_err(named)?,
        ledger: c.ledger_id,
        period: Period::parse(&c.period).map_err(|e| format!("period: {}", e.reason))?,
        root: c.merkle_root,
        deltas: c.delta_count,
    };
    r.check(&named_ref).map_err(named)?;
    if a.balance != *balance {
        return Err(named(StatementError::BalanceMismatch {
            expected: *balance,
            got: a.balance,
        }));
    }
    let offered = |e: StatementError| format!("{}: balanceStatement: {e}", e.reason());
    match Statement::parse(&a.balance_statement).map_err(offered)? {
        Statement::Balance(b) => {
            r.check(&b.checkpoint).map_err(offered)?;
            if b.balance != *balance {
                return Err(offered(StatementError::BalanceMismatch {
                    expected: *balance,
                    got: b.balance,
                }));
            }
        }
        other => {
            return Err(offered(StatementError::WrongKind {
                expected: "balance",
                got: other.kind(),
            }))
        }
    }
    Ok(format!(
        "the receipt is checkpoint {} of ledger {}: period {}, merkleRoot {}, {} deltas, balance {balance} (log {})",
        a.checkpoint_id,
        r.ledger,
        r.period,
        r.root,
        r.deltas,
        r.origin.as_str()
    ))
}

/// `agreement.key`: no key at all (not co-signed, nothing to check), or a
/// self-signed binding of this ledger of this log to `counterpartyKey`,
/// in the log.
fn key_check(
    a: &ReceiptAgreement,
    reference: Option<&(CheckpointRef, Amount)>,
    log: &Log<'_>,
) -> Detail {
    let (key, statement) =
        match (&a.counterparty_key, &a.key_statement) {
            (None, None) if a.statements.is_empty() => return Ok(
                "no customer key is in the log at this tree head: the checkpoint is not co-signed"
                    .into(),
            ),
            (Some(k), Some(s)) => (k, s),
            _ => {
                return Err(named(StatementError::NotInLog(
                    "the agreement lists statements without both counterpartyKey and keyStatement"
                        .into(),
                )))
            }
        };
    let binding = bound_key(statement, key, reference)?;
    let at = log
        .includes(statement, a.key_proof.as_ref())
        .map_err(named)?;
    Ok(format!(
        "ledger {} has the customer's key {key} (self-signed); {at}",
        binding.ledger
    ))
}

/// The receipt's signed tree head and hash scheme, as checked.
struct Log<'a> {
    head: Option<&'a TreeHead>,
    scheme: Option<HashScheme>,
}

impl Log<'_> {
    /// That the signed note `signed` is the log item `proof` names, and
    /// that item is in the signed tree.
    fn includes(&self, signed: &str, proof: Option<&LoggedItem>) -> Result<String, StatementError> {
        let proof =
            proof.ok_or_else(|| StatementError::NotInLog("no inclusion proof is given".into()))?;
        let item = item_hash(signed);
        if !item.ct_eq(&proof.item_hash) {
            return Err(StatementError::ItemHashMismatch {
                expected: proof.item_hash,
                got: item,
            });
        }
        let head = self.head.ok_or_else(|| {
            StatementError::NotInLog("cannot check: the tree head did not verify".into())
        })?;
        let scheme = self
            .scheme
            .ok_or_else(|| StatementError::NotInLog("cannot check: unknown hashScheme".into()))?;
        scheme
            .verify_inclusion(
                &proof.inclusion_proof,
                proof.leaf_index,
                head.size,
                &head.root,
                &item,
            )
            .map_err(|e| StatementError::NotInLog(format!("log item {item}: {e}")))?;
        Ok(format!(
            "log item {item} is leaf {} of the signed tree of size {}",
            proof.leaf_index, head.size
        ))
    }
}

// The vectors are signed here, so they need the signing half.
#[cfg(all(test, feature = "server"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
