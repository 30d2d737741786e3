//! A small signed log built with this crate's own functions, the way the
//! worker builds its answers: fixtures for the verifiers' tests (core,
//! verifier-wasm, the CLI), the fuzz targets and the bench (feature
//! `sample`, never in a production build). Pure: the seed and the time
//! come in as arguments.

use super::{CheckpointLeaf, PublicAnswer, PublicProof, PublicRecord, PublicSummary};
use crate::amount::Amount;
use crate::derive::{self, DerivedDelta};
use crate::hash::Hash32;
use crate::item::{item_hash, DeltaContent};
use crate::log::{self, StoredHashes};
use crate::merkle::{self, LeafIndex, TreeSize};
use crate::note;
use crate::receipt::{ProvenItem, Receipt, ReceiptProof, ReceiptVerification};
use crate::time::format_iso_ms;
use crate::types::Period;

/// Everything a verifier is handed, as text the API would send.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The log's verifier key (`<origin>+<id>+<key>`).
    pub public_key: String,
    pub receipt: Receipt,
    /// `GET /api/v1/balance/receipt/...` answer, with its envelope.
    pub receipt_json: String,
    /// `GET /api/v1/verify/{root}` answer for the receipt's deltas as one
    /// submission, with its envelope.
    pub public_json: String,
    pub proof_root: Hash32,
    /// A signed head of an older, smaller tree of the same log.
    pub old_head: String,
    /// The signed head every proof here is into.
    pub head: String,
    /// Consistency proof from `old_head` to `head`, hex.
    pub consistency_proof: Vec<String>,
    /// Every item of the log, in order, and one leaf with its proof.
    pub log_items: Vec<Hash32>,
}

/// Why a sample could not be built: the first error of the functions it
/// is built with, in their words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SampleError(String);

pub(crate) fn err(e: impl std::fmt::Display) -> SampleError {
    SampleError(e.to_string())
}

