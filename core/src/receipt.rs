//! The receipt the worker emits and anyone verifies (see `verify`).
//!
//! Top-level fields follow the spec's Receipt; `proof` adds what a client
//! needs to check it without trusting the server: the signed tree head,
//! the log's public key and, per delta, its leaf index and inclusion proof
//! into that head, plus the raw content while retention keeps it.

use crate::amount::Amount;
use crate::conditions::{Conditions, Failed, Position, Refusal, RefusalCode};
use crate::derive::{DerivedDelta, WindowSummary};
use crate::hash::Hash32;
use crate::item::DeltaContent;
use crate::merkle::LeafIndex;
use crate::types::Asset;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    pub customer_id: String,
    /// The asset every listed delta is of (issue 43); absent for the
    /// default asset.
    #[serde(default, skip_serializing_if = "Asset::is_default")]
    pub asset: Asset,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    pub generated_at: String,
    pub deltas_count: u64,
    pub starting_balance: Amount,
    pub final_balance: Amount,
    /// Merkle root over the listed deltas' itemHashes, in ledger order.
    pub items_root: Hash32,
    /// Same value as `items_root`.
    pub receipt_id: Hash32,
    /// Same value as `items_root`: the key of the public verify route.
    pub proof_root: Hash32,
    #[serde(default)]
    pub latest_checkpoint: Option<String>,
    pub deltas: Vec<DerivedDelta>,
    #[serde(default)]
    pub window_summaries: Vec<WindowSummary>,
    pub verification: ReceiptVerification,
    pub proof: ReceiptProof,
    /// The log (shard) the receipt is proven in, as the service names it
    /// (`None` when read back: verifiers take the log from the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogRef>,
    /// For a receipt whose deltas are exactly a committed checkpoint of
    /// this customer (same merkleRoot): the customer's key binding and
    /// signed statements about it, each with its inclusion proof into
    /// `proof.treeHead` (docs/agreement.md). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<ReceiptAgreement>,
    /// The debits of this customer's asset the sequencer refused within
    /// the receipt's span (issue 43), each a log item of its own with its
    /// inclusion proof into `proof.treeHead`; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<ProvenRefusal>,
    /// The number of the asset's verified deltas before the first listed
    /// one: 0 for a whole history. Only with `refusals`, whose `sequence`
    /// counts from the ledger's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_sequence: Option<u64>,
}

/// A refused delta as a receipt lists it: the refusal item's fields
/// (docs/hashes.md "Refusals"; the customer and asset are the receipt's),
/// the refusal's hash and its inclusion into the receipt's tree head.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvenRefusal {
    pub anchor_id: String,
    /// The refused delta's item hash.
    pub item_hash: Hash32,
    pub delta: Amount,
    /// `balance_below_floor` or `sequence_mismatch`.
    pub code: String,
    /// The condition it failed: `{balanceAtLeast}` or `{expectedSequence}`.
    pub condition: Conditions,
    /// The asset's verified deltas before it, and the balance after them.
    pub sequence: u64,
    pub balance: Amount,
    /// The floor was the tenant's default for the asset.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tenant_default: bool,
    /// SHA-256 of the refusal item: its leaf in the log.
    pub refusal_hash: Hash32,
    pub leaf_index: LeafIndex,
    /// Empty in derive's listing (a receipt carries the proofs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inclusion_proof: Vec<Hash32>,
}

impl ProvenRefusal {
    /// The refusal item it shows, for `customer_id`'s `asset`; `None` for
    /// a code and condition that do not go together.
    pub fn refusal(&self, customer_id: &str, asset: &Asset) -> Option<Refusal> {
        let failed = match (
            RefusalCode::parse(&self.code)?,
            self.condition.balance_at_least,
            self.condition.expected_sequence,
        ) {
            (RefusalCode::BalanceBelowFloor, Some(floor), None) => Failed::Floor {
                balance_at_least: floor,
                tenant_default: self.tenant_default,
            },
            (RefusalCode::SequenceMismatch, None, Some(expected)) if !self.tenant_default => {
                Failed::Sequence {
                    expected_sequence: expected,
                }
            }
            _ => return None,
        };
        Some(Refusal {
            item_hash: self.item_hash,
            customer_id: customer_id.to_owned(),
            asset: asset.clone(),
            delta: self.delta,
            failed,
            at: Position {
                sequence: self.sequence,
                balance: self.balance,
            },
        })
    }
}

