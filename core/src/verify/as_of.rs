//! A balance as of a moment (issue 43, docs/balance.md "As of"): derive's
//! `asOf` answer and the proof a client checks offline, with no replay of
//! what the proof does not list.
//!
//! Basis `verified` (by blockTimestamp): the proof lists the ledger's
//! deltas from a starting position (genesis, or the position
//! `proof.from` names with the balance the service stored there) through
//! the boundary delta (the last verified at or before `at`), and the next
//! delta of the ledger (verified after `at`: where the boundary falls),
//! each with its inclusion into the signed head. Basis `declared` (by
//! declaredTimestamp): the proof lists every verified delta of the ledger
//! at the head it names, from genesis; the balance is the sum of those
//! declared at or before `at`, and may change as late-declared deltas
//! arrive.

use serde::{Deserialize, Serialize};

use super::{key_check, scheme_check, Detail, KeyWords, VerificationReport, UNKNOWN_SCHEME};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::item::{item_hash, DeltaContent};
use crate::json::{Fields, ReadError, Value};
use crate::merkle::{HashScheme, LeafIndex};
use crate::note::{self, TreeHead};
use crate::time::parse_iso_ms;

/// Which moment of a delta `asOf` compares with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AsOfBasis {
    /// Its blockTimestamp: when the log included it (the default).
    Verified,
    /// Its declaredTimestamp: the moment the vendor gave it.
    Declared,
}

impl AsOfBasis {
    pub fn as_str(self) -> &'static str {
        match self {
            AsOfBasis::Verified => "verified",
            AsOfBasis::Declared => "declared",
        }
    }
}

/// A delta as an as-of proof lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AsOfDelta {
    pub anchor_id: String,
    pub item_hash: Hash32,
    pub delta: Amount,
    pub ledger_seq: u64,
    pub block_timestamp: String,
    pub declared_timestamp: String,
    pub leaf_index: LeafIndex,
    #[serde(default)]
    pub inclusion_proof: Vec<Hash32>,
    /// The hashed content while retention keeps it, which binds the
    /// amount and declaredTimestamp to the item hash; `None` once purged.
    #[serde(default)]
    pub raw: Option<DeltaContent>,
}

/// Where a proof's listing starts: after `sequence` deltas, at `balance`
/// (genesis: 0 and 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AsOfFrom {
    pub sequence: u64,
    pub balance: Amount,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AsOfProof {
    pub hash_scheme: String,
    /// The signed tree head (C2SP signed note) every listed delta is
    /// proven into, and the head a `declared` answer was computed at.
    pub tree_head: String,
    pub public_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witnessed: Option<bool>,
    pub from: AsOfFrom,
    pub deltas: Vec<AsOfDelta>,
    /// `verified`: the delta after the boundary (none when the boundary is
    /// the ledger's latest at the head).
    #[serde(default)]
    pub next: Option<AsOfDelta>,
    /// `declared`: the ledger's verified deltas at the head (the listing
    /// holds them all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_deltas: Option<u64>,
}

/// Derive's `asOf` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AsOf {
    /// The moment asked for (ISO 8601 UTC, milliseconds).
    pub at: String,
    pub basis: AsOfBasis,
    pub balance: Amount,
    /// The deltas the balance includes.
    pub deltas_count: u64,
    /// The last delta it includes (by the basis' time, then ledger
    /// order); `None` when it includes none.
    pub last_delta: Option<String>,
    pub proof: AsOfProof,
}

/// Most deltas a `verified` proof lists before its boundary, and a
/// `declared` proof in all.
pub const AS_OF_PROOF_DELTAS_MAX: u64 = 100;
pub const AS_OF_DECLARED_DELTAS_MAX: u64 = 5_000;

const KEY_WORDS: KeyWords = KeyWords {
    same: "the proof names the trusted key",
    other: [
        "the proof names key ",
        ", the trusted key is ",
        "; checking against the trusted key",
    ],
    unpinned: "not pinned: using the key inside the proof; compare it with the log's published key",
};

