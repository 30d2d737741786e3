//! A statement: the header that is logged (tenant, environment, period, both
//! trees' roots, totals and leaf counts), its log item hash, and the
//! resumable builder that makes one from every ledger's end-of-period
//! balance, shuffled and salted from a secret seed.

use super::tree::{NodeAddr, TreeBuilder};
use super::{leaf, LiabilitiesError, Salt, SumNode, TreeKind, DOMAIN_BYTE, SCHEME};
use crate::amount::Amount;
use crate::error::FieldError;
use crate::hash::Hash32;
use crate::json;
use crate::types::{Asset, Env, Period};
use sha2::{Digest, Sha256};

/// Tag of a statement's log item hash.
const STATEMENT_TAG: &[u8; 28] = b"bvs-liabilities-statement-v1";
/// Tag of a leaf's salt, derived from the statement's seed.
const SALT_TAG: &[u8; 23] = b"bvs-liabilities-salt-v1";
/// Tag of a ledger's order key (the shuffle), derived from the seed.
const ORDER_TAG: &[u8; 24] = b"bvs-liabilities-order-v1";
/// Longest tenant id a statement names, in bytes. // spec: silent; ids are `ten_` + 20 characters
pub const TENANT_ID_BYTES_MAX: usize = 64;

/// The ledger id of a customer: SHA-256 of `bvs-ledger-v1\n<tenantId>\n<customerId>`
/// (docs/balance.md; the worker's `ledger::submit::ledger_id` is the same).
pub fn ledger_id(tenant_id: &str, customer_id: &str) -> Hash32 {
    let mut h = Sha256::new();
    h.update(b"bvs-ledger-v1\n");
    h.update(tenant_id.as_bytes());
    h.update(b"\n");
    h.update(customer_id.as_bytes());
    Hash32(h.finalize().into())
}

/// One tree as a statement states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeSummary {
    pub root: Hash32,
    pub total: Amount,
    pub leaf_count: u64,
}

impl TreeSummary {
    /// The root as a node (hash and total), what a path leads to.
    pub fn root_node(&self) -> SumNode {
        SumNode {
            hash: self.root,
            sum: self.total,
        }
    }
}

/// A tenant's liabilities statement for one environment and period: what
/// is logged (its [`Statement::item_hash`]) and shown on public verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    tenant_id: String,
    pub environment: Env,
    pub period: Period,
    pub liabilities: TreeSummary,
    pub receivables: TreeSummary,
    /// The item hash of the statement of the same period this one replaces,
    /// if any: a new statement supersedes the old one visibly.
    pub supersedes: Option<Hash32>,
    /// The asset whose balances it sums (issue 43): hashed as `"asset":
    /// "CODE/p"` when named; the default asset adds no member, so every
    /// statement hashed before assets keeps its hash.
    pub asset: Asset,
}

impl Statement {
    /// # Errors
    /// `tenantId` empty, over 64 bytes or not letters, digits, `_` and `-`;
    /// a tree's amounts out of range, or an empty liabilities tree.
    pub fn new(
        tenant_id: &str,
        environment: Env,
        period: Period,
        liabilities: TreeSummary,
        receivables: TreeSummary,
        supersedes: Option<Hash32>,
    ) -> Result<Statement, FieldError> {
        check_tenant_id(tenant_id)?;
        for (name, t) in [
            ("liabilities.total", &liabilities),
            ("receivables.total", &receivables),
        ] {
            super::check_amount(String::new, t.total)
                .map_err(|e| FieldError::new(name, e.to_string()))?;
        }
        if liabilities.leaf_count == 0 {
            return Err(FieldError::new(
                "liabilities.leafCount",
                "must be at least 1: a statement covers at least one ledger",
            ));
        }
        if liabilities.leaf_count > super::LEAVES_MAX || receivables.leaf_count > super::LEAVES_MAX
        {
            return Err(FieldError::new("leafCount", "must be at most 2^32"));
        }
        // An empty tree has one root and a total of 0: no customer's path
        // would ever check a claim about it, so it is checked here.
        if receivables.leaf_count == 0
            && receivables
                != (TreeSummary {
                    root: super::empty_root(TreeKind::Receivables).hash,
                    total: Amount::ZERO,
                    leaf_count: 0,
                })
        {
            return Err(FieldError::new(
                "receivables",
                "an empty tree has the empty root and a total of 0",
            ));
        }
        Ok(Statement {
            tenant_id: tenant_id.to_owned(),
            environment,
            period,
            liabilities,
            receivables,
            supersedes,
            asset: Asset::Default,
        })
    }

