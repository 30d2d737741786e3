//! docs/liabilities.md's worked example is what core builds, and every
//! command the page shows gives the output it shows: its `console` blocks
//! are run in bash (sha256sum, xxd, jq), one session for the page, with
//! its JSON block saved as `proof.json`.
#![cfg(all(feature = "server", feature = "liabilities"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::liabilities::proof::{verify_proof, Checker};
use bvs_core::liabilities::sample;
use bvs_core::liabilities::{empty_root, ProofDocument, TreeKind};
use bvs_core::types::{CustomerId, Period};
use bvs_core::Amount;
use std::process::Command;

fn doc() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/liabilities.md"
    ))
    .unwrap()
}

fn example() -> sample::Sample {
    let balances = [
        ("cust_a", Amount::parse("42.1").unwrap()),
        ("cust_b", Amount::parse("1234525.79").unwrap()),
        ("cust_c", Amount::parse("-5").unwrap()),
    ];
    sample::build(
        "bvs.example/log/sandbox",
        &[0x42; 32],
        "ten_example",
        Period::parse("2026-11").unwrap(),
        &balances,
        [0x11; 32],
        2,
        2,
    )
    .unwrap()
}

/// The fenced blocks of `lang` in the page, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```").unwrap();
        out.push(body[..end].to_string());
        rest = &body[end..];
    }
    out
}

#[test]
fn the_worked_example_is_what_core_builds_and_verifies() {
    let text = doc();
    let s = example();
    let a = s
        .customers
        .iter()
        .find(|c| c.customer_id == "cust_a")
        .unwrap();
    let shown = &blocks(&text, "json")[0];
    let read = ProofDocument::from_json(&bvs_core::json::parse(shown).unwrap()).unwrap();
    assert_eq!(read, a.document);
    let me = CustomerId::parse("cust_a").unwrap();
    let report = verify_proof(
        &read,
        Checker::Customer(&me),
        Some(&s.public_key),
        Some(a.balance),
    );
    assert!(report.ok, "{}", report.to_json());
    assert_eq!(
        report.checks.last().unwrap().detail,
        "your balance of 42.1 is counted in a total of 1234567.89 owed to 3 customers on 2026-11-30"
    );
    assert!(text.contains(&report.checks.last().unwrap().detail));
    // The values the page shows for the other customers and trees.
    let c = s
        .customers
        .iter()
        .find(|c| c.customer_id == "cust_c")
        .unwrap();
    assert_eq!(c.document.liabilities.index, 1);
    assert_eq!(c.document.liabilities.amount, Amount::ZERO);
    assert_eq!(c.document.receivables.as_ref().unwrap().index, 0);
    assert!(c.document.receivables.as_ref().unwrap().path.is_empty());
    assert!(text.contains(&empty_root(TreeKind::Receivables).hash.to_hex()));
    assert!(text.contains(&s.statement.item_hash().to_hex()));
}

#[test]
fn every_command_on_the_page_prints_what_the_page_shows() {
    let text = doc();
    let dir = std::env::temp_dir().join(format!("bvs-liabilities-doc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("proof.json"), &blocks(&text, "json")[0]).unwrap();
    let mut script = String::from("set -o pipefail\n");
    let mut expected: Vec<(String, String)> = Vec::new();
    for block in blocks(&text, "console") {
        for line in block.lines() {
            if let Some(cmd) = line.strip_prefix("$ ") {
                script.push_str(&format!("echo '@@{}@@'\n{cmd}\n", expected.len()));
                expected.push((cmd.to_string(), String::new()));
            } else {
                let out = &mut expected.last_mut().unwrap().1;
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    assert!(expected.len() >= 15, "{} commands", expected.len());
    let run = Command::new("bash")
        .arg("--noprofile")
        .arg("--norc")
        .arg("-c")
        .arg(&script)
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        run.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut got: Vec<String> = Vec::new();
    for line in stdout.lines() {
        if line.starts_with("@@") && line.ends_with("@@") {
            got.push(String::new());
        } else {
            let out = got.last_mut().unwrap();
            out.push_str(line);
            out.push('\n');
        }
    }
    assert_eq!(got.len(), expected.len());
    for ((cmd, want), got) in expected.iter().zip(&got) {
        assert_eq!(got, want, "$ {cmd}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