/// The agreement side of a receipt: the checkpoint it answers for, what
/// the customer signs to agree, and what the customer signed. Only items
/// already in the log at the receipt's tree head are listed, each with
/// its inclusion proof; checked by `bvs_core::agreement::receipt_checks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptAgreement {
    pub checkpoint_id: String,
    /// The checkpoint: `origin`, `ledgerId`, `period`, `merkleRoot`,
    /// `deltaCount`.
    #[serde(flatten)]
    pub checkpoint: CheckpointFields,
    /// The checkpoint's closing balance (the receipt's finalBalance).
    pub balance: Amount,
    /// The exact `balance` statement a customer who agrees signs.
    pub balance_statement: String,
    /// The ledger's counterparty key, once its binding is in the log.
    #[serde(default)]
    pub counterparty_key: Option<String>,
    /// The signed key binding of that key (a log item).
    #[serde(default)]
    pub key_statement: Option<String>,
    /// Where the key binding is in the log.
    #[serde(default)]
    pub key_proof: Option<LoggedItem>,
    /// The customer's signed `balance` and `dispute` statements about
    /// this checkpoint, oldest first: by the current key and by earlier
    /// keys of the ledger (each names its key).
    #[serde(default)]
    pub statements: Vec<ReceiptStatement>,
    /// Every key binding of the ledger in the log at the receipt's tree
    /// head, oldest first (the last is `counterpartyKey`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<ReceiptKey>,
    /// One line per key change not signed by the key before it ("key
    /// changed on …, not signed by the previous key").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_warnings: Vec<String>,
}

/// One key binding of a ledger, as the log holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptKey {
    pub counterparty_key: String,
    /// The signed binding (canonical: the key's own line and, for a
    /// rotation, the previous key's).
    pub key_statement: String,
    pub registered_at: String,
    /// `None` for the ledger's first key; whether the key before it signed
    /// this binding (a rotation by the customer) or not (a change through
    /// an invitation from the vendor only).
    #[serde(default)]
    pub signed_by_previous: Option<bool>,
    pub key_proof: LoggedItem,
}

/// A log item with its inclusion proof into the receipt's tree head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedItem {
    pub item_hash: Hash32,
    pub leaf_index: LeafIndex,
    pub inclusion_proof: Vec<Hash32>,
}

/// A signed statement about the checkpoint, as the log holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptStatement {
    /// `balance` (agreed) or `dispute`.
    pub kind: String,
    /// The signed note, exactly as signed.
    pub statement: String,
    /// The key that signed it (absent in receipts from before keys
    /// changed: then the current key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterparty_key: Option<String>,
    pub recorded_at: String,
    pub item_hash: Hash32,
    pub leaf_index: LeafIndex,
    pub inclusion_proof: Vec<Hash32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptVerification {
    pub message: String,
    pub item_hashes: Vec<Hash32>,
    pub proof_root: Hash32,
    pub verify_url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptProof {
    /// How the log hashes its leaves (`bvs-log-v1`, see
    /// [`crate::merkle::HashScheme`]); a verifier refuses a name it does
    /// not know.
    pub hash_scheme: String,
    /// Signed tree head (C2SP signed note text) that includes every item.
    pub tree_head: String,
    /// The log's verifier key string (`<origin>+<id>+<key>`).
    pub public_key: String,
    /// One per entry of `deltas`, same order.
    pub items: Vec<ProvenItem>,
    /// Whether a quorum of the log's witnesses cosigned `tree_head`
    /// (issue 28; the cosignature lines are in the note). Set by the
    /// service; verifiers check the cosignatures themselves, so readers
    /// leave it `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witnessed: Option<bool>,
}

/// How a document names its log: environment, shard, the log's path name
/// and origin, and where to read its checkpoint and key (the log list has
/// the same). Fields in the order the service has always listed them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogRef {
    pub checkpoint_url: String,
    pub environment: String,
    pub key_url: String,
    pub name: String,
    pub origin: String,
    pub shard: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvenItem {
    pub anchor_id: String,
    pub item_hash: Hash32,
    pub leaf_index: LeafIndex,
    pub inclusion_proof: Vec<Hash32>,
    pub delta: Amount,
    /// The hashed content while retention keeps it; `None` once purged.
    #[serde(default)]
    pub raw: Option<DeltaContent>,
}

// ------------------------------------------------------------------ reading a receipt without serde

/// A checkpoint (`agreement::CheckpointRef`) as a receipt's agreement side and the public verify
/// answer's spell it, as text and hashes a verifier checks rather than
/// trusts (`origin` and `period` are parsed by the check, so a malformed
/// one fails that check, not the reading of the document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointFields {
    /// The log's origin, as its signed tree heads name it.
    pub origin: String,
    pub ledger_id: Hash32,
    pub period: String,
    pub merkle_root: Hash32,
    pub delta_count: u64,
}

