//! A statement built and logged with this crate's own functions, the way
//! the service will (a page of ledgers at a time, nodes stored, proofs read
//! back from them): fixtures for the verifiers' tests (core, the CLI,
//! verifier-wasm) and the bench. Pure: seeds come in as arguments.

use super::proof::{LeafProof, LogEvidence, ProofDocument};
use super::statement::{ledger_id, Placed, Seed, Statement, StatementBuilder};
use super::tree::NodeAddr;
use super::{SumNode, TreeKind};
use crate::amount::Amount;
use crate::hash::Hash32;
use crate::log::{self, StoredHashes};
use crate::merkle::{LeafIndex, TreeSize};
use crate::note;
use crate::types::{Env, Period};
use crate::verify::sample::{err, SampleError};
use std::collections::BTreeMap;

/// One customer of a sample statement, with its proof.
#[derive(Debug, Clone)]
pub struct SampleCustomer {
    pub customer_id: String,
    pub ledger: Hash32,
    pub balance: Amount,
    pub document: ProofDocument,
}

/// A logged statement and every customer's proof.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The log's verifier key.
    pub public_key: String,
    pub statement: Statement,
    /// In the statement's (shuffled) order.
    pub customers: Vec<SampleCustomer>,
    /// Every stored node, by tree.
    pub nodes: BTreeMap<(u8, NodeAddr), SumNode>,
}

fn kind_key(kind: TreeKind) -> u8 {
    match kind {
        TreeKind::Liabilities => 0,
        TreeKind::Receivables => 1,
    }
}

/// A log of `noise` items, then `item`, then one more, signed by `key_seed`
/// as `origin`: the log's verifier key and `item`'s evidence in it.
///
/// # Errors
/// A bad origin, or a log limit.
pub fn log_statement(
    origin: &str,
    key_seed: &[u8; 32],
    item: &Hash32,
    noise: u64,
) -> Result<(String, LogEvidence), SampleError> {
    let mut log_items: Vec<Hash32> = (0..noise)
        .map(|i| Hash32::digest(&i.to_be_bytes()))
        .collect();
    let leaf_index = log_items.len() as u64;
    log_items.push(*item);
    log_items.push(Hash32::digest(b"after the statement"));
    let mut store = StoredHashes::new();
    for (k, v) in log::append(TreeSize(0), &log_items, &StoredHashes::new()).map_err(err)? {
        store.insert(k, v);
    }
    let size = TreeSize(log_items.len() as u64);
    let root = log::tree_root(size, &store).map_err(err)?;
    let head = note::sign_tree_head(origin, size, &root, key_seed).map_err(err)?;
    let public_key = note::public_key_string(origin, key_seed).map_err(err)?;
    let evidence = LogEvidence {
        hash_scheme: log::HASH_SCHEME.name().into(),
        tree_head: head,
        public_key: public_key.clone(),
        leaf_index,
        inclusion_proof: log::inclusion_proof(LeafIndex(leaf_index), size, &store).map_err(err)?,
    };
    Ok((public_key, evidence))
}

/// Builds the statement of `tenant_id` for `period` over `balances`
/// (customerId, balance at the end of the period) with the statement seed
/// `seed`, pushing `page` ledgers per builder state (saved and read back
/// between pages, as invocations would), logs its item after `noise` other
/// items in a log signed by `key_seed` as `origin`, and makes every
/// customer's proof from the stored nodes.
///
/// # Errors
/// A bad origin, amount or tenant id, or a statement limit.
#[allow(clippy::too_many_arguments)]
pub fn build(
    origin: &str,
    key_seed: &[u8; 32],
    tenant_id: &str,
    period: Period,
    balances: &[(&str, Amount)],
    seed: [u8; 32],
    page: usize,
    noise: u64,
) -> Result<Sample, SampleError> {
    let seed = Seed(seed);
    let mut ledgers: Vec<(Hash32, Amount)> = balances
        .iter()
        .map(|(c, b)| (ledger_id(tenant_id, c), *b))
        .collect();
    seed.shuffle(&mut ledgers);
    let mut state = StatementBuilder::new(seed.clone()).to_text();
    let mut nodes = BTreeMap::new();
    let mut placed = BTreeMap::new();
    for chunk in ledgers.chunks(page.max(1)) {
        let mut builder = StatementBuilder::from_text(&state).map_err(err)?;
        for (ledger, balance) in chunk {
            let p = builder.push(*ledger, *balance).map_err(err)?;
            for (kind, addr, node) in &p.nodes {
                nodes.insert((kind_key(*kind), *addr), *node);
            }
            placed.insert(*ledger, p);
        }
        state = builder.to_text();
    }
    let builder = StatementBuilder::from_text(&state).map_err(err)?;
    let statement = builder
        .finish(tenant_id, Env::Sandbox, period, None)
        .map_err(err)?;
    let item = statement.item_hash();

    let (public_key, evidence) = log_statement(origin, key_seed, &item, noise)?;

    let by_ledger: BTreeMap<Hash32, &str> = balances
        .iter()
        .map(|(c, _)| (ledger_id(tenant_id, c), *c))
        .collect();
    let mut customers = Vec::new();
    for (ledger, balance) in &ledgers {
        let proofs = leaf_proofs(&seed, &statement, &placed[ledger], &nodes, ledger, *balance)?;
        let (liabilities, receivables) = proofs;
        let customer_id = by_ledger[ledger].to_owned();
        customers.push(SampleCustomer {
            document: ProofDocument {
                statement: statement.clone(),
                statement_hash: item,
                customer_id: Some(customer_id.clone()),
                ledger_id: *ledger,
                balance: *balance,
                liabilities,
                receivables,
                log: Some(evidence.clone()),
            },
            customer_id,
            ledger: *ledger,
            balance: *balance,
        });
    }
    Ok(Sample {
        public_key,
        statement,
        customers,
        nodes,
    })
}

/// A ledger's proofs into the liabilities tree (what it is owed, 0 when
/// it owes) and, when it owes, the receivables tree, read from the
/// stored nodes.
fn leaf_proofs(
    seed: &Seed,
    statement: &Statement,
    p: &Placed,
    nodes: &BTreeMap<(u8, NodeAddr), SumNode>,
    ledger: &Hash32,
    balance: Amount,
) -> Result<(LeafProof, Option<LeafProof>), SampleError> {
    let get = |kind: TreeKind| move |a: NodeAddr| nodes.get(&(kind_key(kind), a)).copied();
    let owed = if balance.signum() > 0 {
        balance
    } else {
        Amount::ZERO
    };
    let liabilities = LeafProof::from_stored(
        seed,
        TreeKind::Liabilities,
        ledger,
        owed,
        p.liabilities_index,
        statement.liabilities.leaf_count,
        get(TreeKind::Liabilities),
    )
    .map_err(err)?;
    let receivables = match p.receivables_index {
        Some(index) => Some(
            LeafProof::from_stored(
                seed,
                TreeKind::Receivables,
                ledger,
                balance.checked_neg().map_err(err)?,
                index,
                statement.receivables.leaf_count,
                get(TreeKind::Receivables),
            )
            .map_err(err)?,
        ),
        None => None,
    };
    Ok((liabilities, receivables))
}