    /// The same statement of `asset`'s balances.
    pub fn of_asset(self, asset: Asset) -> Statement {
        Statement { asset, ..self }
    }

    pub fn tenant_id(&self) -> &str {
        &self.tenant_id
    }

    /// The tree of `kind`.
    pub fn tree(&self, kind: TreeKind) -> &TreeSummary {
        match kind {
            TreeKind::Liabilities => &self.liabilities,
            TreeKind::Receivables => &self.receivables,
        }
    }

    /// The RFC 8785 (JCS) form of the statement, the bytes its item hash
    /// covers after the tag: keys sorted, no white space, amounts as
    /// canonical decimal strings, counts as integers.
    pub fn canonical_json(&self) -> String {
        let mut out = String::with_capacity(384);
        let tree = |out: &mut String, t: &TreeSummary| {
            out.push_str("{\"leafCount\":");
            out.push_str(&t.leaf_count.to_string());
            out.push_str(",\"root\":\"");
            out.push_str(&t.root.to_hex());
            out.push_str("\",\"total\":\"");
            out.push_str(&t.total.to_string());
            out.push_str("\"}");
        };
        out.push('{');
        if !self.asset.is_default() {
            out.push_str("\"asset\":");
            json::write_string(&mut out, &self.asset.key());
            out.push(',');
        }
        out.push_str("\"environment\":\"");
        out.push_str(self.environment.as_str());
        out.push_str("\",\"liabilities\":");
        tree(&mut out, &self.liabilities);
        out.push_str(",\"period\":\"");
        out.push_str(&self.period.to_string());
        out.push_str("\",\"receivables\":");
        tree(&mut out, &self.receivables);
        out.push_str(",\"scheme\":\"");
        out.push_str(SCHEME);
        out.push_str("\",\"supersedes\":");
        match &self.supersedes {
            Some(h) => {
                out.push('"');
                out.push_str(&h.to_hex());
                out.push('"');
            }
            None => out.push_str("null"),
        }
        out.push_str(",\"tenantId\":");
        json::write_string(&mut out, &self.tenant_id);
        out.push('}');
        out
    }

    /// The statement's log item: SHA-256(0xFF ‖ `bvs-liabilities-statement-v1`
    /// ‖ [`Statement::canonical_json`]). The leading 0xFF keeps it apart
    /// from every fact's contentHash (UTF-8 content) and delta's itemHash.
    pub fn item_hash(&self) -> Hash32 {
        let mut h = Sha256::new();
        h.update([DOMAIN_BYTE]);
        h.update(STATEMENT_TAG);
        h.update(self.canonical_json().as_bytes());
        Hash32(h.finalize().into())
    }

    /// Reads a statement object (as [`Statement::canonical_json`] writes it,
    /// in any key order and white space). `scheme` must be this one.
    ///
    /// # Errors
    /// The first field missing or malformed, by its path.
    pub fn from_json(value: &json::Value) -> Result<Statement, FieldError> {
        Self::read(value, "statement").map_err(|e| *e)
    }

