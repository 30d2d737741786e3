//! Proof of liabilities (issue 31; docs/liabilities.md): a vendor states
//! what it owes all its customers at the end of a period, and each customer
//! checks that its own balance is counted in that total.
//!
//! Two Merkle **sum** trees per statement, in RFC 9162's shape (split at the
//! largest power of two below n, no duplicated last leaf):
//!
//! - the **liabilities** tree: one leaf per ledger of the tenant, whose
//!   amount is the ledger's balance at the end of the period when it is
//!   positive, and 0 otherwise;
//! - the **receivables** tree: one leaf per ledger whose balance is
//!   negative (what that customer owes the vendor), as its absolute value.
//!
//! Negative amounts never enter a tree, so what customers owe the vendor is
//! never netted against what the vendor owes them: a fake negative leaf
//! cannot shrink the liabilities total (the attack of Binance's
//! zkmerkle-proof-of-solvency and the proof-of-reserves tool issues on
//! missing range checks).
//!
//! Every node commits to **both children's hashes and both children's
//! sums** (Hu, Zhang and Guo's fix to Maxwell's tree, ePrint 2018/1139;
//! DAPOL and Summa do the same): a prover cannot show two customers
//! different sums for one node. Every amount in a tree, leaf or sum, is
//! checked to be from 0 to [`AMOUNT_WHOLE_MAX`] with exact decimal
//! arithmetic that fails instead of wrapping (Summa's overflow checks).
//!
//! Every hash input here starts with the byte [`DOMAIN_BYTE`] (0xFF) and a
//! tag naming what it is. 0xFF never occurs in UTF-8, so no fact's
//! `contentHash`, delta `itemHash` (RFC 8785 JSON) or signed note hashes
//! the same bytes; RFC 9162 leaves and nodes (proof roots, the logs) start
//! with 0x00 or 0x01. So no hash of a liabilities tree or statement equals
//! any other hash the service makes (short of a SHA-256 collision): a
//! sibling hash on a customer's path is never another party's access key,
//! and the statement's log item is never a fact's or a delta's.
//!
//! Pure: salts and the shuffle come from a seed the caller passes in
//! ([`statement::Seed`]); nothing here reads a clock or a random source.

use crate::amount::Amount;
use crate::hash::Hash32;
use sha2::{Digest, Sha256};
use std::fmt;

pub mod proof;
pub mod receipt;
#[cfg(all(feature = "server", any(test, feature = "sample")))]
pub mod sample;
pub mod statement;
pub mod tree;

#[cfg(test)]
mod tests;

pub use proof::{verify_path, LeafProof, LogEvidence, ProofDocument};
pub use statement::{ledger_id, Seed, Statement, StatementBuilder, TreeSummary};
pub use tree::{NodeAddr, SumTree, TreeBuilder};

/// The construction's name, in every statement and proof document.
pub const SCHEME: &str = "bvs-liabilities-v1";

/// First byte of every hash input of this module: never in UTF-8 text,
/// never RFC 9162's 0x00 (leaf) or 0x01 (node).
pub const DOMAIN_BYTE: u8 = 0xFF;

/// Largest amount anywhere in a tree (a leaf, a sibling's sum, a node's
/// sum, a total), in whole units: 10^20. // spec: silent; far above any
/// real balance sheet, and twice it still fits an `Amount` (i128 units of
/// 10^-18 hold up to 1.7·10^20), so one addition of two checked sums
/// cannot wrap before it is checked.
pub const AMOUNT_WHOLE_MAX: i128 = 100_000_000_000_000_000_000;
/// [`AMOUNT_WHOLE_MAX`] in `Amount` units (10^-18).
const AMOUNT_UNITS_MAX: i128 = AMOUNT_WHOLE_MAX * 1_000_000_000_000_000_000;

/// Most leaves in one tree. // spec: silent; issue 31 plans for 100,000
/// ledgers; 2^32 keeps every index a JavaScript number and every path at
/// most 32 siblings.
pub const LEAVES_MAX: u64 = 1 << 32;

/// Which of a statement's two trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TreeKind {
    /// Non-negative balances: what the vendor owes.
    Liabilities,
    /// Negative balances, as absolute values: what customers owe the vendor.
    Receivables,
}

