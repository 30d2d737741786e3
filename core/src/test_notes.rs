//! Signed notes the unit tests of `cosignature`, `policy` and `witness`
//! share: one log, its heads, and the witnesses `w<n>.example`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cosignature::witness_vkey;
use crate::hash::Hash32;
use crate::merkle::TreeSize;
use crate::note;

pub const ORIGIN: &str = "bvs.example/log/sandbox";
pub const LOG_SEED: [u8; 32] = [7; 32];

/// The log's signed head of `size` (over the root SHA-256("r")).
pub fn head(size: u64) -> String {
    note::sign_tree_head(ORIGIN, TreeSize(size), &Hash32::digest(b"r"), &LOG_SEED).unwrap()
}

/// The verifier key of witness `w<n>.example`, whose seed is `[n; 32]`.
pub fn vkey(n: u8) -> String {
    witness_vkey(&format!("w{n}.example"), &[n; 32]).unwrap()
}