    pub(crate) fn read(value: &json::Value, path: &str) -> Result<Statement, json::ReadError> {
        let f = json::Fields::of(value, path.to_owned())?;
        let scheme = f.string("scheme")?;
        if scheme != SCHEME {
            return Err(Box::new(FieldError::new(
                f.path_of("scheme"),
                format!("must be {SCHEME}"),
            )));
        }
        let tenant_id = f.string("tenantId")?;
        let environment =
            Env::parse(&f.path_of("environment"), f.string("environment")?).map_err(Box::new)?;
        let period = f.period("period")?;
        // Strict: the statement is shown exactly as it is hashed, so a
        // value in another form (an uppercase hash, `5.0`, a number for a
        // total) would hash differently from the document's own bytes.
        let tree = |key: &str| -> Result<TreeSummary, json::ReadError> {
            let t = f.object(key)?;
            let root = t.hash("root")?;
            if t.string("root")? != root.to_hex() {
                return Err(Box::new(FieldError::new(
                    t.path_of("root"),
                    "must be 64 lowercase hex digits",
                )));
            }
            let total_text = t.string("total")?;
            let total = t.amount("total")?;
            if total_text != total.to_string() {
                return Err(Box::new(FieldError::new(
                    t.path_of("total"),
                    "must be a decimal string in canonical form (no exponent, no trailing zeros)",
                )));
            }
            Ok(TreeSummary {
                root,
                total,
                leaf_count: t.u64("leafCount")?,
            })
        };
        let liabilities = tree("liabilities")?;
        let receivables = tree("receivables")?;
        let supersedes = match f.optional("supersedes") {
            None => None,
            Some(_) => {
                let h = f.hash("supersedes")?;
                if f.string("supersedes")? != h.to_hex() {
                    return Err(Box::new(FieldError::new(
                        f.path_of("supersedes"),
                        "must be 64 lowercase hex digits",
                    )));
                }
                Some(h)
            }
        };
        let asset = match f.optional_string("asset")? {
            None => Asset::Default,
            Some(text) => Asset::parse(&f.path_of("asset"), text).map_err(Box::new)?,
        };
        Statement::new(
            tenant_id,
            environment,
            period,
            liabilities,
            receivables,
            supersedes,
        )
        .map(|s| s.of_asset(asset))
        .map_err(|e| Box::new(FieldError::new(f.path_of(&e.field), e.reason)))
    }
}

fn check_tenant_id(id: &str) -> Result<(), FieldError> {
    let ok = !id.is_empty()
        && id.len() <= TENANT_ID_BYTES_MAX
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(FieldError::new(
            "tenantId",
            "must be 1 to 64 letters, digits, _ or -",
        ))
    }
}

/// A statement's secret: 32 random bytes the caller draws once per
/// statement (core takes randomness as an argument). Every leaf's salt and
/// the shuffle derive from it, so the builder's state stays small and a
/// customer's proof can be made later from the stored nodes. Whoever holds
/// it can tell which ledger every leaf hash belongs to: it never leaves the
/// service, and is never in an answer.
#[derive(Clone, PartialEq, Eq)]
pub struct Seed(pub [u8; 32]);

impl std::fmt::Debug for Seed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seed(..)")
    }
}

impl Seed {
    /// The salt of `ledger`'s leaf in the `kind` tree:
    /// SHA-256(0xFF ‖ `bvs-liabilities-salt-v1` ‖ seed ‖ leaf tag ‖ ledgerId).
    /// A fixed-length input, so SHA-256 with a secret prefix is a sound PRF
    /// here (no length extension reaches another input of this form).
    pub fn salt(&self, kind: TreeKind, ledger: &Hash32) -> Salt {
        let mut h = Sha256::new();
        h.update([DOMAIN_BYTE]);
        h.update(SALT_TAG);
        h.update(self.0);
        h.update(kind.leaf_tag());
        h.update(ledger.0);
        Salt(h.finalize().into())
    }

    /// Where `ledger` goes in the shuffle: ledgers are placed in ascending
    /// order of SHA-256(0xFF ‖ `bvs-liabilities-order-v1` ‖ seed ‖ ledgerId),
    /// a fresh random order per statement that the service can sort by
    /// (for instance in an index) before building.
    pub fn order_key(&self, ledger: &Hash32) -> Hash32 {
        let mut h = Sha256::new();
        h.update([DOMAIN_BYTE]);
        h.update(ORDER_TAG);
        h.update(self.0);
        h.update(ledger.0);
        Hash32(h.finalize().into())
    }

