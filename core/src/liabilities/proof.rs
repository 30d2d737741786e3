//! A customer's proof: its leaf (salt, amount) and sibling (hash, sum) path
//! in each tree it is in, the statement, and the log proof that the
//! statement is in the signed log; how it is checked; the document's JSON.

use super::statement::{Seed, Statement};
use super::tree::{self, NodeAddr};
use super::{
    check_amount, leaf, parent, root_hash, LiabilitiesError, Salt, SumNode, TreeKind, SCHEME,
};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::json;
use crate::merkle::{self, LeafIndex, TreeSize};
use crate::note::{self, TreeHead};
use crate::verify::{self, VerificationReport};
use subtle::ConstantTimeEq;

mod answer;
mod checker;
pub use answer::{is_statement_answer, verify_statement_answer_json, StatementAnswer};
use checker::ledger_checks;
pub use checker::Checker;

/// Largest proof document read, in bytes. // spec: silent; a path of 32 siblings and a log proof of 64 hashes take ~12 KB
pub const PROOF_JSON_BYTES_MAX: usize = 1024 * 1024;

/// Checks that `leaf` (its hash and amount) is leaf `index` of the `kind`
/// tree of `count` leaves whose root is `root` (the sealed [`root_hash`]
/// and the total), by the sibling `path`, leaf side first (RFC 9162
/// §2.1.3.2's walk, each step a checked [`parent`]). Every amount met is checked to be from 0 to 10^20:
/// a negative or oversized sibling sum fails the proof, so does an
/// addition that overflows. Never panics.
///
/// # Errors
/// [`LiabilitiesError::IndexOutOfRange`], [`LiabilitiesError::WrongPathLength`]
/// (before any hashing), a sum out of range, [`LiabilitiesError::RootMismatch`]
/// or [`LiabilitiesError::TotalMismatch`].
pub fn verify_path(
    kind: TreeKind,
    leaf: &SumNode,
    index: u64,
    count: u64,
    path: &[SumNode],
    root: &SumNode,
) -> Result<(), LiabilitiesError> {
    let expected = merkle::inclusion_path_len(LeafIndex(index), TreeSize(count))
        .ok_or(LiabilitiesError::IndexOutOfRange { index, count })?;
    let wrong_length = || LiabilitiesError::WrongPathLength {
        index,
        count,
        expected,
        got: path.len(),
    };
    if path.len() != expected {
        return Err(wrong_length());
    }
    check_amount(|| "the leaf's amount".into(), leaf.sum)?;
    let (mut f, mut s) = (index, count - 1);
    let mut r = *leaf;
    for (i, p) in path.iter().enumerate() {
        check_amount(|| format!("sibling {i}'s sum"), p.sum)?;
        if s == 0 {
            return Err(wrong_length());
        }
        if f & 1 == 1 || f == s {
            r = parent(kind, p, &r)?;
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = parent(kind, &r, p)?;
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 {
        return Err(wrong_length());
    }
    let sealed = root_hash(kind, &r, count);
    if !bool::from(sealed.0.ct_eq(&root.hash.0)) {
        return Err(LiabilitiesError::RootMismatch {
            got: sealed,
            want: root.hash,
        });
    }
    if r.sum != root.sum {
        return Err(LiabilitiesError::TotalMismatch {
            got: r.sum,
            want: root.sum,
        });
    }
    Ok(())
}

/// A customer's leaf in one tree and the path from it to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafProof {
    pub index: u64,
    pub salt: Salt,
    pub amount: Amount,
    pub path: Vec<SumNode>,
}

impl LeafProof {
    /// The proof of `ledger`'s leaf (`index`, `amount`) in the `kind` tree of
    /// `count` leaves built with `seed`, from the stored nodes
    /// ([`tree::path_addrs`] names the ones to fetch).
    ///
    /// # Errors
    /// As [`tree::path`].
    pub fn from_stored(
        seed: &Seed,
        kind: TreeKind,
        ledger: &Hash32,
        amount: Amount,
        index: u64,
        count: u64,
        node: impl Fn(NodeAddr) -> Option<SumNode>,
    ) -> Result<LeafProof, LiabilitiesError> {
        Ok(LeafProof {
            index,
            salt: seed.salt(kind, ledger),
            amount,
            path: tree::path(kind, index, count, node)?,
        })
    }
}

/// Where the statement is in the log: a signed tree head, its key, the
/// log's hash scheme, and the statement item's inclusion proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEvidence {
    pub hash_scheme: String,
    pub tree_head: String,
    pub public_key: String,
    pub leaf_index: u64,
    pub inclusion_proof: Vec<Hash32>,
}