impl TreeKind {
    /// `liabilities` / `receivables`, as documents name them.
    pub const fn name(self) -> &'static str {
        match self {
            TreeKind::Liabilities => "liabilities",
            TreeKind::Receivables => "receivables",
        }
    }

    /// The leaf tag (23 ASCII bytes).
    pub const fn leaf_tag(self) -> &'static [u8; 23] {
        match self {
            TreeKind::Liabilities => b"bvs-liabilities-leaf-v1",
            TreeKind::Receivables => b"bvs-receivables-leaf-v1",
        }
    }

    /// The node tag (23 ASCII bytes).
    pub const fn node_tag(self) -> &'static [u8; 23] {
        match self {
            TreeKind::Liabilities => b"bvs-liabilities-node-v1",
            TreeKind::Receivables => b"bvs-receivables-node-v1",
        }
    }

    /// The root tag (23 ASCII bytes).
    pub const fn root_tag(self) -> &'static [u8; 23] {
        match self {
            TreeKind::Liabilities => b"bvs-liabilities-root-v1",
            TreeKind::Receivables => b"bvs-receivables-root-v1",
        }
    }
}

impl fmt::Display for TreeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A leaf's random salt: 32 bytes, shown as 64 hex digits. It keeps a
/// sibling's leaf hash from revealing whose ledger it is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Salt(pub [u8; 32]);

impl Salt {
    /// # Errors
    /// As [`Hash32::parse`].
    pub fn parse(text: &str) -> Result<Salt, crate::hash::HashError> {
        Hash32::parse(text).map(|h| Salt(h.0))
    }

    pub fn to_hex(&self) -> String {
        crate::hash::to_hex(&self.0)
    }
}

impl fmt::Debug for Salt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Salt({})", self.to_hex())
    }
}

/// A node of a sum tree, or a leaf: its hash and the sum under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SumNode {
    pub hash: Hash32,
    pub sum: Amount,
}

/// Why a tree could not be built, a state not read, or a path not verified.
/// Each variant is one precise reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiabilitiesError {
    #[error("{what} is negative ({amount}): a sum tree holds no negative amount")]
    Negative { what: String, amount: Amount },
    #[error("{what} ({amount}) is above the largest amount a statement holds (10^20)")]
    TooLarge { what: String, amount: Amount },
    #[error("{what} overflows")]
    Overflow { what: String },
    #[error("a tree holds at most 2^32 leaves")]
    TooManyLeaves,
    #[error("a statement needs at least one ledger")]
    NoLedgers,
    #[error(
        "ledger {ledger} is out of the statement's order: ledgers are added in ascending order \
         key (the shuffle), each once"
    )]
    OutOfOrder { ledger: Hash32 },
    #[error("stored node {0} was needed but not provided")]
    MissingNode(NodeAddr),
    #[error("leaf index {index} is not below the leaf count {count}")]
    IndexOutOfRange { index: u64, count: u64 },
    #[error("the path has {got} siblings; leaf {index} of {count} has exactly {expected}")]
    WrongPathLength {
        index: u64,
        count: u64,
        expected: usize,
        got: usize,
    },
    #[error("the path leads to root {got}, the statement's root is {want}")]
    RootMismatch { got: Hash32, want: Hash32 },
    #[error("the path adds up to {got}, the statement's total is {want}")]
    TotalMismatch { got: Amount, want: Amount },
    #[error("not a builder state: {0}")]
    MalformedState(String),
}

/// Checks that `amount` may stand in a tree: from 0 to 10^20.
///
/// # Errors
/// [`LiabilitiesError::Negative`] or [`LiabilitiesError::TooLarge`], naming `what`.
pub fn check_amount(what: impl Fn() -> String, amount: Amount) -> Result<(), LiabilitiesError> {
    if amount.signum() < 0 {
        return Err(LiabilitiesError::Negative {
            what: what(),
            amount,
        });
    }
    if amount.to_units() > AMOUNT_UNITS_MAX {
        return Err(LiabilitiesError::TooLarge {
            what: what(),
            amount,
        });
    }
    Ok(())
}

