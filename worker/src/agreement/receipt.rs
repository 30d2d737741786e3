//! A receipt's agreement side (issue 19): for a receipt that is a
//! committed checkpoint of its customer, the customer's key binding and
//! statements with their inclusion proofs into the receipt's tree head.
//! Planned from the rows the receipt read in its one batch, so that the
//! stored hashes of these proofs are read with the receipt's own (issue
//! 16: no round trip of its own).

use bvs_core::agreement::{BalanceStatement, CheckpointFields, Statement};
use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::receipt::{LoggedItem, ReceiptAgreement, ReceiptKey, ReceiptStatement};
use bvs_core::LeafIndex;

use super::{key_warning, reference};
use crate::app::App;
use crate::error::ApiResult;
use crate::ledger::LogId;
use crate::store::agreement::{AgreementRow, KeyRow, LoggedKey, LoggedStatement};
use crate::store::checkpoints::CheckpointRow;
use crate::views;

/// The agreement side of a receipt before its proofs: the committed
/// checkpoint of this customer whose merkleRoot is the receipt's root, and
/// every key binding of its ledger and every statement about the
/// checkpoint (by any of those keys) **already in the log at the
/// receipt's tree size**, with their log positions (docs/agreement.md).
/// A statement still queued shows in a later receipt.
pub struct ReceiptAgreementPlan {
    checkpoint: CheckpointRow,
    keys: Vec<(KeyRow, u64)>,
    signed: Vec<(AgreementRow, u64)>,
}

/// Plans the agreement side of a receipt with root `root` in the tree of
/// `tree_size`, from `candidates` (the customer's committed checkpoints
/// that can have that root, oldest first), the ledger's `keys` (oldest
/// first) and the `statements` about the candidates. None when no
/// candidate has the root.
pub fn plan_receipt(
    candidates: Vec<CheckpointRow>,
    keys: Vec<LoggedKey>,
    statements: Vec<LoggedStatement>,
    root: &Hash32,
    tree_size: u64,
) -> Option<ReceiptAgreementPlan> {
    let checkpoint = candidates.into_iter().find(|c| c.merkle_root == *root)?;
    let logged = |leaf: Option<u64>| leaf.filter(|l| *l < tree_size);
    let keys: Vec<(KeyRow, u64)> = keys
        .into_iter()
        .filter_map(|k| logged(k.leaf_index).map(|leaf| (k.key, leaf)))
        .collect();
    let signed = statements
        .into_iter()
        .filter(|s| {
            s.agreement.checkpoint_id == checkpoint.id
                && keys
                    .iter()
                    .any(|(k, _)| k.verifier_key == s.agreement.verifier_key)
        })
        .filter_map(|s| logged(s.leaf_index).map(|leaf| (s.agreement, leaf)))
        .collect();
    Some(ReceiptAgreementPlan {
        checkpoint,
        keys,
        signed,
    })
}

impl ReceiptAgreementPlan {
    /// The log positions whose inclusion proofs [`Self::finish`] takes, in
    /// its order: each key binding's, then each statement's.
    pub fn leaves(&self) -> Vec<u64> {
        self.keys
            .iter()
            .map(|(_, leaf)| *leaf)
            .chain(self.signed.iter().map(|(_, leaf)| *leaf))
            .collect()
    }

    /// The agreement side, given the inclusion proofs of [`Self::leaves`]
    /// and the checkpoint's closing balance: the receipt's final balance
    /// (its deltas are exactly the checkpoint's, so the balance after the
    /// customer's last delta at or before the checkpoint's last log
    /// position is the balance after the receipt's last delta).
    ///
    /// # Errors
    /// A malformed stored hash, period or ledger id, or the log's key.
    pub fn finish(
        self,
        app: &App,
        log: LogId,
        ledger_id: &Hash32,
        balance: Amount,
        proofs: Vec<Vec<Hash32>>,
    ) -> ApiResult<ReceiptAgreement> {
        let c = self.checkpoint;
        let reference = reference(app, log, &c, ledger_id)?;
        let balance_statement = Statement::Balance(BalanceStatement {
            checkpoint: reference.clone(),
            balance,
        })
        .to_text();
        let mut proofs = proofs.into_iter();
        let mut keys = Vec::with_capacity(self.keys.len());
        let mut key_warnings = Vec::new();
        for (i, (k, leaf)) in self.keys.into_iter().enumerate() {
            key_warnings.extend(key_warning(&k));
            keys.push(ReceiptKey {
                key_proof: LoggedItem {
                    item_hash: k.item_hash,
                    leaf_index: LeafIndex(leaf),
                    inclusion_proof: proofs.next().unwrap_or_default(),
                },
                counterparty_key: k.verifier_key,
                key_statement: k.statement,
                registered_at: views::iso(k.registered_at),
                signed_by_previous: (i > 0).then(|| k.signed_by_previous == Some(1)),
            });
        }
        let current = keys.last().cloned();
        let mut statements = Vec::with_capacity(self.signed.len());
        for (a, leaf) in self.signed {
            statements.push(ReceiptStatement {
                kind: a.kind.as_str().to_owned(),
                item_hash: a.item_hash,
                statement: a.statement,
                counterparty_key: Some(a.verifier_key),
                recorded_at: views::iso(a.created_at),
                leaf_index: LeafIndex(leaf),
                inclusion_proof: proofs.next().unwrap_or_default(),
            });
        }
        Ok(ReceiptAgreement {
            checkpoint_id: c.id.to_string(),
            checkpoint: CheckpointFields::of(&reference),
            balance,
            balance_statement,
            counterparty_key: current.as_ref().map(|k| k.counterparty_key.clone()),
            key_statement: current.as_ref().map(|k| k.key_statement.clone()),
            key_proof: current.map(|k| k.key_proof),
            statements,
            keys,
            key_warnings,
        })
    }
}