    /// Sorts `(ledgerId, balance)` pairs into this statement's order.
    pub fn shuffle(&self, ledgers: &mut [(Hash32, Amount)]) {
        ledgers.sort_by_cached_key(|(l, _)| self.order_key(l));
    }
}

/// Where a ledger landed: its leaf in each tree it is in, and every node
/// the step completed (to be stored for proofs later).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub ledger: Hash32,
    /// Leaf index in the liabilities tree (every ledger has one).
    pub liabilities_index: u64,
    /// Leaf index in the receivables tree, for a negative balance.
    pub receivables_index: Option<u64>,
    /// The completed nodes of both trees, leaves first.
    pub nodes: Vec<(TreeKind, NodeAddr, SumNode)>,
}

/// The resumable builder of a statement: ledgers are pushed in the
/// statement's shuffled order ([`Seed::order_key`] ascending), a page at a
/// time across invocations; [`StatementBuilder::to_text`] is its whole
/// state (the seed, the last order key, two frontiers: a few KB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementBuilder {
    seed: Seed,
    last_key: Option<Hash32>,
    liabilities: TreeBuilder,
    receivables: TreeBuilder,
}

/// First line of a builder's state text.
const STATE_HEADER: &str = "bvs-liabilities-builder-v1";

impl StatementBuilder {
    pub fn new(seed: Seed) -> Self {
        Self {
            seed,
            last_key: None,
            liabilities: TreeBuilder::new(TreeKind::Liabilities),
            receivables: TreeBuilder::new(TreeKind::Receivables),
        }
    }

    pub fn seed(&self) -> &Seed {
        &self.seed
    }

    /// Ledgers added so far.
    pub fn count(&self) -> u64 {
        self.liabilities.count()
    }

    /// Adds one ledger with its balance at the end of the period: a
    /// liabilities leaf of `max(balance, 0)`, and for a negative balance a
    /// receivables leaf of `-balance`. Ledgers must come in ascending order
    /// key, each once. On error nothing changes.
    ///
    /// # Errors
    /// [`LiabilitiesError::OutOfOrder`] (a repeated or misplaced ledger), an
    /// amount above 10^20, a total that would be, or too many leaves.
    pub fn push(&mut self, ledger: Hash32, balance: Amount) -> Result<Placed, LiabilitiesError> {
        let key = self.seed.order_key(&ledger);
        if self.last_key.is_some_and(|last| key <= last) {
            return Err(LiabilitiesError::OutOfOrder { ledger });
        }
        let owed = if balance.signum() > 0 {
            balance
        } else {
            Amount::ZERO
        };
        let liability = leaf(
            TreeKind::Liabilities,
            &self.seed.salt(TreeKind::Liabilities, &ledger),
            &ledger,
            owed,
        )?;
        let receivable = if balance.signum() < 0 {
            let due = balance
                .checked_neg()
                .map_err(|_| LiabilitiesError::Overflow {
                    what: "the balance's absolute value".into(),
                })?;
            Some(leaf(
                TreeKind::Receivables,
                &self.seed.salt(TreeKind::Receivables, &ledger),
                &ledger,
                due,
            )?)
        } else {
            None
        };
        // Both trees change or neither (see `totals_fit`).
        self.totals_fit(liability.sum, receivable.map(|r| r.sum))?;
        let liabilities_index = self.liabilities.count();
        let mut nodes: Vec<(TreeKind, NodeAddr, SumNode)> = self
            .liabilities
            .push(liability)?
            .into_iter()
            .map(|(a, n)| (TreeKind::Liabilities, a, n))
            .collect();
        let receivables_index = match receivable {
            Some(r) => {
                let index = self.receivables.count();
                nodes.extend(
                    self.receivables
                        .push(r)?
                        .into_iter()
                        .map(|(a, n)| (TreeKind::Receivables, a, n)),
                );
                Some(index)
            }
            None => None,
        };
        self.last_key = Some(key);
        Ok(Placed {
            ledger,
            liabilities_index,
            receivables_index,
            nodes,
        })
    }