use crate::error::FieldError;
use crate::json::{Fields, ReadError, Value};

impl Receipt {
    /// Reads a receipt (the receipt route's `data`) from a parsed JSON
    /// value with [`crate::json`], as the serde derive would: unknown
    /// fields are ignored, optional fields may be absent or null.
    ///
    /// # Errors
    /// The first field that is missing or malformed, by its path
    /// (`deltas[3].itemHash: must be 64 lowercase hex digits`).
    pub fn from_json(value: &Value) -> Result<Receipt, FieldError> {
        read_receipt(value).map_err(|e| *e)
    }
}

fn read_receipt(value: &Value) -> Result<Receipt, ReadError> {
    // Borrowed and Copy fields first, owned ones last: an early `?`
    // then has nothing to drop, which keeps this code small.
    let f = Fields::of(value, String::new())?;
    let v = f.object("verification")?;
    let p = f.object("proof")?;
    let customer_id = f.string("customerId")?;
    let asset = read_asset(&f)?;
    let period = f.optional_string("period")?;
    let generated_at = f.string("generatedAt")?;
    let deltas_count = f.u64("deltasCount")?;
    let starting_balance = f.amount("startingBalance")?;
    let final_balance = f.amount("finalBalance")?;
    let items_root = f.hash("itemsRoot")?;
    let receipt_id = f.hash("receiptId")?;
    let proof_root = f.hash("proofRoot")?;
    let latest_checkpoint = f.optional_string("latestCheckpoint")?;
    let message = v.string("message")?;
    let verification_root = v.hash("proofRoot")?;
    let verify_url = v.string("verifyUrl")?;
    let hash_scheme = p.string("hashScheme")?;
    let tree_head = p.string("treeHead")?;
    let public_key = p.string("publicKey")?;
    #[cfg(feature = "receipt-agreement")]
    let agreement = match f.optional("agreement") {
        None => None,
        Some(_) => Some(read_agreement(&f.object("agreement")?)?),
    };
    #[cfg(not(feature = "receipt-agreement"))]
    let agreement = None;
    Ok(Receipt {
        agreement,
        deltas: f.each("deltas", true, read_delta)?,
        window_summaries: f.each("windowSummaries", false, read_window)?,
        verification: ReceiptVerification {
            item_hashes: v.hashes("itemHashes", true)?,
            message: message.to_owned(),
            proof_root: verification_root,
            verify_url: verify_url.to_owned(),
        },
        proof: ReceiptProof {
            items: p.each("items", true, read_proven_item)?,
            hash_scheme: hash_scheme.to_owned(),
            tree_head: tree_head.to_owned(),
            public_key: public_key.to_owned(),
            witnessed: None,
        },
        log: None,
        customer_id: customer_id.to_owned(),
        asset,
        period: period.map(str::to_owned),
        generated_at: generated_at.to_owned(),
        deltas_count,
        starting_balance,
        final_balance,
        items_root,
        receipt_id,
        proof_root,
        latest_checkpoint: latest_checkpoint.map(str::to_owned),
        refusals: f.each("refusals", false, read_refusal)?,
        starting_sequence: match f.optional("startingSequence") {
            None => None,
            Some(_) => Some(f.u64("startingSequence")?),
        },
    })
}

