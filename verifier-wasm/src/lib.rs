//! A thin wasm-bindgen face over `bvs_core`'s verification: no logic here.

use wasm_bindgen::prelude::wasm_bindgen;

/// The verifier's version, so a page can show which build checked a proof.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
