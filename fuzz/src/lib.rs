//! Fixtures shared by the fuzz targets: a signing key, a signed tree head
//! and a genuine receipt, so the fuzzer starts from inputs that pass and
//! explores what lies just beside them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::hash::Hash32;
use bvs_core::merkle::{self, TreeSize};
use bvs_core::note;
use bvs_core::verify::sample;

pub const ORIGIN: &str = "bvs.example/log/sandbox";
pub const SEED: [u8; 32] = [9; 32];
const T0: i64 = 1_795_323_400_123;

/// The verifier key of `SEED` under `ORIGIN`.
pub fn public_key() -> String {
    note::public_key_string(ORIGIN, &SEED).expect("valid origin")
}

/// A signed tree head of size 3 over three fixed items.
pub fn signed_head() -> String {
    let items: Vec<Hash32> = (0..3u8).map(|i| Hash32::digest(&[i])).collect();
    note::sign_tree_head(ORIGIN, TreeSize(3), &merkle::root(&items), &SEED).expect("sign")
}

/// Replaces bytes of `base` as `patch` says: each 3-byte group is a
/// (big-endian u16 position, new byte) edit. Keeps the result UTF-8 lossy.
pub fn patched(base: &str, patch: &[u8]) -> String {
    let mut bytes = base.as_bytes().to_vec();
    for edit in patch.chunks_exact(3) {
        if bytes.is_empty() {
            break;
        }
        let pos = usize::from(u16::from_be_bytes([edit[0], edit[1]])) % bytes.len();
        bytes[pos] = edit[2];
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A genuine receipt (as the worker builds one, core's `sample` log, one
/// delta with metadata) as JSON text.
pub fn receipt_json() -> String {
    let s = sample::build(ORIGIN, &SEED, 2, &["100", "-0.1", "12.345"], T0).expect("sample");
    serde_json::to_string(&s.receipt).expect("a receipt serializes")
}