fn read_refusal(f: &Fields<'_>) -> Result<ProvenRefusal, ReadError> {
    let anchor_id = f.string("anchorId")?;
    let code = f.string("code")?;
    Ok(ProvenRefusal {
        item_hash: f.hash("itemHash")?,
        delta: f.amount("delta")?,
        condition: read_conditions(&f.object("condition")?)?,
        sequence: f.u64("sequence")?,
        balance: f.amount("balance")?,
        tenant_default: match f.optional("tenantDefault") {
            None => false,
            Some(_) => f.bool("tenantDefault")?,
        },
        refusal_hash: f.hash("refusalHash")?,
        leaf_index: LeafIndex(f.u64("leafIndex")?),
        inclusion_proof: f.hashes("inclusionProof", false)?,
        anchor_id: anchor_id.to_owned(),
        code: code.to_owned(),
    })
}

#[cfg(feature = "receipt-agreement")]
fn read_logged(f: &Fields<'_>) -> Result<LoggedItem, ReadError> {
    let item_hash = f.hash("itemHash")?;
    let leaf_index = LeafIndex(f.u64("leafIndex")?);
    Ok(LoggedItem {
        inclusion_proof: f.hashes("inclusionProof", false)?,
        item_hash,
        leaf_index,
    })
}

#[cfg(feature = "receipt-agreement")]
fn read_agreement(f: &Fields<'_>) -> Result<ReceiptAgreement, ReadError> {
    let checkpoint_id = f.string("checkpointId")?;
    let checkpoint = CheckpointFields {
        origin: f.string("origin")?.to_owned(),
        ledger_id: f.hash("ledgerId")?,
        period: f.string("period")?.to_owned(),
        merkle_root: f.hash("merkleRoot")?,
        delta_count: f.u64("deltaCount")?,
    };
    let balance = f.amount("balance")?;
    let balance_statement = f.string("balanceStatement")?;
    let counterparty_key = f.optional_string("counterpartyKey")?;
    let key_statement = f.optional_string("keyStatement")?;
    let key_proof = match f.optional("keyProof") {
        None => None,
        Some(_) => Some(read_logged(&f.object("keyProof")?)?),
    };
    Ok(ReceiptAgreement {
        statements: f.each("statements", false, |s| {
            let kind = s.string("kind")?;
            let statement = s.string("statement")?;
            let recorded_at = s.string("recordedAt")?;
            let counterparty_key = s.optional_string("counterpartyKey")?;
            let logged = read_logged(s)?;
            Ok(ReceiptStatement {
                kind: kind.to_owned(),
                statement: statement.to_owned(),
                counterparty_key: counterparty_key.map(str::to_owned),
                recorded_at: recorded_at.to_owned(),
                item_hash: logged.item_hash,
                leaf_index: logged.leaf_index,
                inclusion_proof: logged.inclusion_proof,
            })
        })?,
        keys: f.each("keys", false, |k| {
            let counterparty_key = k.string("counterpartyKey")?;
            let key_statement = k.string("keyStatement")?;
            let registered_at = k.string("registeredAt")?;
            let signed_by_previous = match k.optional("signedByPrevious") {
                None => None,
                Some(_) => Some(k.bool("signedByPrevious")?),
            };
            Ok(ReceiptKey {
                counterparty_key: counterparty_key.to_owned(),
                key_statement: key_statement.to_owned(),
                registered_at: registered_at.to_owned(),
                signed_by_previous,
                key_proof: read_logged(&k.object("keyProof")?)?,
            })
        })?,
        key_warnings: f
            .array("keyWarnings", false)?
            .iter()
            .filter_map(|w| match w {
                crate::json::Value::String(text) => Some(text.clone()),
                _ => None,
            })
            .collect(),
        checkpoint_id: checkpoint_id.to_owned(),
        checkpoint,
        balance,
        balance_statement: balance_statement.to_owned(),
        counterparty_key: counterparty_key.map(str::to_owned),
        key_statement: key_statement.map(str::to_owned),
        key_proof,
    })
}

