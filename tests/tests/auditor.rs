//! The README's "For auditors" commands cannot rot: after the quickstart
//! (which leaves a committed checkpoint and its receipt behind), its ```sh
//! blocks run in order in one bash against a real `wrangler dev`, with the
//! offline CLI `bvs-verify` on the PATH. Between the first block (pin the
//! key, keep a head) and the second, one more delta is verified, so the
//! consistency proof spans a real change of the log.
//!
//! The server runs with three local witnesses and a quorum of 2 (as
//! `scripts/dev.sh` starts it), so the README's `--policy` (the log list's
//! `witnessPolicyText`) is held to real cosignatures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_tests::docs::{run_bash, section, sh_blocks};
use bvs_tests::witness::Witnesses;
use bvs_tests::{bvs_verify_bin, fresh_state_dir, repo_root, Wrangler};

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

/// Glue, not part of the README: waits until the log's latest head is
/// cosigned by the policy's quorum (the service collects cosignatures in
/// a job of its own, after the head is committed), so the README's heads
/// are witnessed ones. Quiet: its checks are not the README's.
const WAIT_WITNESSED: &str = r#"
wait_witnessed() {
  local log key
  log=$(curl -sS --fail-with-body -H "X-Api-Key: $API_KEY" "$BASE/api/v1/balance/receipt/$CUSTOMER?period=$PERIOD" | jq -r .data.log.name)
  curl -sS --fail-with-body "$BASE/api/v1/logs" > glue-logs.json
  key=$(jq -r --arg log "$log" '.data.logs[] | select(.name == $log) | .verifierKey' glue-logs.json)
  jq -r --arg log "$log" '.data.logs[] | select(.name == $log) | .witnessPolicyText' glue-logs.json > glue-policy.txt
  for i in $(seq 1 90); do
    curl -sS --fail-with-body "$BASE/api/v1/log/$log/checkpoint" > glue-head.txt
    bvs-verify head glue-head.txt --key "$key" --policy glue-policy.txt > glue-out.txt && return 0
    sleep 1
  done
  echo "the latest head of $log was not witnessed within 90 s:" >&2
  cat glue-out.txt >&2
  return 1
}
wait_witnessed
"#;

#[test]
fn the_readme_auditor_commands_verify_a_receipt_an_answer_and_the_log_offline() {
    let state = fresh_state_dir("auditor");
    let _witnesses = Witnesses::start(&state, 3, 2);
    let server = Wrangler::start_with_vars(&state, &_witnesses.vars());
    let base = server.base_url.clone();
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
        WAIT_WITNESSED.to_string(),
        auditor[0].clone(),
        ONE_MORE_VERIFIED_DELTA.to_string(),
        WAIT_WITNESSED.to_string(),
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
    // Every command given --policy checked the witnesses, and said which
    // cosigned: head, monitor, receipt, public, head, monitor (the --json
    // report says it inside its JSON).
    let witnessed = stdout
        .lines()
        .filter(|l| l.starts_with("PASS  witnesses") && l.contains("  witnessed: cosigned by"))
        .count();
    assert_eq!(witnessed, 6, "passing witness checks:\n{stdout}");
    assert!(
        !stdout.contains("Witnesses: not checked"),
        "a command ran without --policy:\n{stdout}"
    );
    let json_witnesses = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "witnesses")
        .unwrap_or_else(|| panic!("no witnesses check in {report}"));
    assert_eq!(json_witnesses["ok"], true, "{report}");
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