/// Everything one customer is handed to check its balance is counted
/// (docs/liabilities.md, "The proof document").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofDocument {
    pub statement: Statement,
    pub statement_hash: Hash32,
    /// The vendor's name for the customer; with the statement's tenantId it
    /// gives the ledger id, which the verifier recomputes.
    pub customer_id: Option<String>,
    pub ledger_id: Hash32,
    /// The ledger's balance at the end of the period.
    pub balance: Amount,
    pub liabilities: LeafProof,
    /// For a negative balance: its absolute value in the receivables tree.
    pub receivables: Option<LeafProof>,
    pub log: Option<LogEvidence>,
}

impl ProofDocument {
    /// The document as JSON text (amounts outside the statement as JSON
    /// numbers in canonical form; the statement exactly as it is hashed).
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(4096);
        out.push_str("{\"scheme\":\"");
        out.push_str(SCHEME);
        out.push_str("\",\"statement\":");
        out.push_str(&self.statement.canonical_json());
        out.push_str(",\"statementHash\":\"");
        out.push_str(&self.statement_hash.to_hex());
        out.push_str("\",\"customer\":{\"customerId\":");
        match &self.customer_id {
            Some(c) => json::write_string(&mut out, c),
            None => out.push_str("null"),
        }
        out.push_str(",\"ledgerId\":\"");
        out.push_str(&self.ledger_id.to_hex());
        out.push_str("\",\"balance\":");
        out.push_str(&self.balance.to_string());
        out.push_str("},\"liabilities\":");
        write_leaf(&mut out, &self.liabilities);
        out.push_str(",\"receivables\":");
        match &self.receivables {
            Some(r) => write_leaf(&mut out, r),
            None => out.push_str("null"),
        }
        out.push_str(",\"log\":");
        match &self.log {
            Some(l) => {
                out.push_str("{\"hashScheme\":");
                json::write_string(&mut out, &l.hash_scheme);
                out.push_str(",\"leafIndex\":");
                out.push_str(&l.leaf_index.to_string());
                out.push_str(",\"inclusionProof\":[");
                for (i, h) in l.inclusion_proof.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push('"');
                    out.push_str(&h.to_hex());
                    out.push('"');
                }
                out.push_str("],\"treeHead\":");
                json::write_string(&mut out, &l.tree_head);
                out.push_str(",\"publicKey\":");
                json::write_string(&mut out, &l.public_key);
                out.push('}');
            }
            None => out.push_str("null"),
        }
        out.push('}');
        out
    }

    /// Reads a proof document (or an API answer whose `data` is one) from a
    /// parsed JSON value.
    ///
    /// # Errors
    /// The first field missing or malformed, by its path.
    pub fn from_json(value: &json::Value) -> Result<ProofDocument, crate::error::FieldError> {
        Self::read(value).map_err(|e| *e)
    }

    fn read(value: &json::Value) -> Result<ProofDocument, json::ReadError> {
        let f = json::Fields::of(value, String::new())?;
        if f.string("scheme")? != SCHEME {
            return Err(Box::new(crate::error::FieldError::new(
                "scheme",
                format!("must be {SCHEME}"),
            )));
        }
        let statement = Statement::read(f.required("statement")?, "statement")?;
        let statement_hash = f.hash("statementHash")?;
        let c = f.object("customer")?;
        let customer_id = c.optional_string("customerId")?.map(str::to_owned);
        let ledger_id = c.hash("ledgerId")?;
        let balance = c.amount("balance")?;
        let liabilities = read_leaf(&f.object("liabilities")?)?;
        let receivables = match f.optional("receivables") {
            None => None,
            Some(_) => Some(read_leaf(&f.object("receivables")?)?),
        };
        let log = match f.optional("log") {
            None => None,
            Some(_) => Some(read_log(&f.object("log")?)?),
        };
        Ok(ProofDocument {
            statement,
            statement_hash,
            customer_id,
            ledger_id,
            balance,
            liabilities,
            receivables,
            log,
        })
    }
}

fn read_log(l: &json::Fields<'_>) -> Result<LogEvidence, json::ReadError> {
    let leaf_index = l.u64("leafIndex")?;
    Ok(LogEvidence {
        inclusion_proof: l.hashes("inclusionProof", true)?,
        hash_scheme: l.string("hashScheme")?.to_owned(),
        tree_head: l.string("treeHead")?.to_owned(),
        public_key: l.string("publicKey")?.to_owned(),
        leaf_index,
    })
}