fn read_delta(f: &Fields<'_>) -> Result<DerivedDelta, ReadError> {
    let anchor_id = f.string("anchorId")?;
    let item_hash = f.hash("itemHash")?;
    let items_root = f.hash("itemsRoot")?;
    let receipt_id = f.hash("receiptId")?;
    let delta = f.amount("delta")?;
    let reason = f.optional_string("reason")?;
    let reference_id = f.optional_string("referenceId")?;
    let window = f.period("window")?;
    let declared_timestamp = f.timestamp("declaredTimestamp")?;
    let block_timestamp = f.timestamp("blockTimestamp")?;
    let data_purged = f.bool("dataPurged")?;
    let verified = f.bool("verified")?;
    Ok(DerivedDelta {
        anchor_id: anchor_id.to_owned(),
        item_hash,
        items_root,
        receipt_id,
        delta,
        reason: reason.map(str::to_owned),
        reference_id: reference_id.map(str::to_owned),
        window,
        declared_timestamp,
        block_timestamp,
        data_purged,
        verified,
        seq: 0,
        balance_after: Amount::default(),
    })
}

fn read_window(f: &Fields<'_>) -> Result<WindowSummary, ReadError> {
    Ok(WindowSummary {
        window: f.period("window")?,
        deltas_count: f.u64("deltasCount")?,
        net_delta: f.amount("netDelta")?,
        first_block_timestamp: f.timestamp("firstBlockTimestamp")?,
        last_block_timestamp: f.timestamp("lastBlockTimestamp")?,
    })
}

fn read_proven_item(f: &Fields<'_>) -> Result<ProvenItem, ReadError> {
    let anchor_id = f.string("anchorId")?;
    let item_hash = f.hash("itemHash")?;
    let leaf_index = LeafIndex(f.u64("leafIndex")?);
    let delta = f.amount("delta")?;
    let raw = match f.optional("raw") {
        None => None,
        Some(_) => Some(read_raw(&f.object("raw")?)?),
    };
    Ok(ProvenItem {
        inclusion_proof: f.hashes("inclusionProof", true)?,
        anchor_id: anchor_id.to_owned(),
        item_hash,
        leaf_index,
        delta,
        raw,
    })
}

/// An optional `asset` member: absent (or `null`) is the default asset.
fn read_asset(f: &Fields<'_>) -> Result<Asset, ReadError> {
    match f.optional_string("asset")? {
        None => Ok(Asset::Default),
        Some(text) => Asset::parse(&f.path_of("asset"), text).map_err(Box::new),
    }
}

pub(crate) fn read_raw(f: &Fields<'_>) -> Result<DeltaContent, ReadError> {
    let anchor_id = f.string("anchorId")?;
    let customer_id = f.string("customerId")?;
    let delta = f.amount("delta")?;
    let reason = f.string("reason")?;
    let reference_id = f.optional_string("referenceId")?;
    let declared_timestamp = f.string("declaredTimestamp")?;
    let asset = read_asset(f)?;
    let conditions = match f.optional("conditions") {
        None => Conditions::default(),
        Some(_) => read_conditions(&f.object("conditions")?)?,
    };
    Ok(DeltaContent {
        asset,
        conditions,
        anchor_id: anchor_id.to_owned(),
        customer_id: customer_id.to_owned(),
        delta,
        reason: reason.to_owned(),
        reference_id: reference_id.map(str::to_owned),
        metadata: f.optional("metadata").cloned(),
        declared_timestamp: declared_timestamp.to_owned(),
    })
}

/// A `conditions` object: `balanceAtLeast` (an amount) and
/// `expectedSequence`, each optional.
fn read_conditions(f: &Fields<'_>) -> Result<Conditions, ReadError> {
    Ok(Conditions {
        balance_at_least: match f.optional("balanceAtLeast") {
            None => None,
            Some(_) => Some(f.amount("balanceAtLeast")?),
        },
        expected_sequence: match f.optional("expectedSequence") {
            None => None,
            Some(_) => Some(f.u64("expectedSequence")?),
        },
    })
}
