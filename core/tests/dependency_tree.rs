//! Invariant: core depends on no worker, js-sys, wasm-bindgen or web-sys
//! crate (STYLE.md rule 1), checked with `cargo tree`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn core_has_no_worker_or_js_dependencies() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "tree",
            "--manifest-path",
            manifest,
            "-p",
            "bvs-core",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"bvs-core"), "{tree}");
    for banned in [
        "worker",
        "worker-sys",
        "js-sys",
        "wasm-bindgen",
        "web-sys",
        "getrandom",
    ] {
        assert!(
            !names.contains(&banned),
            "core depends on {banned}:\n{tree}"
        );
    }
}