/// An amount's canonical decimal text (as `Amount`'s `Display` writes it)
/// on the stack: hashing a node writes two, and a `String` each was most of
/// the cost of building a tree (bench/README.md).
struct AmountText {
    buf: [u8; 48],
}

/// `n / 10^9` and `n % 10^9` for a 128-bit `n`, by long division on 32-bit
/// limbs: four 64-bit divisions by a constant (multiplications), where a
/// 128-bit division is a library call several times slower, twice per sum
/// on every step of a path.
fn div_rem_1e9(n: u128) -> (u128, u64) {
    let mut q = 0u128;
    let mut rem = 0u64;
    for shift in [96u32, 64, 32, 0] {
        let cur = (rem << 32) | ((n >> shift) as u32 as u64);
        q |= u128::from(cur / 1_000_000_000) << shift;
        rem = cur % 1_000_000_000;
    }
    (q, rem)
}

impl AmountText {
    fn new() -> Self {
        Self { buf: [0; 48] }
    }

    /// The text of `amount`: `-` for a negative, the whole part, and the
    /// fraction without trailing zeros after a point when there is one.
    fn of(&mut self, amount: Amount) -> &[u8] {
        let units = amount.to_units();
        let (q, low) = div_rem_1e9(units.unsigned_abs());
        let (mut whole, high) = div_rem_1e9(q);
        // Written backwards from the end: fraction, point, whole, sign.
        let mut at = self.buf.len();
        if high != 0 || low != 0 {
            // All 18 decimals, two at a time, then the trailing zeros cut.
            let end = at;
            at = self.pairs(at, low, 9);
            at = self.pairs(at, high, 9);
            let mut keep = end;
            while self.buf[keep - 1] == b'0' {
                keep -= 1;
            }
            self.buf.copy_within(at..keep, at + (end - keep));
            at += end - keep;
            at -= 1;
            self.buf[at] = b'.';
        }
        // The whole part is below 2^68: 64-bit steps once it fits.
        while whole > u128::from(u64::MAX) {
            let (q, r) = div_rem_1e9(whole);
            at = self.pairs(at, r, 9);
            whole = q;
        }
        at = self.pairs(at, whole as u64, 1);
        if units < 0 {
            at -= 1;
            self.buf[at] = b'-';
        }
        &self.buf[at..]
    }

    /// Writes `v` in decimal ending just before `at`, at least `min` digits
    /// (zero-padded), two digits per step; returns where it starts.
    fn pairs(&mut self, mut at: usize, mut v: u64, min: usize) -> usize {
        let end = at;
        while v >= 100 {
            let d = (v % 100) as usize * 2;
            v /= 100;
            at -= 2;
            self.buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
        }
        if v >= 10 {
            let d = v as usize * 2;
            at -= 2;
            self.buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
        } else {
            at -= 1;
            self.buf[at] = b'0' + v as u8;
        }
        while end - at < min {
            at -= 1;
            self.buf[at] = b'0';
        }
        at
    }
}

/// "00", "01", ... "99": two decimal digits per lookup.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Most bytes hashed by [`digest`] in one go: four SHA-256 blocks less the
/// padding's 9. Every input here is shorter (a node with two of the longest
/// sums, 41 characters each, is 171 bytes).
const INPUT_BYTES_MAX: usize = 4 * 64 - 9;

/// SHA-256 over the parts, laid out with their padding in blocks on the
/// stack and compressed directly, as `merkle` does for its fixed-length
/// inputs: no hasher buffer, no length bookkeeping (checking a path is
/// nothing but these hashes; bench/README.md).
fn digest(parts: &[&[u8]]) -> Hash32 {
    let mut blocks = [[0u8; 64]; 4];
    let flat = blocks.as_flattened_mut();
    let mut len = 0;
    for p in parts {
        let end = len + p.len();
        if end > INPUT_BYTES_MAX {
            // Unreachable for the inputs above; kept total rather than panicking.
            return digest_streamed(parts);
        }
        flat[len..end].copy_from_slice(p);
        len = end;
    }
    flat[len] = 0x80;
    let used = (len + 9).div_ceil(64);
    flat[used * 64 - 8..used * 64].copy_from_slice(&(len as u64 * 8).to_be_bytes());
    crate::merkle::compress(&blocks[..used])
}

