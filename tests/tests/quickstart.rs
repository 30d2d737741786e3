//! docs/quickstart.md cannot rot: its ```sh blocks, run in order in one
//! bash against a real `wrangler dev`, take a newcomer from zero to a
//! publicly verified receipt.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The SDKs' suites and the quickstart's TypeScript and Python tabs
// (issue 29): their own file, in this binary's wrangler dev.
#[path = "quickstart/sdks.rs"]
mod sdks;

use std::process::Command;

use bvs_tests::docs::sh_blocks;
use bvs_tests::{repo_root, run_ok, shared};

#[test]
fn the_quickstart_goes_from_zero_to_a_publicly_verified_receipt() {
    let base = shared();
    let markdown = std::fs::read_to_string(repo_root().join("docs/quickstart.md")).unwrap();
    let blocks = sh_blocks(&markdown);
    assert!(
        blocks.len() >= 8,
        "the quickstart has its steps as sh blocks"
    );
    let script = format!("set -euo pipefail\n{}", blocks.join("\n"));

    let stdout = run_ok(
        Command::new("bash")
            .arg("-c")
            .arg(&script)
            .env("BASE", &base),
        "the quickstart failed",
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines.iter().any(|l| l.ends_with(" is ANCHORED")),
        "{stdout}"
    );
    assert!(lines.contains(&"95.75"), "derived balance: {stdout}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("final balance 95.75, proof root ")),
        "{stdout}"
    );
    assert!(lines.contains(&"true"), "public verification: {stdout}");
    assert!(
        lines.iter().any(|l| l.starts_with("200 text/html")),
        "verify page: {stdout}"
    );
    // Credits with a floor: the debit past it refused, the other counted.
    assert!(
        lines.contains(&"the -150 debit was refused: balance_below_floor"),
        "{stdout}"
    );
    assert!(lines.contains(&"credits left 40, refusals 1"), "{stdout}");
    // The secret half of the key is never printed.
    assert!(
        !stdout.contains("pk_test_")
            || lines
                .iter()
                .all(|l| !l.contains("pk_test_") || l.ends_with(".…")),
        "{stdout}"
    );
}