/// Reads an as-of answer: derive's whole answer, its `data`, or the
/// `asOf` object itself, with core's own JSON reader (as receipts are
/// read: amounts exact, no serde_json in the browser's module).
///
/// # Errors
/// Not JSON, or the first field that is not an as-of answer's.
pub fn read_as_of_document(text: &str) -> Result<AsOf, String> {
    super::read_document(text, true, "an as-of answer", |value| {
        let inner = match value.as_object().and_then(|o| o.get("asOf")) {
            Some(v) => v,
            None => value,
        };
        read_as_of(inner).map_err(|e| *e)
    })
    .map_err(|e| e.to_string())
}

fn read_as_of(value: &Value) -> Result<AsOf, ReadError> {
    let f = Fields::of(value, String::new())?;
    let p = f.object("proof")?;
    let from = p.object("from")?;
    let basis = match f.string("basis")? {
        "verified" => AsOfBasis::Verified,
        "declared" => AsOfBasis::Declared,
        _ => {
            return Err(Box::new(crate::error::FieldError::new(
                "basis",
                "must be verified or declared",
            )))
        }
    };
    let at = f.string("at")?;
    let last_delta = f.optional_string("lastDelta")?;
    let hash_scheme = p.string("hashScheme")?;
    let tree_head = p.string("treeHead")?;
    let public_key = p.string("publicKey")?;
    Ok(AsOf {
        basis,
        balance: f.amount("balance")?,
        deltas_count: f.u64("deltasCount")?,
        proof: AsOfProof {
            from: AsOfFrom {
                sequence: from.u64("sequence")?,
                balance: from.amount("balance")?,
            },
            deltas: p.each("deltas", true, read_delta)?,
            next: match p.optional("next") {
                None => None,
                Some(_) => Some(read_delta(&p.object("next")?)?),
            },
            ledger_deltas: match p.optional("ledgerDeltas") {
                None => None,
                Some(_) => Some(p.u64("ledgerDeltas")?),
            },
            witnessed: None,
            hash_scheme: hash_scheme.to_owned(),
            tree_head: tree_head.to_owned(),
            public_key: public_key.to_owned(),
        },
        at: at.to_owned(),
        last_delta: last_delta.map(str::to_owned),
    })
}

fn read_delta(f: &Fields<'_>) -> Result<AsOfDelta, ReadError> {
    let anchor_id = f.string("anchorId")?;
    let block_timestamp = f.string("blockTimestamp")?;
    let declared_timestamp = f.string("declaredTimestamp")?;
    Ok(AsOfDelta {
        item_hash: f.hash("itemHash")?,
        delta: f.amount("delta")?,
        ledger_seq: f.u64("ledgerSeq")?,
        leaf_index: LeafIndex(f.u64("leafIndex")?),
        inclusion_proof: f.hashes("inclusionProof", false)?,
        raw: match f.optional("raw") {
            None => None,
            Some(_) => Some(crate::receipt::read_raw(&f.object("raw")?)?),
        },
        anchor_id: anchor_id.to_owned(),
        block_timestamp: block_timestamp.to_owned(),
        declared_timestamp: declared_timestamp.to_owned(),
    })
}

/// Verifies an as-of answer given as JSON text (see [`read_as_of_document`]).
pub fn verify_as_of_document(text: &str, trusted_public_key: Option<&str>) -> VerificationReport {
    match read_as_of_document(text) {
        Ok(a) => verify_as_of(&a, trusted_public_key),
        Err(e) => VerificationReport::failure("parse", e),
    }
}