fn write_leaf(out: &mut String, l: &LeafProof) {
    out.push_str("{\"leafIndex\":");
    out.push_str(&l.index.to_string());
    out.push_str(",\"salt\":\"");
    out.push_str(&l.salt.to_hex());
    out.push_str("\",\"amount\":");
    out.push_str(&l.amount.to_string());
    out.push_str(",\"path\":[");
    for (i, n) in l.path.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"hash\":\"");
        out.push_str(&n.hash.to_hex());
        out.push_str("\",\"sum\":");
        out.push_str(&n.sum.to_string());
        out.push('}');
    }
    out.push_str("]}");
}

/// Most siblings a path may list: a tree of 2^32 leaves has 32.
const PATH_SIBLINGS_MAX: usize = 32;

fn read_leaf(f: &json::Fields<'_>) -> Result<LeafProof, json::ReadError> {
    let index = f.u64("leafIndex")?;
    let salt_text = f.string("salt")?;
    let salt = Salt::parse(salt_text).map_err(|e| {
        Box::new(crate::error::FieldError::new(
            f.path_of("salt"),
            e.to_string(),
        ))
    })?;
    let amount = f.amount("amount")?;
    if f.array("path", true)?.len() > PATH_SIBLINGS_MAX {
        return Err(Box::new(crate::error::FieldError::new(
            f.path_of("path"),
            "must have at most 32 siblings",
        )));
    }
    let path = f.each("path", true, |n| {
        Ok(SumNode {
            hash: n.hash("hash")?,
            sum: n.amount("sum")?,
        })
    })?;
    Ok(LeafProof {
        index,
        salt,
        amount,
        path,
    })
}

/// The last day of the period, `YYYY-MM-DD`: the day the balances are as of.
fn last_day(statement: &Statement) -> String {
    let mut day = crate::time::format_iso_ms(statement.period.end_ms() - 1);
    day.truncate(10);
    day
}

/// Verifies a proof document given as JSON text (the document, or an API
/// answer whose `data` is one) for `checker`; see [`verify_proof`].
pub fn verify_proof_json(
    text: &str,
    checker: Checker<'_>,
    trusted_public_key: Option<&str>,
    expected_balance: Option<Amount>,
) -> VerificationReport {
    if text.len() > PROOF_JSON_BYTES_MAX {
        return VerificationReport::failure(
            "parse",
            format!("a liabilities proof is at most {PROOF_JSON_BYTES_MAX} bytes"),
        );
    }
    match verify::read_document(text, true, "a liabilities proof", ProofDocument::from_json) {
        Ok(doc) => verify_proof(&doc, checker, trusted_public_key, expected_balance),
        Err(e) => VerificationReport::failure("parse", e.to_string()),
    }
}

/// Checks everything a customer's proof claims: the statement's item hash;
/// that item in the signed log (the key pinned or not, the signed head, the
/// log's hash scheme, the inclusion proof); that the proof is for
/// `checker`'s own ledger (recomputed from its customerId and the
/// statement's tenantId, or its ledger id; a customerId the proof names
/// must be the checker's); the balance against `expected_balance` when the
/// customer gives it (from its own records or its receipt); the liabilities
/// leaf (`max(balance, 0)`) and its path to the statement's root, total and
/// leaf count; for a negative balance, the receivables leaf (`-balance`)
/// and its path, and otherwise that there is none. Ends with a `summary`
/// line when all passed.
pub fn verify_proof(
    doc: &ProofDocument,
    checker: Checker<'_>,
    trusted_public_key: Option<&str>,
    expected_balance: Option<Amount>,
) -> VerificationReport {
    let mut report = VerificationReport::new();
    let s = &doc.statement;
    let item = s.item_hash();
    report.result(
        "statementHash",
        verify::same("statementHash", &doc.statement_hash, &item)
            .map(|d| format!("{d}: SHA-256 of the statement as logged")),
    );
    log_checks(&mut report, doc.log.as_ref(), &item, trusted_public_key);

    ledger_checks(&mut report, doc, checker, expected_balance);

    let negative = doc.balance.signum() < 0;
    let owed = if negative { Amount::ZERO } else { doc.balance };
    leaf_checks(
        &mut report,
        doc,
        TreeKind::Liabilities,
        &doc.liabilities,
        owed,
    );
    match (&doc.receivables, negative) {
        (Some(r), true) => match doc.balance.checked_neg() {
            Ok(due) => leaf_checks(&mut report, doc, TreeKind::Receivables, r, due),
            Err(e) => report.push("receivables.amount", false, e.to_string()),
        },
        (None, true) => report.push(
            "receivables",
            false,
            format!(
                "a balance of {} is owed to the vendor, but the proof has no receivables leaf",
                doc.balance
            ),
        ),
        (Some(_), false) => report.push(
            "receivables",
            false,
            format!(
                "a balance of {} is not negative, yet the proof has a receivables leaf",
                doc.balance
            ),
        ),
        (None, false) => report.push("receivables", true, "none: the balance is not negative"),
    }
    if report.ok {
        report.push("summary", true, summary(doc));
    }
    report
}

