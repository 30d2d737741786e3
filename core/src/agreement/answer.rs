//! A public verify answer's agreement side: the ledger's key bindings and
//! the statements signed with them, against the checkpoint the answer
//! shows.

use super::{
    check, named, signed_by, statement_says, verify, verify_key_binding, CheckpointRef, Origin,
    Statement,
};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::json;
use crate::types::Period;
use crate::verify::{Check, Detail, VerificationReport};

/// What a public verify answer says about a checkpoint's agreement side
/// (its `agreement` field) and the checkpoint itself, as read by a client.
pub struct AnswerAgreement<'a> {
    /// The log's origin: the name of the log key the client pinned.
    pub log_origin: &'a str,
    /// The proof root asked for (the checkpoint's merkleRoot).
    pub root: &'a Hash32,
    /// The answer's `summary.period` and `summary.itemCount`.
    pub period: &'a str,
    pub item_count: u64,
    pub ledger_id: &'a str,
    pub counterparty_key: &'a str,
    pub key_statement: &'a str,
    /// The service's `balanceStatement` (unsigned text): its balance is
    /// what a `balance` statement must agree to.
    pub balance_statement: &'a str,
    /// Each statement's signed note, `recordedAt` and the key it names
    /// (`None`: `counterparty_key`).
    pub statements: Vec<(&'a str, &'a str, Option<&'a str>)>,
    /// Every key binding of the ledger, oldest first (empty: the current
    /// one only, as answers from before keys could change).
    pub keys: Vec<AnswerKey<'a>>,
}

/// One key binding of a ledger, as a public answer lists it.
pub struct AnswerKey<'a> {
    pub counterparty_key: &'a str,
    pub key_statement: &'a str,
    pub registered_at: &'a str,
}

/// The checks of a public answer's agreement side: `agreement.key` (the
/// key binding is self-signed and names this log and ledger) and one
/// `agreement.statements[i]` per statement (signed by that key, naming
/// this log, ledger, period, merkleRoot and delta count; a balance
/// statement agrees to the checkpoint's balance).
pub fn answer_agreement_checks(a: &AnswerAgreement<'_>) -> Vec<Check> {
    let mut checks = Vec::new();
    let reference = answer_reference(a);
    let binding = key_check(a, &reference);
    let key_ok = binding.is_ok();
    checks.push(check("agreement.key".into(), binding));
    let mut good: Vec<&str> = Vec::new();
    if key_ok && a.keys.is_empty() {
        good.push(a.counterparty_key);
    }
    for (i, k) in a.keys.iter().enumerate() {
        let r = listed_key_check(a, i, k, &reference);
        if r.is_ok() {
            good.push(k.counterparty_key);
        }
        checks.push(check(format!("agreement.keys[{i}]"), r));
    }
    for (i, (signed, at, key)) in a.statements.iter().enumerate() {
        let key = key.unwrap_or(a.counterparty_key);
        let r = statement_check(signed, at, key, &good, &reference);
        checks.push(check(format!("agreement.statements[{i}]"), r));
    }
    checks
}

/// The checkpoint the answer shows and the balance its service statement
/// names: what every key binding and statement must agree with.
fn answer_reference(a: &AnswerAgreement<'_>) -> Result<(CheckpointRef, Amount), String> {
    let origin = Origin::parse(a.log_origin).map_err(named)?;
    let ledger = Hash32::parse(a.ledger_id).map_err(|e| format!("ledgerId: {e}"))?;
    let period = Period::parse(a.period).map_err(|e| format!("period: {}", e.reason))?;
    let balance = match Statement::parse(a.balance_statement).map_err(named)? {
        Statement::Balance(b) => b.balance,
        other => return Err(format!("balanceStatement is a {} statement", other.kind())),
    };
    Ok((
        CheckpointRef {
            origin,
            ledger,
            period,
            root: *a.root,
            deltas: a.item_count,
        },
        balance,
    ))
}

/// `agreement.key`: the current binding is self-signed, names the key
/// shown, and this log and ledger.
fn key_check(
    a: &AnswerAgreement<'_>,
    reference: &Result<(CheckpointRef, Amount), String>,
) -> Detail {
    let b = verify_key_binding(a.key_statement).map_err(named)?;
    let r = reference.as_ref().map_err(Clone::clone)?;
    if b.key() != a.counterparty_key {
        return Err("the key binding names another key than the counterpartyKey shown".into());
    }
    r.0.check(&CheckpointRef {
        origin: b.origin.clone(),
        ledger: b.ledger,
        ..r.0.clone()
    })
    .map_err(named)?;
    Ok(format!(
        "ledger {} has the customer's key {} (self-signed)",
        a.ledger_id, a.counterparty_key
    ))
}