fn digest_streamed(parts: &[&[u8]]) -> Hash32 {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    Hash32(h.finalize().into())
}

/// A leaf's hash: SHA-256(0xFF ‖ leaf tag ‖ salt ‖ ledgerId ‖ amount), the
/// amount in its canonical decimal text (`42.1`, `0`). Any amount is hashed
/// as given; [`leaf`] checks the range first.
pub fn leaf_hash(kind: TreeKind, salt: &Salt, ledger: &Hash32, amount: Amount) -> Hash32 {
    let mut text = AmountText::new();
    digest(&[
        &[DOMAIN_BYTE],
        kind.leaf_tag(),
        &salt.0,
        &ledger.0,
        text.of(amount),
    ])
}

/// A checked leaf: its hash and its amount as its sum.
///
/// # Errors
/// The amount is negative or above 10^20.
pub fn leaf(
    kind: TreeKind,
    salt: &Salt,
    ledger: &Hash32,
    amount: Amount,
) -> Result<SumNode, LiabilitiesError> {
    check_amount(|| format!("the {kind} leaf's amount"), amount)?;
    Ok(SumNode {
        hash: leaf_hash(kind, salt, ledger, amount),
        sum: amount,
    })
}

/// A node's hash: SHA-256(0xFF ‖ node tag ‖ left hash ‖ right hash ‖ left
/// sum ‖ `\n` ‖ right sum), sums in canonical decimal text. Any sums are
/// hashed as given; [`parent`] checks them first.
pub fn node_hash(kind: TreeKind, left: &SumNode, right: &SumNode) -> Hash32 {
    let (mut l, mut r) = (AmountText::new(), AmountText::new());
    digest(&[
        &[DOMAIN_BYTE],
        kind.node_tag(),
        &left.hash.0,
        &right.hash.0,
        l.of(left.sum),
        b"\n",
        r.of(right.sum),
    ])
}

/// The checked parent of two nodes: both sums in range, their sum computed
/// exactly and in range.
///
/// # Errors
/// A sum that is negative, above 10^20, or whose addition overflows.
pub fn parent(
    kind: TreeKind,
    left: &SumNode,
    right: &SumNode,
) -> Result<SumNode, LiabilitiesError> {
    check_amount(|| "a left sum".into(), left.sum)?;
    check_amount(|| "a right sum".into(), right.sum)?;
    let sum = left
        .sum
        .checked_add(right.sum)
        .map_err(|_| LiabilitiesError::Overflow {
            what: "a node's sum".into(),
        })?;
    check_amount(|| "a node's sum".into(), sum)?;
    Ok(SumNode {
        hash: node_hash(kind, left, right),
        sum,
    })
}

/// The top of an empty tree (a statement with no negative balance has an
/// empty receivables tree): 32 zero bytes with a sum of 0. Only ever sealed
/// by [`root_hash`] with a leaf count of 0, never a node's child.
pub const EMPTY_TOP: SumNode = SumNode {
    hash: Hash32([0; 32]),
    sum: Amount::ZERO,
};

/// A tree's root, as a statement states it: SHA-256(0xFF ‖ root tag ‖ top
/// node hash ‖ total ‖ `\n` ‖ leaf count), the total and count in decimal
/// text. Sealing the leaf count into the root means a path checks the
/// tree's size too: a statement that states another count than the tree
/// has fails every customer's check, not only those at its right edge
/// (RFC 9162's paths alone fit more than one size).
pub fn root_hash(kind: TreeKind, top: &SumNode, leaf_count: u64) -> Hash32 {
    let (mut total, count) = (AmountText::new(), leaf_count.to_string());
    digest(&[
        &[DOMAIN_BYTE],
        kind.root_tag(),
        &top.hash.0,
        total.of(top.sum),
        b"\n",
        count.as_bytes(),
    ])
}

/// The root of a tree with no leaves.
pub fn empty_root(kind: TreeKind) -> SumNode {
    SumNode {
        hash: root_hash(kind, &EMPTY_TOP, 0),
        sum: Amount::ZERO,
    }
}
