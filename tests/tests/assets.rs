//! Assets (issue 43, docs/balance.md "Assets") through `wrangler dev`: a
//! customer's balances of several assets in one ledger never mix (emit,
//! batch, derive, receipt, compare, customers, checkpoint, public
//! verify), a delta too precise for its asset or a code used with another
//! precision is a 400 naming the field, and a receipt of one asset checks
//! in `bvs-verify` and fails once its raw content names another asset.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_tests::api;
use bvs_tests::tenant::new_tenant_on_plan;
use serde_json::{json, Value};

fn emit(k: &bvs_tests::client::Keyed<'_>, body: Value) -> Value {
    let r = k.post(bvs_tests::ledger::DELTA, &body);
    assert_eq!(r.status, 202, "{}", r.text);
    r.body["data"].clone()
}

#[test]
fn two_assets_of_one_customer_never_mix() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let c = "cus_assets";
    // The default asset, then two named ones, single and batched.
    let plain = emit(&k, json!({"customerId": c, "delta": 7, "reason": "plain"}));
    let usd = emit(
        &k,
        json!({"customerId": c, "delta": 12.25, "asset": "USD/2", "reason": "top-up"}),
    );
    let batch = k.batch_anchored(&[
        json!({"customerId": c, "delta": -2.5, "asset": "USD/2", "reason": "spend"}),
        json!({"customerId": c, "delta": 500, "asset": "CREDITS/0", "reason": "grant"}),
        json!({"customerId": c, "delta": 5, "asset": "CREDITS/0", "reason": "grant"}),
    ]);
    assert_eq!(batch["totalQueued"], 3, "{batch}");
    k.wait_anchored(plain["anchorId"].as_str().unwrap());
    k.wait_anchored(usd["anchorId"].as_str().unwrap());
    // Each single emit's estimate counts its own asset's deltas.
    assert_eq!(usd["estimatedVerifiedDeltas"], 1, "{usd}");

    // Derive answers one asset; without `asset`, the default one.
    let d = k.derive(c, "");
    assert_eq!(d.status, 200, "{}", d.text);
    assert_eq!(d.body["data"]["computedBalance"], json!(7));
    assert_eq!(d.body["data"]["deltasCount"], 1);
    assert_eq!(d.body["data"]["pagination"]["total"], 1);
    assert!(d.body["data"].get("asset").is_none(), "{}", d.text);
    let d = k.derive(c, "asset=USD/2");
    assert_eq!(d.status, 200, "{}", d.text);
    let data = &d.body["data"];
    assert_eq!(data["asset"], "USD/2");
    assert_eq!(data["computedBalance"], json!(9.75));
    assert_eq!(data["deltasCount"], 2);
    assert_eq!(data["deltas"].as_array().unwrap().len(), 2);
    let d = k.derive(c, "asset=CREDITS/0");
    assert_eq!(d.body["data"]["computedBalance"], json!(505), "{}", d.text);
    // Starting from a USD delta's root stays in USD.
    let first_usd = usd["itemsRoot"].as_str().unwrap();
    let d = k.derive(
        c,
        &format!("asset=USD/2&startingCheckpoint={first_usd}&startingBalance=12.25"),
    );
    assert_eq!(d.status, 200, "{}", d.text);
    assert_eq!(d.body["data"]["computedBalance"], json!(9.75), "{}", d.text);
    assert_eq!(d.body["data"]["deltasCount"], 1);
    // An asset the customer never used, and one that does not parse.
    assert_eq!(k.derive(c, "asset=EUR/2").status, 404);
    let bad = k.derive(c, "asset=usd");
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(bad.text.contains("asset"), "{}", bad.text);

    // The customer lists its default balance and each named one apart.
    let cust = k.customer(c);
    assert_eq!(cust.status, 200, "{}", cust.text);
    let cd = &cust.body["data"];
    assert_eq!(cd["computedBalance"], json!(7));
    assert_eq!(cd["totalDeltas"], 1);
    let balances = cd["balances"].as_array().unwrap();
    assert_eq!(balances.len(), 2, "{cd}");
    assert_eq!(balances[0]["asset"], "CREDITS/0");
    assert_eq!(balances[0]["computedBalance"], json!(505));
    assert_eq!(balances[1]["asset"], "USD/2");
    assert_eq!(balances[1]["computedBalance"], json!(9.75));
    assert_eq!(balances[1]["deltasCount"], 2);
    let list = k.get(&format!(
        "{}?prefix=cus_assets",
        bvs_tests::ledger::CUSTOMERS
    ));
    let listed = &list.body["data"]["customers"];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{}", list.text);
    assert_eq!(list.body["data"]["pagination"]["total"], 1);
    assert_eq!(listed[0]["balances"].as_array().unwrap().len(), 2);
    // A plain customer shows no `balances`.
    emit(
        &k,
        json!({"customerId": "cus_plain", "delta": 1, "reason": "plain"}),
    );
    assert!(k.customer("cus_plain").body["data"]
        .get("balances")
        .is_none());

    // Compare against one asset.
    let cmp = k.post(
        bvs_tests::ledger::COMPARE,
        &json!({"customerId": c, "asset": "USD/2", "yourBalance": 9.75, "theirBalance": 7}),
    );
    assert_eq!(cmp.status, 200, "{}", cmp.text);
    assert_eq!(cmp.body["data"]["computedBalance"], json!(9.75));
    assert_eq!(cmp.body["data"]["matchesYours"], true);
    assert_eq!(cmp.body["data"]["matchesTheirs"], false);
    assert_eq!(cmp.body["data"]["asset"], "USD/2");

    // The receipt lists one asset's deltas, and the public verify of its
    // root answers them.
    let r = k.receipt(c, "asset=USD/2");
    assert_eq!(r.status, 200, "{}", r.text);
    let receipt = &r.body["data"];
    assert_eq!(receipt["asset"], "USD/2");
    assert_eq!(receipt["deltasCount"], 2);
    assert_eq!(receipt["finalBalance"], json!(9.75));
    for item in receipt["proof"]["items"].as_array().unwrap() {
        assert_eq!(item["raw"]["asset"], "USD/2", "{item}");
    }
    let plain_receipt = k.receipt(c, "");
    assert_eq!(plain_receipt.body["data"]["deltasCount"], 1);
    assert_eq!(plain_receipt.body["data"]["finalBalance"], json!(7));
    assert!(plain_receipt.body["data"].get("asset").is_none());
    let root = receipt["itemsRoot"].as_str().unwrap();
    let public = api.get(&format!("/api/v1/verify/{root}"));
    assert_eq!(public.status, 200, "{}", public.text);
    assert_eq!(public.body["data"]["verified"], true, "{}", public.text);

    // `bvs-verify` checks it; naming another asset in a raw content fails.
    let dir = bvs_tests::fresh_state_dir("assets-receipt");
    let saved = dir.join("receipt.json");
    std::fs::write(&saved, &r.text).unwrap();
    let log = bvs_tests::log::log_key(&api);
    let cli = |file: &std::path::Path| {
        let out = std::process::Command::new(bvs_tests::bvs_verify_bin())
            .args(["receipt", file.to_str().unwrap(), "--key", &log])
            .output()
            .expect("run bvs-verify");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (ok, text) = cli(&saved);
    assert!(ok, "{text}");
    let tampered = dir.join("tampered.json");
    std::fs::write(
        &tampered,
        r.text.replacen(
            "\"asset\":\"USD/2\",\"customerId\"",
            "\"asset\":\"USD/3\",\"customerId\"",
            1,
        ),
    )
    .unwrap();
    let (ok, text) = cli(&tampered);
    assert!(!ok, "a raw content of another asset must fail: {text}");

    // A customer's checkpoint covers one asset; the whole tenant's, all.
    let cp = k.checkpoint(&json!({"customerId": c, "asset": "USD/2"}));
    assert_eq!(cp.status, 202, "{}", cp.text);
    assert_eq!(cp.body["data"]["asset"], "USD/2");
    assert_eq!(cp.body["data"]["deltaCount"], 2);
    assert_eq!(cp.body["data"]["merkleRoot"], receipt["itemsRoot"]);
    let cp_default = k.checkpoint(&json!({"customerId": c}));
    assert_eq!(
        cp_default.body["data"]["deltaCount"], 1,
        "{}",
        cp_default.text
    );
    let whole = k.checkpoint(&json!({}));
    assert_eq!(whole.status, 202, "{}", whole.text);
    // Every verified delta of the tenant: cus_assets' 5 and cus_plain's
    // (once verified; at least the five).
    assert!(
        whole.body["data"]["deltaCount"].as_u64().unwrap() >= 5,
        "{}",
        whole.text
    );
    let asset_only = k.checkpoint(&json!({"asset": "USD/2"}));
    assert_eq!(asset_only.status, 400, "{}", asset_only.text);
    let committed = k.wait_committed(cp.body["data"]["checkpointId"].as_str().unwrap());
    assert_eq!(committed["asset"], "USD/2");

    // The tenant's assets, each with the precision its code keeps.
    let assets = k.get("/api/v1/balance/assets");
    assert_eq!(assets.status, 200, "{}", assets.text);
    let listed: Vec<&str> = assets.body["data"]["assets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["asset"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["CREDITS/0", "USD/2"]);
}

#[test]
fn precision_is_refused_with_the_field_named_and_nothing_written() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let c = "cus_precise";
    let r = k.post(
        bvs_tests::ledger::DELTA,
        &json!({"customerId": c, "delta": 1.005, "asset": "USD/2", "reason": "x"}),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(
        r.problem_fields().contains(&"delta".to_string()),
        "{}",
        r.text
    );
    for bad in ["usd/2", "USD/19", "USD", 7.to_string().as_str()] {
        let r = k.post(
            bvs_tests::ledger::DELTA,
            &json!({"customerId": c, "delta": 1, "asset": bad, "reason": "x"}),
        );
        assert_eq!(r.status, 400, "{bad}: {}", r.text);
        assert!(
            r.problem_fields().contains(&"asset".to_string()),
            "{}",
            r.text
        );
    }
    // A code keeps the precision it was first used with.
    emit(
        &k,
        json!({"customerId": c, "delta": 1.5, "asset": "PTS/1", "reason": "x"}),
    );
    let r = k.post(
        bvs_tests::ledger::DELTA,
        &json!({"customerId": c, "delta": 2, "asset": "PTS/0", "reason": "x"}),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(
        r.problem_fields().contains(&"asset".to_string()),
        "{}",
        r.text
    );
    assert!(r.text.contains("PTS/1"), "{}", r.text);
    // In a batch, the item is named; nothing of the batch is written.
    let b = k.batch(&[
        json!({"customerId": c, "delta": 1, "asset": "PTS/1", "reason": "ok"}),
        json!({"customerId": c, "delta": 1, "asset": "PTS/2", "reason": "other precision"}),
    ]);
    assert_eq!(b.status, 400, "{}", b.text);
    assert!(
        b.problem_fields().contains(&"deltas[1].asset".to_string()),
        "{}",
        b.text
    );
    let b = k.batch(&[
        json!({"customerId": c, "delta": 1, "asset": "PTS/1", "reason": "ok"}),
        json!({"customerId": c, "delta": 0.25, "asset": "PTS/1", "reason": "too precise"}),
    ]);
    assert_eq!(b.status, 202, "{}", b.text);
    assert_eq!(b.body["data"]["totalFailed"], 1, "{}", b.text);
    assert_eq!(b.body["data"]["results"][1]["status"], "FAILED");
    let first = k.batch_anchored(&[
        json!({"customerId": c, "delta": 1, "asset": "PTS/1", "reason": "last"}),
    ]);
    assert_eq!(first["totalQueued"], 1);
    let d = k.derive(c, "asset=PTS/1");
    // 1.5 + the batch's one good item + the last: the refused ones never counted.
    assert_eq!(d.body["data"]["computedBalance"], json!(3.5), "{}", d.text);
    assert_eq!(d.body["data"]["deltasCount"], 3);
}

/// Liabilities statements are per asset (docs/liabilities.md, "Assets"):
/// a statement of `USD/2` sums the customers' USD/2 balances only, the
/// default asset's sums its own, each customer's proof of the USD/2
/// statement verifies with its USD/2 balance, and a USD/2 period receipt
/// carries that proof tied to its asset.
#[test]
fn liabilities_statements_of_two_assets_never_mix() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let key = bvs_tests::log::log_key(&api);
    let a = k.batch_anchored(&[
        json!({"customerId": "cus_la", "delta": 10.5, "asset": "USD/2", "reason": "top-up"}),
        json!({"customerId": "cus_lb", "delta": 4, "asset": "USD/2", "reason": "top-up"}),
        json!({"customerId": "cus_la", "delta": 1000, "reason": "plain"}),
        json!({"customerId": "cus_lb", "delta": 7, "reason": "plain"}),
    ]);
    assert_eq!(a["totalQueued"], 4, "{a}");
    let now = bvs_tests::cron::now_ms();
    let period = bvs_core::types::Period::containing(i64::try_from(now).unwrap());
    let next_month = u64::try_from(period.end_ms()).unwrap() + 60_000;
    let start = |asset: Option<&str>| {
        let mut body = json!({"period": period.to_string(), "time": next_month});
        if let Some(a) = asset {
            body["asset"] = json!(a);
        }
        let r = k.post("/dev/liabilities/start", &body);
        assert_eq!(r.status, 202, "{}", r.text);
        let id = r.body["data"]["id"].as_str().unwrap().to_string();
        bvs_tests::eventually(bvs_tests::ledger::WAIT, "the statement published", || {
            let r = k.get(&format!("/api/v1/liabilities/{id}"));
            assert_ne!(r.body["data"]["status"], "failed", "{}", r.text);
            (r.body["data"]["status"] == "published").then(|| r.body["data"].clone())
        })
    };
    let usd = start(Some("USD/2"));
    let plain = start(None);
    assert_eq!(usd["asset"], "USD/2", "{usd}");
    assert_eq!(usd["liabilities"]["total"], "14.5", "{usd}");
    assert!(plain.get("asset").is_none(), "{plain}");
    assert_eq!(plain["liabilities"]["total"], "1007", "{plain}");
    assert_ne!(usd["statementHash"], plain["statementHash"]);
    // Each asset's list holds its own statement only.
    let listed = k.get(&format!("/api/v1/liabilities?period={period}&asset=USD/2"));
    assert_eq!(
        listed.body["data"]["statements"].as_array().unwrap().len(),
        1,
        "{}",
        listed.text
    );
    // A customer's proof of the USD/2 statement verifies with its USD/2
    // balance, and not with its default one.
    let proof = k.get(&format!(
        "/api/v1/balance/customers/cus_la/liabilities-proof?period={period}&asset=USD/2"
    ));
    assert_eq!(proof.status, 200, "{}", proof.text);
    assert_eq!(
        proof.body["data"]["statement"]["asset"], "USD/2",
        "{}",
        proof.text
    );
    let dir = bvs_tests::fresh_state_dir("assets-liabilities");
    let file = dir.join("proof.json");
    std::fs::write(&file, &proof.text).unwrap();
    let cli = |balance: &str| {
        let out = std::process::Command::new(bvs_tests::bvs_verify_bin())
            .args([
                "liabilities",
                file.to_str().unwrap(),
                "--customer",
                "cus_la",
            ])
            .args(["--key", &key, "--balance", balance])
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (ok, text) = cli("10.5");
    assert!(ok, "{text}");
    let (ok, text) = cli("1000");
    assert!(!ok, "{text}");
    // The USD/2 period receipt carries that proof, tied to its asset.
    let r = k.receipt("cus_la", &format!("period={period}&asset=USD/2"));
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body["data"]["liabilities"]["statement"]["asset"], "USD/2",
        "{}",
        r.text
    );
    let (ok, text) = bvs_tests::bvs_verify_saved("receipt", &r.text, "assets-usd-receipt", &key);
    assert!(ok, "{text}");
    assert!(text.contains("PASS  liabilities.receipt"), "{text}");
}