/// The sentence a page shows once everything passed.
fn summary(doc: &ProofDocument) -> String {
    let s = &doc.statement;
    let (l, r, day) = (&s.liabilities, &s.receivables, last_day(s));
    if doc.balance.signum() < 0 {
        format!(
            "your balance of {} (owed to the vendor) is counted in a total of {} owed to the vendor by \
             {} customers on {day}, and as 0 in the total of {} the vendor owes its {} customers",
            doc.balance, r.total, r.leaf_count, l.total, l.leaf_count
        )
    } else {
        format!(
            "your balance of {} is counted in a total of {} owed to {} customers on {day}",
            doc.balance, l.total, l.leaf_count
        )
    }
}

/// The statement item in the signed log: which key, the signed head, the
/// hash scheme, the inclusion proof.
fn log_checks(
    report: &mut VerificationReport,
    log: Option<&LogEvidence>,
    item: &Hash32,
    trusted_public_key: Option<&str>,
) {
    let Some(log) = log else {
        report.push(
            "log",
            false,
            "no log proof: nothing shows this statement was published in the log",
        );
        return;
    };
    let key = match trusted_public_key {
        Some(trusted) => {
            let same_key: bool = trusted.as_bytes().ct_eq(log.public_key.as_bytes()).into();
            report.result(
                "log.publicKey",
                if same_key {
                    Ok("the proof names the trusted key".into())
                } else {
                    Err(format!(
                        "the proof names key {}, the trusted key is {}; checking against the trusted key",
                        json::quoted(&log.public_key),
                        json::quoted(trusted)
                    ))
                },
            );
            trusted
        }
        None => {
            report.push(
                "log.publicKey",
                true,
                "not pinned: using the key inside the proof; compare it with the log's published key",
            );
            log.public_key.as_str()
        }
    };
    let head: Option<TreeHead> = match note::verify_tree_head(&log.tree_head, key) {
        Ok(h) => {
            report.push(
                "log.treeHead",
                true,
                format!("signed by {}: size {}, root {}", h.origin, h.size, h.root),
            );
            Some(h)
        }
        Err(e) => {
            report.push("log.treeHead", false, e.to_string());
            None
        }
    };
    let scheme = verify::scheme_check(report, "log.hashScheme".into(), &log.hash_scheme);
    report.result(
        "log.inclusion",
        verify::inclusion_detail(
            &log.inclusion_proof,
            LeafIndex(log.leaf_index),
            head.as_ref(),
            scheme,
            item,
        ),
    );
}

/// One tree's checks: the leaf's amount is what the balance says it must
/// be, and its path leads to the statement's root and total.
fn leaf_checks(
    report: &mut VerificationReport,
    doc: &ProofDocument,
    kind: TreeKind,
    proof: &LeafProof,
    want: Amount,
) {
    let name = kind.name();
    report.result(
        format!("{name}.amount"),
        if proof.amount == want {
            Ok(format!("the leaf holds {want}"))
        } else {
            Err(format!(
                "the leaf holds {}, a balance of {} needs {want}",
                proof.amount, doc.balance
            ))
        },
    );
    let tree = doc.statement.tree(kind);
    let checked = leaf(kind, &proof.salt, &doc.ledger_id, proof.amount).and_then(|l| {
        verify_path(
            kind,
            &l,
            proof.index,
            tree.leaf_count,
            &proof.path,
            &tree.root_node(),
        )
    });
    report.result(
        format!("{name}.path"),
        checked
            .map(|()| {
                format!(
                    "leaf {} of {} adds up to the root {} and total {}",
                    proof.index, tree.leaf_count, tree.root, tree.total
                )
            })
            .map_err(|e| e.to_string()),
    );
}