    /// That the totals after adding `liability` and `receivable` to their
    /// trees stay in range, and the trees have room.
    fn totals_fit(
        &self,
        liability: Amount,
        receivable: Option<Amount>,
    ) -> Result<(), LiabilitiesError> {
        // Both trees change or neither: the totals after this ledger are
        // checked first. With them in range every sum on the way up is too
        // (a parent's sum is part of its tree's total), so neither push can
        // fail after the first has changed its tree.
        for (tree, add) in [
            (&self.liabilities, Some(liability)),
            (&self.receivables, receivable),
        ] {
            let Some(add) = add else { continue };
            if tree.count() >= super::LEAVES_MAX {
                return Err(LiabilitiesError::TooManyLeaves);
            }
            let total = tree
                .total()?
                .checked_add(add)
                .map_err(|_| LiabilitiesError::Overflow {
                    what: format!("the {} total", tree.kind()),
                })?;
            super::check_amount(|| format!("the {} total", tree.kind()), total)?;
        }
        Ok(())
    }

    /// The statement over every ledger pushed.
    ///
    /// # Errors
    /// [`LiabilitiesError::NoLedgers`], or the header's own checks (as a
    /// [`LiabilitiesError::MalformedState`] naming the field).
    pub fn finish(
        &self,
        tenant_id: &str,
        environment: Env,
        period: Period,
        supersedes: Option<Hash32>,
    ) -> Result<Statement, LiabilitiesError> {
        if self.count() == 0 {
            return Err(LiabilitiesError::NoLedgers);
        }
        let summary = |t: &TreeBuilder| -> Result<TreeSummary, LiabilitiesError> {
            let root = t.root()?;
            Ok(TreeSummary {
                root: root.hash,
                total: root.sum,
                leaf_count: t.count(),
            })
        };
        Statement::new(
            tenant_id,
            environment,
            period,
            summary(&self.liabilities)?,
            summary(&self.receivables)?,
            supersedes,
        )
        .map_err(|e| LiabilitiesError::MalformedState(e.to_string()))
    }

    /// The whole state as text, five lines: a header, `seed <hex>`,
    /// `last <hex>` (or `last -`), `liabilities <tree>`, `receivables <tree>`
    /// ([`TreeBuilder::to_text`]). It holds the seed: store it as a secret.
    pub fn to_text(&self) -> String {
        format!(
            "{STATE_HEADER}\nseed {}\nlast {}\nliabilities {}\nreceivables {}\n",
            hex::encode(self.seed.0),
            self.last_key.map_or_else(|| "-".to_owned(), |k| k.to_hex()),
            self.liabilities.to_text(),
            self.receivables.to_text(),
        )
    }

    /// Reads [`StatementBuilder::to_text`].
    ///
    /// # Errors
    /// [`LiabilitiesError::MalformedState`] naming what is wrong.
    pub fn from_text(text: &str) -> Result<Self, LiabilitiesError> {
        let bad = |why: &str| LiabilitiesError::MalformedState(why.to_owned());
        let mut lines = text.lines();
        if lines.next() != Some(STATE_HEADER) {
            return Err(bad("not a bvs-liabilities-builder-v1 state"));
        }
        let mut field = |name: &str| -> Result<&str, LiabilitiesError> {
            let l = lines
                .next()
                .ok_or_else(|| bad(&format!("no {name} line")))?;
            l.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(' '))
                .ok_or_else(|| bad(&format!("expected the {name} line")))
        };
        let seed = Hash32::parse(field("seed")?).map_err(|_| bad("seed is not 64 hex digits"))?;
        let last = match field("last")? {
            "-" => None,
            k => Some(Hash32::parse(k).map_err(|_| bad("last is not 64 hex digits"))?),
        };
        let liabilities = TreeBuilder::from_text(TreeKind::Liabilities, field("liabilities")?)?;
        let receivables = TreeBuilder::from_text(TreeKind::Receivables, field("receivables")?)?;
        if last.is_some() != (liabilities.count() > 0) {
            return Err(bad("last key and ledger count disagree"));
        }
        Ok(Self {
            seed: Seed(seed.0),
            last_key: last,
            liabilities,
            receivables,
        })
    }
}
