//! A co-signed receipt built the way the worker builds one (issue 19):
//! the fixture of the agreement vectors (`agreement::receipt`'s tests) and
//! of `bvs-verify receipt`'s. Pure: seeds and time come in as arguments.

use super::{
    counterparty_key, item_hash, sign, BalanceStatement, CheckpointFields, CheckpointRef, Dispute,
    KeyBinding, Origin, Statement,
};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::log::{self, StoredHashes};
use crate::merkle::{LeafIndex, TreeSize};
use crate::note;
use crate::pinpoint::{DivergenceKind, EntryId};
use crate::receipt::{LoggedItem, Receipt, ReceiptAgreement, ReceiptKey, ReceiptStatement};
use crate::types::Period;
use crate::verify::sample::{self, err, SampleError};

/// The counterparty key's name in these samples.
pub const KEY_NAME: &str = "customer";
/// When the sample statements were recorded.
pub const RECORDED_AT: &str = "2026-11-20T10:00:00.000Z";

/// The log of the samples: its origin, its signing seed, and when its
/// deltas were declared.
#[derive(Debug, Clone, Copy)]
pub struct SampleLog<'a> {
    pub origin: &'a str,
    pub seed: &'a [u8; 32],
    pub t0_ms: i64,
}

impl SampleLog<'_> {
    /// The receipt of `cust_42`'s three deltas (100, -0.25, 12.345 after a
    /// starting balance of 10), without an agreement side.
    ///
    /// # Errors
    /// A bad origin.
    pub fn receipt(&self) -> Result<Receipt, SampleError> {
        Ok(sample::build(
            self.origin,
            self.seed,
            5,
            &["100", "-0.25", "12.345"],
            self.t0_ms,
        )?
        .receipt)
    }

    /// The log's verifier key.
    ///
    /// # Errors
    /// A bad origin.
    pub fn public_key(&self) -> Result<String, SampleError> {
        note::public_key_string(self.origin, self.seed).map_err(err)
    }

    /// The ledger id of the sample customer.
    pub fn ledger(&self) -> Hash32 {
        Hash32::digest(b"bvs-ledger-v1\ntenant_1\ncust_42")
    }

    /// The checkpoint the receipt's deltas make.
    ///
    /// # Errors
    /// A bad origin or period.
    pub fn checkpoint_of(&self, r: &Receipt) -> Result<CheckpointRef, SampleError> {
        Ok(CheckpointRef {
            origin: Origin::parse(self.origin).map_err(err)?,
            ledger: self.ledger(),
            period: Period::parse(r.period.as_deref().unwrap_or("")).map_err(|e| err(e.reason))?,
            root: r.items_root,
            deltas: r.deltas.len() as u64,
        })
    }

    /// "I agree" with the receipt's checkpoint.
    ///
    /// # Errors
    /// As [`SampleLog::checkpoint_of`].
    pub fn balance_of(&self, r: &Receipt) -> Result<Statement, SampleError> {
        Ok(Statement::Balance(BalanceStatement {
            checkpoint: self.checkpoint_of(r)?,
            balance: r.final_balance,
        }))
    }

    /// "I disagree from the second delta (changed)".
    ///
    /// # Errors
    /// As [`SampleLog::checkpoint_of`].
    pub fn dispute_of(&self, r: &Receipt) -> Result<Statement, SampleError> {
        let delta = r
            .deltas
            .get(1)
            .ok_or_else(|| err("the sample has three deltas"))?;
        Ok(Statement::Dispute(Dispute {
            checkpoint: self.checkpoint_of(r)?,
            kind: DivergenceKind::Changed,
            after: 1,
            delta: EntryId::ItemHash(delta.item_hash),
            agreed: Amount::parse("110").map_err(err)?,
        }))
    }

    /// The key binding of the key from `seed` for the sample ledger.
    ///
    /// # Errors
    /// A bad origin.
    pub fn binding(&self, seed: &[u8; 32]) -> Result<String, SampleError> {
        let key = counterparty_key(KEY_NAME, seed).map_err(err)?;
        let b = KeyBinding::new(
            Origin::parse(self.origin).map_err(err)?,
            self.ledger(),
            &key,
        )
        .map_err(err)?;
        sign(&Statement::Key(b), KEY_NAME, seed).map_err(err)
    }

    /// The sample receipt with `binding` and `statements` (kind, signed
    /// note) appended to its log after its deltas, the head re-signed,
    /// every proof into the new head, and its agreement side filled in
    /// with `key_seed`'s key.
    ///
    /// # Errors
    /// A bad origin, seed or log limit.
    pub fn cosigned_with(
        &self,
        binding: &str,
        statements: &[(&str, String)],
        key_seed: &[u8; 32],
    ) -> Result<Receipt, SampleError> {
        let key = counterparty_key(KEY_NAME, key_seed).map_err(err)?;
        let listed: Vec<(&str, String, Option<String>)> = statements
            .iter()
            .map(|(kind, note)| (*kind, note.clone(), None))
            .collect();
        self.built(&[(binding.to_owned(), key, None)], &listed, false)
    }

    /// The customer's key (from `customer_seed`) and then another key
    /// (from `next_seed`), registered through an invitation alone or, with
    /// `rotate`, signed by the customer's key too; the customer disputes
    /// and the next key agrees. Every binding is listed (`keys`).
    ///
    /// # Errors
    /// As [`SampleLog::cosigned_with`].
    pub fn with_key_change(
        &self,
        customer_seed: &[u8; 32],
        next_seed: &[u8; 32],
        rotate: bool,
    ) -> Result<Receipt, SampleError> {
        let base = self.receipt()?;
        let first = counterparty_key(KEY_NAME, customer_seed).map_err(err)?;
        let next = counterparty_key(KEY_NAME, next_seed).map_err(err)?;
        let mut next_binding = self.binding(next_seed)?;
        if rotate {
            let by_first = sign(
                &Statement::Key(
                    KeyBinding::new(
                        Origin::parse(self.origin).map_err(err)?,
                        self.ledger(),
                        &next,
                    )
                    .map_err(err)?,
                ),
                KEY_NAME,
                customer_seed,
            )
            .map_err(err)?;
            let line = by_first
                .split_once("\n\n")
                .map(|(_, l)| l)
                .unwrap_or_default();
            next_binding.push_str(line);
        }
        let disputed = sign(&self.dispute_of(&base)?, KEY_NAME, customer_seed).map_err(err)?;
        let agreed = sign(&self.balance_of(&base)?, KEY_NAME, next_seed).map_err(err)?;
        self.built(
            &[
                (self.binding(customer_seed)?, first.clone(), None),
                (next_binding, next.clone(), Some(rotate)),
            ],
            &[
                ("dispute", disputed, Some(first)),
                ("balance", agreed, Some(next)),
            ],
            true,
        )
    }

    /// The sample receipt with `bindings` (signed note, key, signed by the
    /// previous key) then `statements` (kind, signed note, its key)
    /// appended to its log, the head re-signed, every proof into the new
    /// head, and its agreement side filled in (the last binding's key
    /// current); with `list_keys`, every binding listed in `keys`.
    fn built(
        &self,
        bindings: &[(String, String, Option<bool>)],
        statements: &[(&str, String, Option<String>)],
        list_keys: bool,
    ) -> Result<Receipt, SampleError> {
        let s = sample::build(
            self.origin,
            self.seed,
            5,
            &["100", "-0.25", "12.345"],
            self.t0_ms,
        )?;
        let mut r = s.receipt;
        let mut items = s.log_items.clone();
        let key_leaf = items.len() as u64;
        items.extend(bindings.iter().map(|(n, _, _)| item_hash(n)));
        let first = items.len() as u64;
        items.extend(statements.iter().map(|(_, n, _)| item_hash(n)));
        let mut store = StoredHashes::new();
        for (k, v) in log::append(TreeSize(0), &items, &StoredHashes::new()).map_err(err)? {
            store.insert(k, v);
        }
        let size = TreeSize(items.len() as u64);
        let root = log::tree_root(size, &store).map_err(err)?;
        r.proof.tree_head =
            note::sign_tree_head(self.origin, size, &root, self.seed).map_err(err)?;
        for item in &mut r.proof.items {
            item.inclusion_proof =
                log::inclusion_proof(item.leaf_index, size, &store).map_err(err)?;
        }
        let proof = |leaf: u64| -> Result<LoggedItem, SampleError> {
            Ok(LoggedItem {
                item_hash: items
                    .get(leaf as usize)
                    .copied()
                    .ok_or_else(|| err("no such leaf"))?,
                leaf_index: LeafIndex(leaf),
                inclusion_proof: log::inclusion_proof(LeafIndex(leaf), size, &store)
                    .map_err(err)?,
            })
        };
        let mut listed = Vec::new();
        for (i, (kind, note, key)) in statements.iter().enumerate() {
            let p = proof(first + i as u64)?;
            listed.push(ReceiptStatement {
                kind: (*kind).to_owned(),
                statement: note.clone(),
                counterparty_key: key.clone(),
                recorded_at: RECORDED_AT.into(),
                item_hash: p.item_hash,
                leaf_index: p.leaf_index,
                inclusion_proof: p.inclusion_proof,
            });
        }
        let mut keys = Vec::new();
        for (i, (note, key, signed_by_previous)) in bindings.iter().enumerate() {
            keys.push(ReceiptKey {
                counterparty_key: key.clone(),
                key_statement: note.clone(),
                registered_at: RECORDED_AT.into(),
                signed_by_previous: *signed_by_previous,
                key_proof: proof(key_leaf + i as u64)?,
            });
        }
        r.agreement = Some(self.agreement_of(&r, listed, keys, list_keys)?);
        Ok(r)
    }

    /// The agreement side of `r`: the checkpoint it shows, the last key
    /// binding current, the statements and (with `list_keys`) the keys.
    fn agreement_of(
        &self,
        r: &Receipt,
        listed: Vec<ReceiptStatement>,
        keys: Vec<ReceiptKey>,
        list_keys: bool,
    ) -> Result<ReceiptAgreement, SampleError> {
        let c = self.checkpoint_of(r)?;
        let current = keys.last().ok_or_else(|| err("no binding"))?.clone();
        let key_warnings = keys
            .iter()
            .filter(|k| k.signed_by_previous == Some(false))
            .map(|k| {
                format!(
                    "key changed on {}, not signed by the previous key",
                    k.registered_at
                )
            })
            .collect();
        Ok(ReceiptAgreement {
            checkpoint_id: "chk_1".into(),
            checkpoint: CheckpointFields::of(&c),
            balance: r.final_balance,
            balance_statement: self.balance_of(r)?.to_text(),
            counterparty_key: Some(current.counterparty_key),
            key_statement: Some(current.key_statement),
            key_proof: Some(current.key_proof),
            statements: listed,
            keys: if list_keys { keys } else { Vec::new() },
            key_warnings: if list_keys { key_warnings } else { Vec::new() },
        })
    }

    /// A receipt the customer (key from `customer_seed`) agreed to and
    /// then disputed.
    ///
    /// # Errors
    /// As [`SampleLog::cosigned_with`].
    pub fn cosigned(&self, customer_seed: &[u8; 32]) -> Result<Receipt, SampleError> {
        let base = self.receipt()?;
        let agreed = sign(&self.balance_of(&base)?, KEY_NAME, customer_seed).map_err(err)?;
        let disputed = sign(&self.dispute_of(&base)?, KEY_NAME, customer_seed).map_err(err)?;
        self.cosigned_with(
            &self.binding(customer_seed)?,
            &[("balance", agreed), ("dispute", disputed)],
            customer_seed,
        )
    }
}
