//! Supersession end to end (issue 31 part D, docs/liabilities.md §9): a
//! second statement of a published period (started through the DEV_MODE
//! clock, as the real one has not closed the month) names the first in
//! `supersedes`; the first shows `supersededBy`; both answer on public
//! verify of their hashes with their own log proof, and both verify.

use std::time::Duration;

use bvs_tests::client::{Api, Keyed};
use bvs_tests::{eventually, repo_root};
use serde_json::{json, Value};

/// Starts a second statement of `period` at `time` and checks it
/// supersedes `first` (published). Returns the second, published.
pub fn second_supersedes_first(
    api: &Api,
    k: &Keyed<'_>,
    key: &str,
    period: &str,
    time: u64,
    first: &Value,
    cli: impl Fn(&[&str]) -> (bool, String),
) -> Value {
    let started = k.post(
        "/dev/liabilities/start",
        &json!({ "period": period, "time": time }),
    );
    assert_eq!(started.status, 202, "{}", started.text);
    let id = started.body["data"]["id"].as_str().unwrap().to_owned();
    assert_ne!(Some(id.as_str()), first["id"].as_str(), "{}", started.text);
    let second = eventually(
        Duration::from_secs(120),
        "the second statement published",
        || {
            let r = k.get(&format!("/api/v1/liabilities/{id}"));
            assert_eq!(r.status, 200, "{}", r.text);
            assert_ne!(r.body["data"]["status"], "failed", "{}", r.text);
            (r.body["data"]["status"] == "published").then(|| r.body["data"].clone())
        },
    );
    let first_hash = first["statementHash"].as_str().unwrap();
    let second_hash = second["statementHash"].as_str().unwrap();
    assert_ne!(first_hash, second_hash);
    assert_eq!(second["supersedes"], json!(first_hash), "{second}");
    assert!(second["supersededBy"].is_null(), "{second}");
    // The first now shows who supersedes it.
    let old = k.get(&format!(
        "/api/v1/liabilities/{}",
        first["id"].as_str().unwrap()
    ));
    assert_eq!(old.status, 200, "{}", old.text);
    assert_eq!(
        old.body["data"]["supersededBy"],
        json!(second_hash),
        "{}",
        old.text
    );
    // Both are in the log, each at its own leaf; the period lists both,
    // newest first.
    assert_ne!(second["leafIndex"], first["leafIndex"]);
    let listed = k.get(&format!("/api/v1/liabilities?period={period}"));
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert_eq!(listed.body["data"]["statements"][0]["id"], json!(id));
    assert_eq!(listed.body["data"]["statements"][1]["id"], first["id"]);
    // Both answer on public verify of their hash, with a log proof that
    // bvs-verify checks.
    for (hash, supersedes, superseded_by) in [
        (first_hash, Value::Null, json!(second_hash)),
        (second_hash, json!(first_hash), Value::Null),
    ] {
        let public = api.get(&format!("/api/v1/verify/{hash}"));
        assert_eq!(public.status, 200, "{}", public.text);
        let data = &public.body["data"];
        assert_eq!(data["kind"], "liabilities", "{}", public.text);
        assert_eq!(data["statementHash"], json!(hash), "{}", public.text);
        assert_eq!(data["supersedes"], supersedes, "{}", public.text);
        assert_eq!(data["supersededBy"], superseded_by, "{}", public.text);
        let path = repo_root().join(format!("target/liabilities-public-{}.json", &hash[..12]));
        std::fs::write(&path, &public.text).unwrap();
        let (ok, out) = cli(&["public", path.to_str().unwrap(), "--key", key]);
        assert!(ok && out.contains("VERIFIED"), "{out}");
    }
    second
}
