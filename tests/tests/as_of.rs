//! Balances as of a moment (issue 43, docs/balance.md "As of") through
//! `wrangler dev`: derive's `asOf` equals a fold this test computes
//! itself from the ledger's deltas at five moments, for both bases
//! (`verified`: by blockTimestamp; `declared`: by declaredTimestamp, some
//! declared in the past), and its proof verifies in `bvs-verify as-of`
//! and fails once an amount is tampered with or the boundary moved.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::amount::Amount;
use bvs_core::time::{format_iso_ms, parse_iso_ms};
use bvs_tests::api;
use bvs_tests::client::Keyed;
use bvs_tests::tenant::new_tenant_on_plan;
use serde_json::{json, Value};

fn emit(k: &Keyed<'_>, body: Value) -> String {
    let r = k.post(bvs_tests::ledger::DELTA, &body);
    assert_eq!(r.status, 202, "{}", r.text);
    r.body["data"]["anchorId"].as_str().unwrap().to_string()
}

/// `bvs-verify as-of` over a saved answer, against the log's key.
fn cli(text: &str, name: &str) -> (bool, String) {
    bvs_tests::bvs_verify_saved("as-of", text, name, &bvs_tests::log::log_key(&api()))
}

/// The test's own fold: the sum, count and last delta of those whose
/// `field` time is at or before `at`.
fn fold(deltas: &[Value], field: &str, at: i64) -> (Amount, u64, Option<String>) {
    let mut sum = Amount::ZERO;
    let mut count = 0;
    let mut last: Option<(i64, u64, String)> = None;
    for d in deltas {
        let t = parse_iso_ms(d[field].as_str().unwrap()).unwrap();
        if t <= at {
            sum = sum
                .checked_add(Amount::parse(&d["delta"].to_string()).unwrap())
                .unwrap();
            count += 1;
            let seq = d["ledgerSeq"].as_u64().unwrap_or(count);
            if last
                .as_ref()
                .is_none_or(|(lt, ls, _)| (t, seq) > (*lt, *ls))
            {
                last = Some((t, seq, d["anchorId"].as_str().unwrap().to_string()));
            }
        }
    }
    (sum, count, last.map(|(_, _, a)| a))
}