/// Verifies everything an as-of answer claims: the key and signed head,
/// each listed delta's inclusion, that the listing is the ledger's
/// consecutive deltas in log order, the boundary (every counted delta at
/// or before `at`, the next one after it), the count and the balance.
pub fn verify_as_of(a: &AsOf, trusted_public_key: Option<&str>) -> VerificationReport {
    let mut report = VerificationReport::new();
    let p = &a.proof;
    let key = key_check(
        &mut report,
        "publicKey".into(),
        &p.public_key,
        trusted_public_key,
        &KEY_WORDS,
    );
    let head = match note::verify_tree_head(&p.tree_head, key) {
        Ok(h) => {
            report.push(
                "treeHead",
                true,
                format!("size {}, root {}", h.size, h.root),
            );
            Some(h)
        }
        Err(e) => {
            report.push("treeHead", false, e.to_string());
            None
        }
    };
    let scheme = scheme_check(&mut report, "hashScheme".into(), &p.hash_scheme);
    let listed: Vec<&AsOfDelta> = p.deltas.iter().chain(&p.next).collect();
    for (i, d) in listed.iter().enumerate() {
        let name = if i < p.deltas.len() {
            format!("deltas[{i}].inclusion")
        } else {
            "next.inclusion".to_string()
        };
        report.result(name, inclusion(d, head.as_ref(), scheme));
        let name = match i < p.deltas.len() {
            true => format!("deltas[{i}].itemHash"),
            false => "next.itemHash".to_string(),
        };
        report.result(name, bound(d));
    }
    report.result("order", order_check(p, &listed));
    let at = match parse_iso_ms(&a.at) {
        Ok(at) => at,
        Err(e) => {
            report.push("at", false, e.to_string());
            return report;
        }
    };
    match a.basis {
        AsOfBasis::Verified => verified_checks(&mut report, a, at),
        AsOfBasis::Declared => declared_checks(&mut report, a, at),
    }
    report
}

fn inclusion(d: &AsOfDelta, head: Option<&TreeHead>, scheme: Option<HashScheme>) -> Detail {
    match (head, scheme) {
        (None, _) => Err("cannot check: the tree head did not verify".into()),
        (_, None) => Err(UNKNOWN_SCHEME.into()),
        (Some(h), Some(scheme)) => scheme
            .verify_inclusion(
                &d.inclusion_proof,
                d.leaf_index,
                h.size,
                &h.root,
                &d.item_hash,
            )
            .map(|()| {
                format!(
                    "{} is leaf {} of the signed tree",
                    d.anchor_id, d.leaf_index
                )
            })
            .map_err(|e| e.to_string()),
    }
}