/// `agreement.keys[i]`: a self-signed binding of this log and ledger;
/// after the first, whether the key before it signed the change.
fn listed_key_check(
    a: &AnswerAgreement<'_>,
    i: usize,
    k: &AnswerKey<'_>,
    reference: &Result<(CheckpointRef, Amount), String>,
) -> Detail {
    let b = verify_key_binding(k.key_statement).map_err(named)?;
    let r = reference.as_ref().map_err(Clone::clone)?;
    if b.key() != k.counterparty_key {
        return Err("the key binding names another key than the one listed".into());
    }
    r.0.check(&CheckpointRef {
        origin: b.origin.clone(),
        ledger: b.ledger,
        ..r.0.clone()
    })
    .map_err(named)?;
    let Some(previous) = i.checked_sub(1).map(|p| a.keys[p].counterparty_key) else {
        return Ok(format!(
            "the ledger's first key {} (trust on first use, through the vendor's invitation)",
            k.counterparty_key
        ));
    };
    Ok(if signed_by(k.key_statement, previous).map_err(named)? {
        format!(
            "key {} replaced {previous}, which signed the change",
            k.counterparty_key
        )
    } else {
        format!(
            "WARNING: key changed on {}, not signed by the previous key {previous}",
            k.registered_at
        )
    })
}

/// `agreement.statements[i]`: signed by a checked key of the ledger, and
/// saying what the checkpoint shows.
fn statement_check(
    signed: &str,
    at: &str,
    key: &str,
    good: &[&str],
    reference: &Result<(CheckpointRef, Amount), String>,
) -> Detail {
    if !good.contains(&key) {
        return Err(format!(
            "the statement's key {key} is not a checked key of this ledger"
        ));
    }
    let (r, balance) = reference.as_ref().map_err(Clone::clone)?;
    let statement = verify(signed, key).map_err(named)?;
    statement_says(&statement, r, balance, key, at).map_err(named)
}

/// A public verify answer's agreement side checked from its text (the
/// whole answer or its `data`), read with [`crate::json`]: the fields
/// [`AnswerAgreement`] takes, then [`answer_agreement_checks`] against the
/// log `log_origin` (the name of the key the client pinned). What the
/// verify page runs (issue 41: one verifier, no checks in TypeScript).
/// No checks when the answer has no agreement side.
pub fn answer_agreement_report(answer_text: &str, log_origin: &str) -> VerificationReport {
    let value = match json::parse(answer_text) {
        Ok(v) => v,
        Err(e) => return VerificationReport::failure("agreement", e.to_string()),
    };
    let data = crate::verify::unwrap_envelope(&value);
    let Some(agreement) = member(data, "agreement") else {
        return VerificationReport::new();
    };
    let summary = member(data, "summary");
    let counterparty_key = text(Some(agreement), "counterpartyKey");
    if counterparty_key.is_empty() {
        return VerificationReport::new();
    }
    let Ok(root) = Hash32::parse(text(summary, "proofRoot")) else {
        return VerificationReport::failure(
            "agreement.key",
            "no proofRoot to check the agreement against",
        );
    };
    let item_count = match summary.and_then(|s| member(s, "itemCount")) {
        Some(json::Value::Number(n)) => n.as_u64().unwrap_or(u64::MAX),
        _ => u64::MAX,
    };
    let [statements, keys] = [
        ("statements", ["statement", "recordedAt", "counterpartyKey"]),
        ("keys", ["counterpartyKey", "keyStatement", "registeredAt"]),
    ]
    .map(|(k, names)| rows(agreement, k, names));
    let (period, key_statement, balance_statement, ledger_id) = (
        text(summary, "period"),
        text(Some(agreement), "keyStatement"),
        text(Some(agreement), "balanceStatement"),
        text(Some(agreement), "ledgerId"),
    );
    let checks = answer_agreement_checks(&AnswerAgreement {
        log_origin,
        root: &root,
        period,
        item_count,
        ledger_id,
        counterparty_key,
        key_statement,
        balance_statement,
        statements: statements
            .iter()
            .map(|&[s, at, k]| (s, at, (!k.is_empty()).then_some(k)))
            .collect(),
        keys: keys
            .iter()
            .map(|&[k, s, at]| AnswerKey {
                counterparty_key: k,
                key_statement: s,
                registered_at: at,
            })
            .collect(),
    });
    VerificationReport {
        ok: checks.iter().all(|c| c.ok),
        checks,
    }
}

/// The member `k` of an object.
fn member<'a>(v: &'a json::Value, k: &str) -> Option<&'a json::Value> {
    v.as_object().and_then(|o| o.get(k))
}

/// The text member `k` of `v`, or empty.
fn text<'a>(v: Option<&'a json::Value>, k: &str) -> &'a str {
    match v.and_then(|v| member(v, k)) {
        Some(json::Value::String(s)) => s,
        _ => "",
    }
}

/// Three text members of each object of the array `k` of `v`.
fn rows<'a>(v: &'a json::Value, k: &str, names: [&str; 3]) -> Vec<[&'a str; 3]> {
    match member(v, k) {
        Some(json::Value::Array(items)) => items
            .iter()
            .map(|o| names.map(|n| text(Some(o), n)))
            .collect(),
        _ => Vec::new(),
    }
}