#[test]
fn as_of_equals_the_tests_own_fold_at_five_moments_and_its_proof_verifies() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let c = "cus_as_of";
    // Four rounds, each waited for, so their verification times differ;
    // two deltas declared in the past.
    let rounds: [&[Value]; 4] = [
        &[json!({"customerId": c, "delta": 100, "reason": "top-up"})],
        &[
            json!({"customerId": c, "delta": -30, "reason": "use", "timestamp": "2026-01-15T00:00:00Z"}),
            json!({"customerId": c, "delta": 7.25, "reason": "refund"}),
        ],
        &[
            json!({"customerId": c, "delta": -12, "reason": "use", "timestamp": "2026-02-01T12:00:00Z"}),
        ],
        &[json!({"customerId": c, "delta": 5, "reason": "bonus"})],
    ];
    for round in rounds {
        let anchors: Vec<String> = round.iter().map(|b| emit(&k, b.clone())).collect();
        for a in &anchors {
            k.wait_anchored(a);
        }
    }
    let all = k.derive(c, "limit=100");
    assert_eq!(all.status, 200, "{}", all.text);
    let deltas = all.body["data"]["deltas"].as_array().unwrap().clone();
    assert_eq!(deltas.len(), 5);
    let block = |i: usize| parse_iso_ms(deltas[i]["blockTimestamp"].as_str().unwrap()).unwrap();
    let moments = [
        block(0) - 1,
        block(0),
        (block(0) + block(4)) / 2,
        block(3),
        block(4) + 60_000,
    ];
    let declared_moments = [
        parse_iso_ms("2026-01-01T00:00:00Z").unwrap(),
        parse_iso_ms("2026-01-15T00:00:00Z").unwrap(),
        parse_iso_ms("2026-02-01T12:00:00Z").unwrap(),
        block(0),
        block(4) + 60_000,
    ];
    for (basis, field, at_list) in [
        ("verified", "blockTimestamp", moments),
        ("declared", "declaredTimestamp", declared_moments),
    ] {
        for (i, at) in at_list.into_iter().enumerate() {
            let query = format!("asOf={}&asOfBasis={basis}", format_iso_ms(at));
            let r = k.derive(c, &query);
            assert_eq!(r.status, 200, "{query}: {}", r.text);
            let a = &r.body["data"]["asOf"];
            let (sum, count, last) = fold(&deltas, field, at);
            assert_eq!(
                Amount::parse(&a["balance"].to_string()).unwrap(),
                sum,
                "{query}: {a}"
            );
            assert_eq!(a["deltasCount"], count, "{query}: {a}");
            assert_eq!(
                a["lastDelta"].as_str().map(str::to_string),
                last,
                "{query}: {a}"
            );
            assert_eq!(a["basis"], basis);
            let (ok, text) = cli(&r.text, &format!("as-of-{basis}-{i}"));
            assert!(ok, "{query}: {text}");
            // Tampered: an amount changed; the boundary moved later.
            let mut tampered: Value = serde_json::from_str(&r.text).unwrap();
            let listed = tampered["data"]["asOf"]["proof"]["deltas"]
                .as_array_mut()
                .unwrap();
            if let Some(first) = listed.first_mut() {
                first["delta"] = json!(1_000_000);
                let (ok, text) = cli(&tampered.to_string(), &format!("as-of-t-{basis}-{i}"));
                assert!(!ok, "{query}: a tampered amount must fail: {text}");
            }
            if basis == "verified" && !r.body["data"]["asOf"]["proof"]["next"].is_null() {
                let mut moved: Value = serde_json::from_str(&r.text).unwrap();
                moved["data"]["asOf"]["at"] = json!(format_iso_ms(block(4) + 120_000));
                let (ok, text) = cli(&moved.to_string(), &format!("as-of-m-{i}"));
                assert!(!ok, "{query}: a moved boundary must fail: {text}");
            }
        }
    }
    // Both SDKs run the same check: the last verified answer passes, its
    // tampered copy fails.
    let r = k.derive(c, &format!("asOf={}", format_iso_ms(moments[2])));
    let dir = bvs_tests::fresh_state_dir("as-of-sdk");
    let (good, bad) = (dir.join("as-of.json"), dir.join("tampered.json"));
    std::fs::write(&good, &r.text).unwrap();
    let mut tampered: Value = serde_json::from_str(&r.text).unwrap();
    tampered["data"]["asOf"]["proof"]["deltas"][0]["delta"] = json!(101);
    std::fs::write(&bad, tampered.to_string()).unwrap();
    let root = bvs_tests::repo_root();
    let log = bvs_tests::log::log_key(&api);
    let with_env = |cmd: &mut std::process::Command| {
        cmd.env("BVS_LOG_KEY", &log)
            .env("BVS_AS_OF_FILE", &good)
            .env("BVS_AS_OF_TAMPERED", &bad);
    };
    // The same for a declared answer (both kinds, one check).
    let declared = k.derive(
        c,
        &format!(
            "asOf={}&asOfBasis=declared",
            format_iso_ms(declared_moments[2])
        ),
    );
    let (good_d, bad_d) = (
        dir.join("declared.json"),
        dir.join("declared-tampered.json"),
    );
    std::fs::write(&good_d, &declared.text).unwrap();
    let mut tampered: Value = serde_json::from_str(&declared.text).unwrap();
    tampered["data"]["asOf"]["balance"] = json!(12345);
    std::fs::write(&bad_d, tampered.to_string()).unwrap();
    for (g, b) in [(&good, &bad), (&good_d, &bad_d)] {
        let mut node = std::process::Command::new("node");
        node.arg(root.join("sdk/typescript/test/as-of-live.mjs"));
        with_env(&mut node);
        node.env("BVS_AS_OF_FILE", g).env("BVS_AS_OF_TAMPERED", b);
        let out = bvs_tests::run_ok(&mut node, "the TypeScript SDK's as-of check failed");
        assert!(out.contains("sdk ok"), "{out}");
        let mut py = std::process::Command::new(root.join(".venv-sdk/bin/python"));
        py.arg(root.join("sdk/python/tests/live_as_of.py"))
            .env("PYTHONPATH", root.join("sdk/python/src"));
        with_env(&mut py);
        py.env("BVS_AS_OF_FILE", g).env("BVS_AS_OF_TAMPERED", b);
        let out = bvs_tests::run_ok(&mut py, "the Python SDK's as-of check failed");
        assert!(out.contains("sdk ok"), "{out}");
    }

    // The customer route answers each asset's balance as of the moment.
    let r = k.customer(c);
    assert!(r.body["data"].get("asOf").is_none(), "{}", r.text);
    let r = k.get(&format!(
        "/api/v1/balance/customers/{c}?asOf={}",
        format_iso_ms(moments[2])
    ));
    assert_eq!(r.status, 200, "{}", r.text);
    let (sum, count, last) = fold(&deltas, "blockTimestamp", moments[2]);
    let b = &r.body["data"]["asOf"]["balances"][0];
    assert!(b["asset"].is_null(), "{}", r.text);
    assert_eq!(
        Amount::parse(&b["balance"].to_string()).unwrap(),
        sum,
        "{}",
        r.text
    );
    assert_eq!(b["deltasCount"], count);
    assert_eq!(b["lastDelta"].as_str().map(str::to_string), last);

    // Bad queries name the field.
    let r = k.derive(c, "asOf=yesterday");
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.body["field"], "asOf", "{}", r.text);
    let r = k.derive(c, "asOf=2026-01-01T00:00:00Z&asOfBasis=posted");
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.body["field"], "asOfBasis", "{}", r.text);
    // Without asOf the answer is today's.
    assert!(k.derive(c, "").body["data"].get("asOf").is_none());
}