/// The amount and declaredTimestamp are the hashed ones: recomputed from
/// the raw content (skipped, and said so, once retention purged it).
fn bound(d: &AsOfDelta) -> Detail {
    let Some(raw) = &d.raw else {
        return Ok("skipped: raw data purged by retention (amount not bound here)".into());
    };
    if raw.anchor_id != d.anchor_id || raw.delta != d.delta {
        return Err("raw content names another anchorId or delta".into());
    }
    let declared = parse_iso_ms(&raw.declared_timestamp).ok();
    if declared.is_none() || declared != parse_iso_ms(&d.declared_timestamp).ok() {
        return Err("raw content names another declaredTimestamp".into());
    }
    match item_hash(raw) {
        Ok(h) if h.ct_eq(&d.item_hash) => Ok(format!("recomputed from raw content: {h}")),
        Ok(h) => Err(format!(
            "raw content hashes to {h}, the proof says {}",
            d.item_hash
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// The listing is the ledger's deltas `from.sequence + 1, + 2, …` in log
/// order (their leaves increase as their sequence numbers do).
fn order_check(p: &AsOfProof, listed: &[&AsOfDelta]) -> Detail {
    let mut seq = p.from.sequence;
    let mut leaf = None;
    for d in listed {
        if d.ledger_seq != seq + 1 {
            return Err(format!(
                "{} has ledgerSeq {}, expected {} (the listing must be consecutive)",
                d.anchor_id,
                d.ledger_seq,
                seq + 1
            ));
        }
        if leaf.is_some_and(|l| d.leaf_index.0 <= l) {
            return Err(format!(
                "{} is not after the delta before it in the log",
                d.anchor_id
            ));
        }
        seq = d.ledger_seq;
        leaf = Some(d.leaf_index.0);
    }
    Ok(format!(
        "{} consecutive deltas after sequence {}, in log order",
        listed.len(),
        p.from.sequence
    ))
}

fn time_of(d: &AsOfDelta, basis: AsOfBasis) -> Result<i64, String> {
    let text = match basis {
        AsOfBasis::Verified => &d.block_timestamp,
        AsOfBasis::Declared => &d.declared_timestamp,
    };
    parse_iso_ms(text).map_err(|e| format!("{}: {e}", d.anchor_id))
}

fn verified_checks(report: &mut VerificationReport, a: &AsOf, at: i64) {
    let p = &a.proof;
    let boundary: Result<String, String> = (|| {
        for d in &p.deltas {
            if time_of(d, AsOfBasis::Verified)? > at {
                return Err(format!("{} was verified after {}", d.anchor_id, a.at));
            }
        }
        match &p.next {
            Some(n) if time_of(n, AsOfBasis::Verified)? <= at => Err(format!(
                "the next delta {} was verified at or before {}: the boundary is later",
                n.anchor_id, a.at
            )),
            Some(n) => Ok(format!(
                "every listed delta verified by {}, the next ({}) after it",
                a.at, n.anchor_id
            )),
            None => Ok(format!(
                "every listed delta verified by {}; none after it at this head",
                a.at
            )),
        }
    })();
    report.result("boundary", boundary);
    let sum = p
        .deltas
        .iter()
        .try_fold(p.from.balance, |acc, d| acc.checked_add(d.delta));
    let last = p.deltas.last().map(|d| d.anchor_id.as_str());
    let count = p.from.sequence + p.deltas.len() as u64;
    totals(report, a, sum.map_err(|e| e.to_string()), count, last);
    report.push(
        "from",
        true,
        if p.from.sequence == 0 {
            "from genesis".to_string()
        } else {
            format!(
                "from sequence {} at balance {}, as the service stored it: check it against your records or a receipt",
                p.from.sequence, p.from.balance
            )
        },
    );
}

fn declared_checks(report: &mut VerificationReport, a: &AsOf, at: i64) {
    let p = &a.proof;
    let complete = if p.from.sequence != 0 || p.from.balance != Amount::ZERO || p.next.is_some() {
        Err("a declared proof lists the ledger from genesis, with no next delta".to_string())
    } else if p.ledger_deltas != Some(p.deltas.len() as u64) {
        Err(format!(
            "{} deltas listed, the ledger has {:?} at this head",
            p.deltas.len(),
            p.ledger_deltas
        ))
    } else {
        Ok(format!(
            "the ledger's {} deltas at this head, from genesis",
            p.deltas.len()
        ))
    };
    report.result("listing", complete);
    let mut sum = Ok(Amount::ZERO);
    let mut count = 0;
    let mut last: Option<(i64, u64, &str)> = None;
    for d in &p.deltas {
        match time_of(d, AsOfBasis::Declared) {
            Err(e) => sum = Err(e),
            Ok(t) if t <= at => {
                count += 1;
                sum = sum.and_then(|s: Amount| s.checked_add(d.delta).map_err(|e| e.to_string()));
                if last.is_none_or(|(lt, ls, _)| (t, d.ledger_seq) > (lt, ls)) {
                    last = Some((t, d.ledger_seq, &d.anchor_id));
                }
            }
            Ok(_) => {}
        }
    }
    totals(report, a, sum, count, last.map(|(_, _, id)| id));
}

fn totals(
    report: &mut VerificationReport,
    a: &AsOf,
    sum: Result<Amount, String>,
    count: u64,
    last: Option<&str>,
) {
    report.result(
        "balance",
        match sum {
            Ok(b) if b == a.balance => Ok(format!("{b} as of {}", a.at)),
            Ok(b) => Err(format!(
                "the listed deltas add up to {b}, the answer says {}",
                a.balance
            )),
            Err(e) => Err(e),
        },
    );
    report.result(
        "deltasCount",
        if count == a.deltas_count {
            Ok(format!("{count} deltas"))
        } else {
            Err(format!(
                "{count} deltas counted, the answer says {}",
                a.deltas_count
            ))
        },
    );
    report.result(
        "lastDelta",
        if a.last_delta.as_deref() == last {
            Ok(format!(
                "the last counted delta is {}",
                last.unwrap_or("none")
            ))
        } else {
            Err(format!(
                "the last counted delta is {last:?}, the answer says {:?}",
                a.last_delta
            ))
        },
    );
}
