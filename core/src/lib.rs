//! Pure domain logic of the balance verification service.
//!
//! Invariant: this crate depends on no worker, js-sys or wasm-bindgen crate
//! and does no I/O. Time, randomness and stored rows come in as arguments.
//! (`tests/dependency_tree.rs` checks the first half with `cargo tree`.)
//!
//! Invariant: nothing here panics on input, however hostile. Every parser
//! and verifier returns a `Result` whose error names what was wrong.

pub mod agreement;
pub mod amount;
pub mod conditions;
pub mod cosignature;
pub mod derive;
pub mod error;
pub mod frontier;
pub mod hash;
pub mod item;
pub mod json;
#[cfg(feature = "liabilities")]
pub mod liabilities;
#[cfg(feature = "server")]
pub mod log;
pub mod merkle;
pub mod monitor;
pub mod note;
pub mod pinpoint;
pub mod policy;
pub mod receipt;
#[cfg(all(test, feature = "server"))]
mod test_notes;
#[cfg(feature = "server")]
pub mod tiles;
pub mod time;
pub mod tlog_proof;
pub mod types;
pub mod verify;
pub mod witness;

pub use amount::Amount;
pub use error::FieldError;
pub use hash::Hash32;
pub use merkle::{LeafIndex, TreeSize};
