//! Retention (issue 31 part D, docs/liabilities.md §12): past the tenant's
//! window, a statement's snapshot and nodes are purged; the statement
//! (its hash, totals, counts, log item) stays and still verifies, and a
//! proof request answers 410 `liabilities_purged`.

use bvs_tests::client::{Api, Keyed};
use bvs_tests::cron::now_ms;
use bvs_tests::repo_root;
use bvs_tests::tenant::{patch_jwt, Tenant};
use serde_json::{json, Value};

const DAY_MS: u64 = 86_400_000;

/// `statements` are the period's published statements (both stay); `at`
/// is no earlier than any clock the test gave the service (the crons' and
/// the DEV_MODE start's), so no statement was published after it.
pub fn purged_past_the_window(
    api: &Api,
    t: &Tenant,
    k: &Keyed<'_>,
    (period, customer, root, at): (&str, &str, &str, u64),
    statements: &[&Value],
    cli: impl Fn(&[&str]) -> (bool, String),
    key: &str,
) {
    let r = patch_jwt(
        api,
        "/dashboard/tenant/retention",
        &t.jwt,
        &json!({ "dataRetentionDays": 7 }),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let purge = |time: u64| {
        let r = api.post(
            "/dev/retention",
            &json!({ "rowsMax": 20_000, "time": time }),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.body["data"]["complete"], true, "{}", r.text);
        r.body["data"]["liabilities"].as_u64().unwrap()
    };
    // Inside the window (everything was published after the test began):
    // nothing.
    assert_eq!(purge(now_ms() + 3 * DAY_MS), 0);
    // Past it: both statements stamped, their snapshot rows (200 each)
    // and nodes deleted; a run after that has nothing left.
    let n = purge(at + 8 * DAY_MS);
    assert!(n > 2 + 2 * 200, "{n} rows");
    assert_eq!(purge(at + 9 * DAY_MS), 0);

    // The vendor's and the customer's proof routes: 410, named.
    let proof = k.get(&format!(
        "/api/v1/balance/customers/{customer}/liabilities-proof?period={period}"
    ));
    assert_eq!(proof.status, 410, "{}", proof.text);
    assert_eq!(proof.body["code"], "liabilities_purged", "{}", proof.text);
    let public_proof = api.get(&format!("/api/v1/agreement/liabilities-proof/{root}"));
    assert_eq!(public_proof.status, 410, "{}", public_proof.text);
    assert_eq!(public_proof.body["code"], "liabilities_purged");
    // The period's receipt carries no proof any more.
    let receipt = k.receipt(customer, &format!("period={period}"));
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    assert!(
        receipt.body["data"]["liabilities"].is_null(),
        "{}",
        receipt.text
    );

    // The statements stay: their totals and hashes, and public verify
    // with a log proof that still verifies.
    for s in statements {
        let id = s["id"].as_str().unwrap();
        let now = k.get(&format!("/api/v1/liabilities/{id}"));
        assert_eq!(now.status, 200, "{}", now.text);
        let data = &now.body["data"];
        assert!(data["purgedAt"].is_string(), "{}", now.text);
        for field in ["statementHash", "liabilities", "receivables", "leafIndex"] {
            assert_eq!(data[field], s[field], "{field}: {}", now.text);
        }
        let hash = s["statementHash"].as_str().unwrap();
        let public = api.get(&format!("/api/v1/verify/{hash}"));
        assert_eq!(public.status, 200, "{}", public.text);
        let path = repo_root().join(format!("target/liabilities-purged-{}.json", &hash[..12]));
        std::fs::write(&path, &public.text).unwrap();
        let (ok, out) = cli(&["public", path.to_str().unwrap(), "--key", key]);
        assert!(ok && out.contains("VERIFIED"), "{out}");
    }
}