/// A log of `noise` other items with the deltas of `amounts` (for
/// `cust_42`, starting balance 10) interleaved, signed by `seed` as
/// `origin`, declared at `t0_ms`.
///
/// # Errors
/// A bad origin or amount, or a log limit.
pub fn build(
    origin: &str,
    seed: &[u8; 32],
    noise: u64,
    amounts: &[&str],
    t0_ms: i64,
) -> Result<Sample, SampleError> {
    let (log_items, contents, leaf_of) = log_items(noise, amounts, t0_ms)?;
    let log = SignedLog::of(origin, seed, &log_items)?;
    let hashes: Vec<Hash32> = log_items
        .iter()
        .enumerate()
        .filter(|(i, _)| leaf_of.contains(&(*i as u64)))
        .map(|(_, h)| *h)
        .collect();
    let proven = Proven::of(&contents, &leaf_of, &log, merkle::root(&hashes), t0_ms)?;
    let items_root = proven.items_root;
    let block_ms = t0_ms + 1_000;
    let receipt = proven.receipt(&log, hashes, t0_ms)?;
    let answer = answer(proven.records, &log, items_root, block_ms)?;
    let envelope = |data: String| format!(r#"{{"success":true,"statusCode":200,"data":{data}}}"#);
    Ok(Sample {
        public_key: log.public_key,
        receipt_json: envelope(serde_json::to_string(&receipt).map_err(err)?),
        public_json: envelope(serde_json::to_string(&answer).map_err(err)?),
        receipt,
        proof_root: items_root,
        old_head: log.old_head,
        head: log.head,
        consistency_proof: log.consistency_proof,
        log_items,
    })
}

/// The log's items: `noise` others, then each delta of `amounts` followed
/// by one more other; with the deltas' contents and their leaves.
#[allow(clippy::type_complexity)]
fn log_items(
    noise: u64,
    amounts: &[&str],
    t0_ms: i64,
) -> Result<(Vec<Hash32>, Vec<DeltaContent>, Vec<u64>), SampleError> {
    let mut log_items: Vec<Hash32> = (0..noise)
        .map(|i| Hash32::digest(&i.to_be_bytes()))
        .collect();
    let mut contents = Vec::new();
    let mut leaf_of = Vec::new();
    for (k, a) in amounts.iter().enumerate() {
        let content = DeltaContent {
            asset: crate::types::Asset::Default,
            conditions: Default::default(),
            anchor_id: format!("anc_{k:04}"),
            customer_id: "cust_42".into(),
            delta: Amount::parse(a).map_err(err)?,
            reason: format!("invoice {k}"),
            reference_id: (k % 2 == 0).then(|| format!("ref-{k}")),
            // One delta carries metadata, so its itemHash goes through
            // the RFC 8785 form of an object with numbers.
            metadata: (k == 1)
                .then(|| crate::json::parse(r#"{"invoice": 17, "lines": [1.5, "x"]}"#))
                .transpose()
                .map_err(err)?,
            declared_timestamp: format_iso_ms(t0_ms + k as i64),
        };
        leaf_of.push(log_items.len() as u64);
        log_items.push(item_hash(&content).map_err(err)?);
        log_items.push(Hash32::digest(format!("noise {k}").as_bytes()));
        contents.push(content);
    }
    Ok((log_items, contents, leaf_of))
}

/// The log stored and signed: its head, an older head of half its size
/// with the consistency proof between them, and its key.
struct SignedLog {
    store: StoredHashes,
    size: TreeSize,
    head: String,
    old_head: String,
    consistency_proof: Vec<String>,
    public_key: String,
}

impl SignedLog {
    fn of(origin: &str, seed: &[u8; 32], log_items: &[Hash32]) -> Result<Self, SampleError> {
        let mut store = StoredHashes::new();
        for (k, v) in log::append(TreeSize(0), log_items, &StoredHashes::new()).map_err(err)? {
            store.insert(k, v);
        }
        let size = TreeSize(log_items.len() as u64);
        let root = log::tree_root(size, &store).map_err(err)?;
        let head = note::sign_tree_head(origin, size, &root, seed).map_err(err)?;
        let old_size = TreeSize(size.0.div_ceil(2));
        let old_root = log::tree_root(old_size, &store).map_err(err)?;
        let old_head = note::sign_tree_head(origin, old_size, &old_root, seed).map_err(err)?;
        let consistency_proof = log::consistency_proof(old_size, size, &store)
            .map_err(err)?
            .iter()
            .map(Hash32::to_hex)
            .collect();
        let public_key = note::public_key_string(origin, seed).map_err(err)?;
        Ok(Self {
            store,
            size,
            head,
            old_head,
            consistency_proof,
            public_key,
        })
    }
}

/// Each delta with its proof, as a receipt and a public answer list it.
struct Proven {
    items_root: Hash32,
    starting: Amount,
    balance: Amount,
    deltas: Vec<DerivedDelta>,
    items: Vec<ProvenItem>,
    records: Vec<PublicRecord>,
}

impl Proven {
    fn of(
        contents: &[DeltaContent],
        leaf_of: &[u64],
        log: &SignedLog,
        items_root: Hash32,
        t0_ms: i64,
    ) -> Result<Self, SampleError> {
        let starting = Amount::from_int(10).map_err(err)?;
        let mut p = Proven {
            items_root,
            starting,
            balance: starting,
            deltas: Vec::new(),
            items: Vec::new(),
            records: Vec::new(),
        };
        for (k, c) in contents.iter().enumerate() {
            p.push(k, c, LeafIndex(leaf_of[k]), log, t0_ms)?;
        }
        Ok(p)
    }

    fn push(
        &mut self,
        k: usize,
        c: &DeltaContent,
        leaf: LeafIndex,
        log: &SignedLog,
        t0_ms: i64,
    ) -> Result<(), SampleError> {
        let block_ms = t0_ms + 1_000;
        let h = item_hash(c).map_err(err)?;
        let proof = log::inclusion_proof(leaf, log.size, &log.store).map_err(err)?;
        self.balance = self.balance.checked_add(c.delta).map_err(err)?;
        self.deltas.push(DerivedDelta {
            anchor_id: c.anchor_id.clone(),
            item_hash: h,
            items_root: self.items_root,
            receipt_id: self.items_root,
            delta: c.delta,
            reason: Some(c.reason.clone()),
            reference_id: c.reference_id.clone(),
            window: Period::containing(t0_ms),
            declared_timestamp: t0_ms + k as i64,
            block_timestamp: block_ms,
            data_purged: false,
            verified: true,
            seq: k as u64 + 1,
            balance_after: self.balance,
        });
        self.records.push(PublicRecord {
            anchor_id: c.anchor_id.clone(),
            item_hash: Some(h),
            log_leaf_hash: None,
            ledger_id: None,
            delta: Some(c.delta),
            asset: c.asset.clone(),
            leaf_index: Some(leaf),
            inclusion_proof: proof.clone(),
            block_timestamp: Some(format_iso_ms(block_ms)),
            declared_timestamp: Some(c.declared_timestamp.clone()),
        });
        self.items.push(ProvenItem {
            anchor_id: c.anchor_id.clone(),
            item_hash: h,
            leaf_index: leaf,
            inclusion_proof: proof,
            delta: c.delta,
            raw: Some(c.clone()),
        });
        Ok(())
    }

    /// The receipt of `cust_42` over these deltas.
    fn receipt(
        &self,
        log: &SignedLog,
        hashes: Vec<Hash32>,
        t0_ms: i64,
    ) -> Result<Receipt, SampleError> {
        let block_ms = t0_ms + 1_000;
        let items_root = self.items_root;
        Ok(Receipt {
            asset: crate::types::Asset::Default,
            customer_id: "cust_42".into(),
            period: Some(Period::containing(t0_ms).to_string()),
            generated_at: format_iso_ms(block_ms + 5_000),
            deltas_count: self.deltas.len() as u64,
            starting_balance: self.starting,
            final_balance: self.balance,
            items_root,
            receipt_id: items_root,
            proof_root: items_root,
            latest_checkpoint: None,
            window_summaries: derive::window_summaries(&self.deltas).map_err(err)?,
            deltas: self.deltas.clone(),
            verification: ReceiptVerification {
                message: "Check with the log's public key".into(),
                item_hashes: hashes,
                proof_root: items_root,
                verify_url: format!("/verify/{items_root}"),
            },
            proof: ReceiptProof {
                hash_scheme: log::HASH_SCHEME.name().into(),
                tree_head: log.head.clone(),
                public_key: log.public_key.clone(),
                items: self.items.clone(),
                witnessed: None,
            },
            log: None,
            agreement: None,
            refusals: Vec::new(),
            starting_sequence: None,
        })
    }
}

/// The public answer for the deltas as one submission.
fn answer(
    records: Vec<PublicRecord>,
    log: &SignedLog,
    items_root: Hash32,
    block_ms: i64,
) -> Result<PublicAnswer, SampleError> {
    let net = Amount::checked_sum(records.iter().filter_map(|r| r.delta)).map_err(err)?;
    Ok(PublicAnswer {
        verified: true,
        summary: PublicSummary {
            kind: "submission".into(),
            environment: "sandbox".into(),
            proof_root: items_root,
            item_count: records.len() as u64,
            net_amount: Some(net),
            period: None,
            ledger_id: None,
            first_verified_at: Some(format_iso_ms(block_ms)),
            last_verified_at: Some(format_iso_ms(block_ms)),
            status: Some("VERIFIED".into()),
            issued_as: Vec::new(),
            amounts_withheld: false,
            records_check: None,
        },
        records,
        verification: PublicProof {
            public_ledger_url: None,
            hash_scheme: log::HASH_SCHEME.name().into(),
            tree_head: log.head.clone(),
            tree_size: log.size,
            public_key: log.public_key.clone(),
            log: None,
            witnessed: None,
            items_root,
            checkpoint_leaf: None::<CheckpointLeaf>,
            message: None,
        },
        pagination: None,
    })
}
