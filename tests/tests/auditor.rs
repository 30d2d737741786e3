//! The README's "For auditors" commands cannot rot: after the quickstart
//! (which leaves a committed checkpoint and its receipt behind), its ```sh
//! blocks run in order in one bash against a real `wrangler dev`, with the
//! offline CLI `bvs-verify` on the PATH. Between the first block (pin the
//! key, keep a head) and the second, one more delta is verified, so the
//! consistency proof spans a real change of the log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_tests::docs::{run_bash, section, sh_blocks};
use bvs_tests::{bvs_verify_bin, repo_root, shared};

/// Glue between the README's blocks, not part of the README: one more
/// delta for the same customer, waited on until it is ANCHORED.
const ONE_MORE_VERIFIED_DELTA: &str = r#"
ANCHOR=$(curl -sS --fail-with-body -X POST "$BASE/api/v1/balance/delta" \
  -H "X-Api-Key: $API_KEY" -H 'Content-Type: application/json' \
  -d "{\"customerId\":\"$CUSTOMER\",\"delta\":1.25,\"reason\":\"auditor test\"}" | jq -r .data.anchorId)
for i in $(seq 1 60); do
  [ "$(curl -sS --fail-with-body "$BASE/api/v1/balance/delta/$ANCHOR" -H "X-Api-Key: $API_KEY" | jq -r .data.status)" = ANCHORED ] && break
  sleep 1
done
"#;

#[test]
fn the_readme_auditor_commands_verify_a_receipt_an_answer_and_the_log_offline() {
    let base = shared();
    let root = repo_root();
    let quickstart = std::fs::read_to_string(root.join("docs/quickstart.md")).unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let auditor = sh_blocks(section(&readme, "For auditors"));
    assert_eq!(
        auditor.len(),
        2,
        "the auditor section has two sh blocks: pin and keep, then check"
    );
    let script = [
        sh_blocks(&quickstart).join("\n"),
        "API_KEY=$KEY".to_string(),
        auditor[0].clone(),
        ONE_MORE_VERIFIED_DELTA.to_string(),
        auditor[1].clone(),
    ]
    .join("\n");

    let dir = root.join("target/auditor-doc");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cli = bvs_verify_bin();
    let stdout = run_bash(&script, &base, &dir, cli.parent());

    // A head's second line is its tree size.
    let size = |file: &str| -> u64 {
        let head = std::fs::read_to_string(dir.join(file)).unwrap();
        head.lines().nth(1).unwrap().parse().unwrap()
    };
    let (old, new) = (size("head-old.txt"), size("head-new.txt"));
    assert!(
        old < new,
        "the log grew between the two heads: {old} -> {new}"
    );
    // The --json report is the one pretty-printed object, "{" to "}" at
    // the start of a line.
    let json_start = stdout.find("\n{\n").expect("a --json report") + 1;
    let json_len = stdout[json_start..].find("\n}\n").expect("its end") + 2;
    let report: serde_json::Value =
        serde_json::from_str(&stdout[json_start..json_start + json_len]).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
    // head, monitor (first head), receipt, public answer, new head,
    // consistency, monitor (new head against the kept one), inclusion:
    // each in words.
    let verified = stdout
        .lines()
        .filter(|l| l.starts_with("VERIFIED: "))
        .count();
    assert_eq!(verified, 8, "{stdout}");
    assert!(stdout.contains("first head seen of"), "{stdout}");
    assert!(
        stdout.contains("consistent with the head of size"),
        "{stdout}"
    );
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("heads.json")).unwrap()).unwrap();
    let kept = state["logs"].as_object().unwrap().values().next().unwrap();
    assert_eq!(kept["heads"].as_array().unwrap().len(), 2, "{state}");
}
