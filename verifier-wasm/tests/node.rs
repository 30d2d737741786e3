//! Runs under Node with `wasm-bindgen-test-runner` (see scripts/test.sh).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn the_module_loads_and_reports_its_version() {
    assert_eq!(bvs_verifier_wasm::version(), env!("CARGO_PKG_VERSION"));
}
