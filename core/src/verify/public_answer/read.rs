//! Reading a public verification answer with [`crate::json`]
//! (`PublicAnswer::from_json`): only what the checks need, for the browser
//! verifier's size budget.

use super::{CheckpointLeaf, PublicAnswer, PublicProof, PublicRecord, PublicSummary};
use crate::hash::Hash32;
use crate::json;
use crate::merkle;

impl PublicAnswer {
    /// Reads the `data` of a public verification answer from a parsed
    /// JSON value with [`crate::json`], as the serde derive would, but for
    /// the fields shown and never checked (`ledgerId`, `publicLedgerUrl`,
    /// `log`, `message`, `pagination`), which stay `None`: the browser
    /// verifier holds only the reading its checks need (its size budget).
    ///
    /// # Errors
    /// The first field that is missing or malformed, by its path.
    pub fn from_json(value: &json::Value) -> Result<PublicAnswer, crate::error::FieldError> {
        Self::read(value).map_err(|e| *e)
    }

    fn read(value: &json::Value) -> Result<PublicAnswer, json::ReadError> {
        // Borrowed and Copy fields first, owned ones last (see
        // `Receipt::from_json`): nothing owned is built before the last
        // field that can fail is read (the browser verifier's size).
        let f = json::Fields::of(value, String::new())?;
        let s = f.object("summary")?;
        let v = f.object("verification")?;
        let verified = f.bool("verified")?;
        let kind = s.string("kind")?;
        let environment = s.string("environment")?;
        let proof_root = s.hash("proofRoot")?;
        let item_count = s.u64("itemCount")?;
        let net_amount = match s.optional("netAmount") {
            None => None,
            Some(_) => Some(s.amount("netAmount")?),
        };
        let period = s.optional_string("period")?;
        let status = s.optional_string("status")?;
        let amounts_withheld =
            matches!(s.optional("amountsWithheld"), Some(json::Value::Bool(true)));
        let records_check = s.optional_string("recordsCheck")?;
        let first_verified_at = s.optional_string("firstVerifiedAt")?;
        let last_verified_at = s.optional_string("lastVerifiedAt")?;
        let hash_scheme = v.string("hashScheme")?;
        let tree_head = v.string("treeHead")?;
        let tree_size = merkle::TreeSize(v.u64("treeSize")?);
        let public_key = v.string("publicKey")?;
        let items_root = v.hash("itemsRoot")?;
        let checkpoint_leaf = Self::read_checkpoint_leaf(&v)?;
        Ok(PublicAnswer {
            records: f.each("records", false, Self::read_record)?,
            verified,
            summary: PublicSummary {
                kind: kind.to_owned(),
                environment: environment.to_owned(),
                proof_root,
                item_count,
                net_amount,
                period: owned(period),
                ledger_id: None,
                first_verified_at: owned(first_verified_at),
                last_verified_at: owned(last_verified_at),
                status: owned(status),
                issued_as: Vec::new(),
                amounts_withheld,
                records_check: owned(records_check),
            },
            verification: PublicProof {
                public_ledger_url: None,
                hash_scheme: hash_scheme.to_owned(),
                tree_head: tree_head.to_owned(),
                tree_size,
                public_key: public_key.to_owned(),
                log: None,
                witnessed: None,
                items_root,
                checkpoint_leaf,
                message: None,
            },
            pagination: None,
        })
    }

    fn read_checkpoint_leaf(
        v: &json::Fields<'_>,
    ) -> Result<Option<CheckpointLeaf>, json::ReadError> {
        if v.optional("checkpointLeaf").is_none() {
            return Ok(None);
        }
        let c = v.object("checkpointLeaf")?;
        let item_hash = c.hash("itemHash")?;
        let leaf_index = merkle::LeafIndex(c.u64("leafIndex")?);
        Ok(Some(CheckpointLeaf {
            inclusion_proof: c.hashes("inclusionProof", true)?,
            item_hash,
            leaf_index,
        }))
    }

    fn read_record(r: &json::Fields<'_>) -> Result<PublicRecord, json::ReadError> {
        let anchor_id = r.string("anchorId")?;
        let item_hash = optional_hash(r, "itemHash")?;
        let log_leaf_hash = optional_hash(r, "logLeafHash")?;
        let delta = match r.optional("delta") {
            None => None,
            Some(_) => Some(r.amount("delta")?),
        };
        let leaf_index = match r.optional("leafIndex") {
            None => None,
            Some(_) => Some(merkle::LeafIndex(r.u64("leafIndex")?)),
        };
        let block_timestamp = r.optional_string("blockTimestamp")?;
        let declared_timestamp = r.optional_string("declaredTimestamp")?;
        let asset = match r.optional_string("asset")? {
            None => crate::types::Asset::Default,
            Some(text) => {
                crate::types::Asset::parse(&r.path_of("asset"), text).map_err(Box::new)?
            }
        };
        Ok(PublicRecord {
            asset,
            inclusion_proof: r.hashes("inclusionProof", false)?,
            anchor_id: anchor_id.to_owned(),
            item_hash,
            log_leaf_hash,
            ledger_id: None,
            delta,
            leaf_index,
            block_timestamp: owned(block_timestamp),
            declared_timestamp: owned(declared_timestamp),
        })
    }
}

/// A hash member that may be absent (one shared copy: the browser
/// verifier's size budget).
#[inline(never)]
fn optional_hash(r: &json::Fields<'_>, key: &str) -> Result<Option<Hash32>, json::ReadError> {
    match r.optional(key) {
        None => Ok(None),
        Some(_) => r.hash(key).map(Some),
    }
}

fn owned(t: Option<&str>) -> Option<String> {
    t.map(str::to_owned)
}
