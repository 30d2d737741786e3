//! Attacks inside one tenant (issue 25), over HTTP against `wrangler dev`:
//! a customer reading other customers' amounts through a root it was
//! given, a customer named `all`, two objects sharing one root, replayed
//! and flooded agreement statements, a key registration refused half-way,
//! and a vendor replacing its customer's key. Each test reproduced its
//! attack before the fix.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::time::Duration;

use bvs_core::agreement::{
    counterparty_key, item_hash, sign, BalanceStatement, CheckpointRef, Dispute, KeyBinding,
    Origin, Statement,
};
use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::pinpoint::{DivergenceKind, EntryId};
use bvs_core::types::Period;
use bvs_core::verify::verify_public_answer;
use bvs_tests::client::{Api, Keyed, Reply};
use bvs_tests::ledger::{Delta, FACTS};
use bvs_tests::log::log_key;
use bvs_tests::receiver::{wait_event, Receiver};
use bvs_tests::tenant::{
    agreement_webhook, create_webhook, new_tenant, new_tenant_on_plan, set_plan, Tenant,
};
use bvs_tests::{api, eventually};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);
const CUSTOMER_SEED: [u8; 32] = [21; 32];
const NEXT_SEED: [u8; 32] = [22; 32];
const VENDOR_SEED: [u8; 32] = [66; 32];

/// A public GET, waiting out the public routes' per-network rate limit
/// (429 is not these tests' subject).
fn public_get(api: &Api, path: &str) -> Reply {
    for _ in 0..30 {
        let r = api.get(path);
        if r.status != 429 {
            return r;
        }
        std::thread::sleep(Duration::from_millis(1_000));
    }
    panic!("{path}: still rate-limited after 30 s");
}

fn public_post(api: &Api, path: &str, body: &Value) -> Reply {
    for _ in 0..30 {
        let r = api.post(path, body);
        if r.status != 429 {
            return r;
        }
        std::thread::sleep(Duration::from_millis(1_000));
    }
    panic!("{path}: still rate-limited after 30 s");
}

/// A public GET from a network of its own (`n`th of a /64 range), so a
/// stranger's hundreds of guesses meet no rate limit.
fn stranger_get(api: &Api, path: &str, n: usize) -> Reply {
    api.send(
        api.req(reqwest::Method::GET, path)
            .header("cf-connecting-ip", format!("2001:db8:4040:{n:x}::1")),
    )
}

/// Every 64-hex-digit token of a text (hashes, roots, proofs).
fn hashes_in(text: &str) -> BTreeSet<String> {
    let b = text.as_bytes();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < b.len() {
        let run = b[i..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if run == 64 {
            out.insert(text[i..i + 64].to_ascii_lowercase());
        }
        i += run.max(1);
    }
    out
}

/// Issue 40: a stranger holding a batch root over several customers
/// (8 items over 4 customers, interleaved) fetches every page of its
/// public answer, computes every candidate root from what they show (each
/// hash, its RFC 9162 leaf hash, and the root of every in-order
/// subsequence of the records' hashes, as items and as leaves), and asks
/// public verify for each: nothing but the batch root answers, and no
/// customer's own root is among them. Before, the answer listed every
/// itemHash, and SHA-256(0x00 ‖ itemHash) or a pair's root was exactly the
/// root each customer was given.
#[test]
fn a_withheld_batch_answer_shows_nothing_that_opens_a_customers_records() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let customers = ["wb-a", "wb-b", "wb-c", "wb-d"];
    let items: Vec<Value> = (0..8)
        .map(|i| json!({"customerId": customers[i % 4], "delta": i as f64 + 1.25, "reason": "withheld"}))
        .collect();
    let batch = k.batch_anchored(&items);
    let batch_root = batch["itemsRoot"].as_str().unwrap().to_string();
    // The roots the customers were given (derive's per-delta itemsRoot).
    let mut theirs = BTreeSet::new();
    for c in customers {
        let d = k.derive(c, "");
        assert_eq!(d.status, 200, "{}", d.text);
        roots_in(&d.body["data"], &mut theirs);
    }
    theirs.remove(&batch_root);
    assert!(theirs.len() >= 4, "{theirs:?}");

    // The stranger's pages: whole, and one and three records at a time.
    let mut pages = Vec::new();
    let mut n = 0;
    for (limit, offsets) in [(1000, vec![0]), (1, (0..8).collect()), (3, vec![0, 3, 6])] {
        for offset in offsets {
            n += 1;
            let path = format!("/api/v1/verify/{batch_root}?limit={limit}&offset={offset}");
            let r = stranger_get(&api, &path, n);
            assert_eq!(r.status, 200, "{path}: {}", r.text);
            assert_eq!(
                r.body["data"]["summary"]["amountsWithheld"], true,
                "{}",
                r.text
            );
            pages.push(r);
        }
    }
    let whole = &pages[0];
    for rec in whole.body["data"]["records"].as_array().unwrap() {
        assert!(rec.get("itemHash").is_none(), "{rec}");
        assert!(rec["logLeafHash"].is_string(), "{rec}");
    }
    let report = verify_public_answer(&[whole.raw_data()], Some(&batch_root), Some(&log_key(&api)));
    assert!(report.ok, "{}", report.to_json());

    let mut shown = BTreeSet::new();
    for p in &pages {
        shown.extend(hashes_in(&p.text));
    }
    let parse = |h: &str| Hash32::parse(h).unwrap();
    let record_hashes: Vec<Hash32> = whole.body["data"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| parse(r["logLeafHash"].as_str().unwrap()))
        .collect();
    let mut candidates = BTreeSet::new();
    for h in &shown {
        let h = parse(h);
        candidates.insert(h.to_hex());
        candidates.insert(bvs_core::merkle::leaf_hash(&h).to_hex());
    }
    for mask in 1u32..(1 << record_hashes.len()) {
        let sub: Vec<Hash32> = (0..record_hashes.len())
            .filter(|i| mask >> i & 1 == 1)
            .map(|i| record_hashes[i])
            .collect();
        candidates.insert(bvs_core::merkle::root(&sub).to_hex());
        candidates.insert(bvs_core::merkle::root_of_leaf_hashes(&sub).to_hex());
    }
    candidates.remove(&batch_root);
    let opened: Vec<&String> = candidates.iter().filter(|c| theirs.contains(*c)).collect();
    assert!(
        opened.is_empty(),
        "a customer's root computed from the answer: {opened:?}"
    );
    for c in &candidates {
        n += 1;
        let r = stranger_get(&api, &format!("/api/v1/verify/{c}"), n);
        assert_eq!(r.status, 404, "{c} opened: {:.300}", r.text);
    }
    eprintln!(
        "{} candidates from {} hashes shown: all 404",
        candidates.len(),
        shown.len()
    );
}

fn ledger_id_of(k: &Keyed, customer: &str) -> String {
    let r = k.customer(customer);
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["ledgerId"].as_str().unwrap().to_string()
}

fn hex(v: &Value) -> Option<String> {
    v.as_str()
        .filter(|s| s.len() == 64 && Hash32::parse(s).is_ok())
        .map(str::to_string)
}

/// Every 64-hex string of `v` under a key whose name says it is a root
/// (`itemsRoot`, `receiptId`, `proofRoot`, `merkleRoot`,
/// `latestCheckpoint`, `latestReceiptId`, `startingCheckpoint`).
fn roots_in(v: &Value, out: &mut BTreeSet<String>) {
    const ROOT_KEYS: &[&str] = &[
        "itemsRoot",
        "receiptId",
        "proofRoot",
        "merkleRoot",
        "latestCheckpoint",
        "latestReceiptId",
        "startingCheckpoint",
    ];
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if ROOT_KEYS.contains(&k.as_str()) {
                    if let Some(h) = hex(child) {
                        out.insert(h);
                    }
                }
                roots_in(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| roots_in(i, out)),
        _ => {}
    }
}

/// Commits a checkpoint of `body` and returns its list entry.
fn committed_checkpoint(k: &Keyed, body: &Value) -> Value {
    let r = k.checkpoint(body);
    assert_eq!(r.status, 202, "{}", r.text);
    k.wait_committed(r.body["data"]["checkpointId"].as_str().unwrap())
}

// ------------------------------------------------------------------ roots

#[test]
fn a_root_given_to_one_customer_opens_no_other_customers_amounts() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let rx = Receiver::start(&[]);
    let hook = create_webhook(
        &api,
        &t.jwt,
        &rx.url("/deltas"),
        &["delta.verified"],
        "roots",
    );
    assert_eq!(hook.status, 201, "{}", hook.text);
    let (x, y) = ("cust-x", "cust-y-private");

    // The batch of the report: cust-x's 12.5 next to cust-y's −999.99,
    // then cust-x alone, twice.
    let batch = k.batch(&[
        json!({"customerId": x, "delta": 12.5, "reason": "x in a batch"}),
        json!({"customerId": y, "delta": -999.99, "reason": "y's secret"}),
        json!({"customerId": x, "delta": 1, "reason": "x again in the batch"}),
    ]);
    assert_eq!(batch.status, 202, "{}", batch.text);
    let batch_root = batch.body["data"]["itemsRoot"]
        .as_str()
        .unwrap()
        .to_string();
    // The vendor's own answer keeps the batch root: one receiptId for all.
    for r in batch.body["data"]["results"].as_array().unwrap() {
        assert_eq!(r["receiptId"], json!(batch_root), "{}", batch.text);
    }
    k.emit(&Delta::new(x, 3, "x alone"));
    let last = k.emit(&Delta::new(x, -2, "x alone again"));
    k.wait_anchored(last["anchorId"].as_str().unwrap());
    let status = k.delta_status(
        batch.body["data"]["results"][0]["anchorId"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(status.body["data"]["itemsRoot"], json!(batch_root));
    let x_ledger = ledger_id_of(&k, x);
    let y_ledger = ledger_id_of(&k, y);
    let period = committed_checkpoint(&k, &json!({"customerId": x}))["period"]
        .as_str()
        .unwrap()
        .to_string();

    // Everything cust-x can be given: its receipts (each variant), derive
    // (each page size), and the delta.verified webhooks about it.
    let mut given = BTreeSet::new();
    let mut answers = Vec::new();
    for query in [String::new(), format!("period={period}")] {
        let r = k.receipt(x, &query);
        assert_eq!(r.status, 200, "{}", r.text);
        answers.push(r.body["data"].clone());
    }
    for query in ["", "limit=1", "limit=2&offset=1"] {
        let r = k.derive(x, query);
        assert_eq!(r.status, 200, "{}", r.text);
        answers.push(r.body["data"].clone());
    }
    let events = eventually(WAIT, "five delta.verified events", || {
        let got: Vec<Value> = rx
            .received()
            .iter()
            .map(|r| r.json())
            .filter(|e| e["event"] == "delta.verified")
            .collect();
        (got.len() >= 5).then_some(got)
    });
    for e in &events {
        if e["data"]["customerId"] == x {
            answers.push(e["data"].clone());
        }
    }
    for a in &answers {
        roots_in(a, &mut given);
    }
    assert!(
        !given.contains(&batch_root),
        "cust-x was handed the batch root"
    );
    assert!(given.len() >= 3, "{given:?}");

    // No root cust-x was given opens cust-y's amounts or ledger.
    for root in &given {
        let v = public_get(&api, &format!("/api/v1/verify/{root}"));
        assert_eq!(v.status, 200, "{root}: {}", v.text);
        assert!(
            !v.text.contains("999.99"),
            "{root} shows cust-y: {}",
            v.text
        );
        assert!(!v.text.contains(&y_ledger), "{root} names cust-y's ledger");
        for r in v.body["data"]["records"].as_array().unwrap() {
            assert_eq!(r["ledgerId"], json!(x_ledger), "{root}: {}", v.text);
        }
        let report = verify_public_answer(&[v.raw_data()], Some(root), Some(&log_key(&api)));
        assert!(report.ok, "{root}: {}", report.to_json());
    }
    // Derive takes every root it hands out (a delta's, latestCheckpoint)
    // as a starting point.
    let mut handed_out = BTreeSet::new();
    for a in &answers {
        for d in a["deltas"].as_array().into_iter().flatten() {
            handed_out.extend(hex(&d["itemsRoot"]));
        }
        handed_out.extend(hex(&a["latestCheckpoint"]));
    }
    assert!(handed_out.len() >= 3, "{handed_out:?}");
    for root in &handed_out {
        let from = k.derive(x, &format!("startingCheckpoint={root}"));
        assert_eq!(from.status, 200, "{root}: {}", from.text);
    }
    // cust-x's part of the batch has a root of its own, over its two
    // deltas of the batch.
    let part = &answers[0]["deltas"][0];
    let part_root = part["itemsRoot"].as_str().unwrap();
    assert_eq!(part["receiptId"], json!(part_root));
    let v = public_get(&api, &format!("/api/v1/verify/{part_root}"));
    assert_eq!(v.body["data"]["summary"]["itemCount"], 2, "{}", v.text);
    assert_eq!(
        v.body["data"]["summary"]["netAmount"],
        json!(13.5),
        "{}",
        v.text
    );

    // The batch root (the vendor's) still verifies, without amounts,
    // ledger ids or itemHashes (issue 40: a documented change; before, its
    // records' itemHashes recomputed the root): its records' log leaves
    // are in the signed log, and the service's own check of the root is
    // stored (summary.recordsCheck).
    let v = public_get(&api, &format!("/api/v1/verify/{batch_root}"));
    assert_eq!(v.status, 200, "{}", v.text);
    assert!(!v.text.contains("999.99"), "{}", v.text);
    assert!(!v.text.contains(&y_ledger) && !v.text.contains(&x_ledger));
    assert_eq!(
        v.body["data"]["summary"]["amountsWithheld"], true,
        "{}",
        v.text
    );
    assert_eq!(v.body["data"]["records"].as_array().unwrap().len(), 3);
    let report = verify_public_answer(&[v.raw_data()], Some(&batch_root), Some(&log_key(&api)));
    assert!(report.ok, "{}", report.to_json());
    // And derive still takes it (a customer may have kept one from before).
    let from = k.derive(x, &format!("startingCheckpoint={batch_root}"));
    assert_eq!(from.status, 200, "{}", from.text);
    // latestReceiptId equals latestCheckpoint.
    let d = k.derive(x, "");
    assert_eq!(
        d.body["data"]["latestReceiptId"],
        d.body["data"]["latestCheckpoint"]
    );
}

// ------------------------------------------------------------------ `all`

#[test]
fn a_customer_named_all_is_refused_and_a_whole_tenant_checkpoint_lists_only_its_deltas() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let r = k.post_raw(
        bvs_tests::ledger::DELTA,
        Delta::new("all", 5, "collide").to_json(),
    );
    assert_eq!(r.status, 400, "{}", r.text);
    assert!(r.text.contains("customerId"), "{}", r.text);
    let r = k.batch(&[
        json!({"customerId": "fine", "delta": 1, "reason": "ok"}),
        json!({"customerId": "all", "delta": 1, "reason": "collide"}),
    ]);
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.body["data"]["totalFailed"], 1, "{}", r.text);
    assert!(
        r.body["data"]["results"][1]["error"]
            .to_string()
            .contains("deltas[1].customerId"),
        "{}",
        r.text
    );

    for (c, amount) in [("bob-secret", 40), ("carol-secret", 50)] {
        k.emit(&Delta::new(c, amount, "secret"));
    }
    let last = k.emit(&Delta::new("dave", 7, "whole tenant"));
    k.wait_anchored(last["anchorId"].as_str().unwrap());
    // `{customerId: "all"}` is the whole tenant, as the spec says.
    let whole = committed_checkpoint(&k, &json!({"customerId": "all"}));
    assert_eq!(whole["customerId"], "all");
    let n = whole["deltaCount"].as_u64().unwrap();
    let root = whole["merkleRoot"].as_str().unwrap();
    let v = public_get(&api, &format!("/api/v1/verify/{root}"));
    assert_eq!(v.status, 200, "{}", v.text);
    let d = &v.body["data"];
    assert_eq!(d["summary"]["kind"], "checkpoint", "{}", v.text);
    assert_eq!(d["records"].as_array().unwrap().len() as u64, n);
    assert_eq!(d["verified"], true, "{}", v.text);
    assert_eq!(d["summary"]["recordsCheck"], "passed", "{}", v.text);
    let report = verify_public_answer(&[v.raw_data()], Some(root), Some(&log_key(&api)));
    assert!(report.ok, "{}", report.to_json());
    let listed = k.checkpoints("customerId=all");
    assert!(listed
        .text
        .contains(whole["checkpointId"].as_str().unwrap()));
}

// ------------------------------------------------------------------ shared roots

#[test]
fn a_one_delta_checkpoint_is_reachable_by_its_root_with_its_agreement_side() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);
    let d = k.emit_anchored(&Delta::new("single-1", 9, "the only delta"));
    let cp = committed_checkpoint(&k, &json!({"customerId": "single-1"}));
    let root = cp["merkleRoot"].as_str().unwrap();
    assert_eq!(
        d["itemsRoot"],
        json!(root),
        "one item: the same RFC 9162 root"
    );
    let receipt = k.receipt("single-1", "");
    assert_eq!(receipt.body["data"]["itemsRoot"], json!(root));

    let v = public_get(&api, &format!("/api/v1/verify/{root}"));
    assert_eq!(v.status, 200, "{}", v.text);
    let data = &v.body["data"];
    assert_eq!(data["summary"]["kind"], "checkpoint", "{}", v.text);
    assert!(
        data["verification"]["checkpointLeaf"].is_object(),
        "{}",
        v.text
    );
    assert!(
        data["agreement"]["balanceStatement"].is_string(),
        "{}",
        v.text
    );
    let kinds: BTreeSet<&str> = data["summary"]["issuedAs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        BTreeSet::from(["checkpoint", "receipt", "submission"]),
        "{}",
        v.text
    );
    // Each object the root names answers on its own.
    for kind in ["submission", "receipt", "checkpoint"] {
        let v = public_get(&api, &format!("/api/v1/verify/{root}?kind={kind}"));
        assert_eq!(v.status, 200, "{kind}: {}", v.text);
        assert_eq!(v.body["data"]["summary"]["kind"], kind, "{}", v.text);
        assert_eq!(v.body["data"]["verified"], true, "{kind}: {}", v.text);
    }
    let none = public_get(
        &api,
        &format!(
            "/api/v1/verify/{}?kind=receipt",
            d["itemHash"].as_str().unwrap()
        ),
    );
    assert_eq!(none.status, 404, "{}", none.text);
    let bad = public_get(&api, &format!("/api/v1/verify/{root}?kind=ledger"));
    assert_eq!(bad.status, 400, "{}", bad.text);
    assert!(bad.text.contains("kind"), "{}", bad.text);
}

// ------------------------------------------------------------------ agreement

/// A customer with a committed checkpoint and a registered key.
struct Agreed {
    k_key: String,
    customer: String,
    origin: String,
    ledger: Hash32,
    reference: CheckpointRef,
    balance: i64,
    root: String,
    period: String,
    key: String,
    key_statement: String,
}

fn binding(origin: &str, ledger: Hash32, key: &str) -> Statement {
    Statement::Key(KeyBinding::new(Origin::parse(origin).unwrap(), ledger, key).unwrap())
}

fn invite(k: &Keyed, customer: &str) -> Reply {
    k.post(
        &format!("/api/v1/balance/customers/{customer}/invitations"),
        &json!({}),
    )
}

fn register(api: &Api, token: Option<&str>, statement: &str) -> Reply {
    let body = match token {
        Some(t) => json!({ "token": t, "statement": statement }),
        None => json!({ "statement": statement }),
    };
    public_post(api, "/api/v1/agreement/keys", &body)
}

fn submit(api: &Api, statement: &str) -> Reply {
    public_post(
        api,
        "/api/v1/agreement/statements",
        &json!({ "statement": statement }),
    )
}

/// Deltas 100, −30, 5 for `customer`, a committed checkpoint, and the
/// customer's key registered through an invitation.
fn agreed(api: &Api, t: &Tenant, customer: &str) -> Agreed {
    let k = api.keyed(&t.test_key);
    let mut last = Value::Null;
    for amount in [100, -30, 5] {
        last = k.emit(&Delta::new(customer, amount, "agreement attack"));
    }
    k.wait_anchored(last["anchorId"].as_str().unwrap());
    let cp = committed_checkpoint(&k, &json!({ "customerId": customer }));
    let inv = invite(&k, customer);
    assert_eq!(inv.status, 201, "{}", inv.text);
    let token = inv.body["data"]["token"].as_str().unwrap();
    let origin = inv.body["data"]["origin"].as_str().unwrap().to_string();
    let ledger = Hash32::parse(inv.body["data"]["ledgerId"].as_str().unwrap()).unwrap();
    let key = counterparty_key("customer", &CUSTOMER_SEED).unwrap();
    let key_statement = sign(&binding(&origin, ledger, &key), "customer", &CUSTOMER_SEED).unwrap();
    let reg = register(api, Some(token), &key_statement);
    assert_eq!(reg.status, 201, "{}", reg.text);
    let root = cp["merkleRoot"].as_str().unwrap().to_string();
    let period = cp["period"].as_str().unwrap().to_string();
    Agreed {
        k_key: t.test_key.clone(),
        customer: customer.to_string(),
        reference: CheckpointRef {
            origin: Origin::parse(&origin).unwrap(),
            ledger,
            period: Period::parse(&period).unwrap(),
            root: Hash32::parse(&root).unwrap(),
            deltas: 3,
        },
        origin,
        ledger,
        balance: 75,
        root,
        period,
        key,
        key_statement,
    }
}

fn balance_statement(a: &Agreed, units: i64) -> Statement {
    Statement::Balance(BalanceStatement {
        checkpoint: a.reference.clone(),
        balance: Amount::from_int(units).unwrap(),
    })
}

/// A junk signature line by a key nobody registered.
fn junk_line(n: u8) -> String {
    use base64::Engine as _;
    let bytes = vec![n; 68];
    format!(
        "\u{2014} w{n} {}\n",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[test]
fn a_statement_replayed_with_junk_signature_lines_is_the_same_statement() {
    let api = api();
    // A Free tenant: a replay must not spend its facts.
    let t = new_tenant(&api);
    let rx = Receiver::start(&[]);
    agreement_webhook(&api, &t.jwt, &rx.url("/agree"), "replays");
    let a = agreed(&api, &t, "cus_replay");
    let agree = sign(
        &balance_statement(&a, a.balance),
        "customer",
        &CUSTOMER_SEED,
    )
    .unwrap();
    let first = submit(&api, &agree);
    assert_eq!(first.status, 201, "{}", first.text);
    let item = first.body["data"]["itemHash"].as_str().unwrap().to_string();
    assert_eq!(
        item,
        item_hash(&agree).to_hex(),
        "canonical: text + its own line"
    );

    let k = api.keyed(&a.k_key);
    for n in 0..5u8 {
        let padded = format!("{agree}{}", junk_line(n));
        let r = submit(&api, &padded);
        assert_eq!(r.status, 200, "replay {n}: {}", r.text);
        assert_eq!(r.body["data"]["itemHash"], json!(item), "{}", r.text);
        assert_eq!(r.body["data"]["statement"], json!(agree), "{}", r.text);
        // Nothing was recorded for the padded bytes.
        let fact = k.fact(&item_hash(&padded).to_hex());
        assert_eq!(fact.status, 404, "a replay became a fact: {}", fact.text);
    }
    // A statement with its own line first and junk before it is the same too.
    let (text, sig) = agree.split_once("\n\n").unwrap();
    let shuffled = format!("{text}\n\n{}{sig}", junk_line(9));
    assert_eq!(submit(&api, &shuffled).status, 200);

    wait_event(&api, &rx, "checkpoint.cosigned");
    std::thread::sleep(Duration::from_secs(3));
    bvs_tests::cron::sweep(&api, bvs_tests::cron::now_ms());
    std::thread::sleep(Duration::from_secs(2));
    let cosigned = rx
        .received()
        .iter()
        .filter(|r| r.json()["event"] == "checkpoint.cosigned")
        .count();
    assert_eq!(cosigned, 1, "one webhook for one statement");
    let v = public_get(&api, &format!("/api/v1/verify/{}", a.root));
    let statements = &v.body["data"]["agreement"]["statements"];
    assert_eq!(statements.as_array().unwrap().len(), 1, "{}", v.text);
    assert_eq!(
        v.body["data"]["agreement"]["statementsPagination"]["total"], 1,
        "{}",
        v.text
    );
    // The Free tenant's own facts still fit (the replays spent none).
    let own = k.submit_fact(&json!({"content": "the vendor's own fact"}));
    assert_eq!(own.status, 202, "{}", own.text);
}

#[test]
fn disputes_are_checked_against_the_checkpoint_capped_and_paged() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let a = agreed(&api, &t, "cus_disputes");
    let k = api.keyed(&a.k_key);
    let hashes: Vec<Hash32> = k.derive(&a.customer, "").body["data"]["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| Hash32::parse(d["itemHash"].as_str().unwrap()).unwrap())
        .collect();
    let dispute = |after: u64, at: usize, agreed: i64| {
        sign(
            &Statement::Dispute(Dispute {
                checkpoint: a.reference.clone(),
                kind: DivergenceKind::Changed,
                after,
                delta: EntryId::ItemHash(hashes[at]),
                agreed: Amount::from_int(agreed).unwrap(),
            }),
            "customer",
            &CUSTOMER_SEED,
        )
        .unwrap()
    };
    // `agreed` must be the checkpoint's balance after `after` deltas, and
    // the delta named must be the one after them.
    let r = submit(&api, &dispute(1, 1, 99));
    assert_eq!(r.status, 422, "{}", r.text);
    assert!(r.text.contains("agreed_mismatch"), "{}", r.text);
    let r = submit(&api, &dispute(1, 2, 100));
    assert_eq!(r.status, 422, "{}", r.text);
    assert!(r.text.contains("delta_mismatch"), "{}", r.text);
    let r = submit(&api, &dispute(7, 2, 75));
    assert_eq!(r.status, 422, "{}", r.text);
    assert!(r.text.contains("after_out_of_range"), "{}", r.text);
    for (after, at, agreed) in [(0, 0, 0), (1, 1, 100), (2, 2, 70)] {
        let r = submit(&api, &dispute(after, at, agreed));
        assert_eq!(r.status, 201, "{}", r.text);
    }
    // Every distinct statement the key can sign about one checkpoint: at
    // most the cap, then 409 (an `extra` delta can be named by any id, so
    // without a cap the disputes were unlimited).
    let mut refused = None;
    for (accepted, n) in (3u64..).zip(0..40u64) {
        let after = n % 3;
        let s = sign(
            &Statement::Dispute(Dispute {
                checkpoint: a.reference.clone(),
                kind: DivergenceKind::Extra,
                after,
                delta: EntryId::ReferenceId(format!("mine-{n}")),
                agreed: Amount::from_int([0, 100, 70][after as usize]).unwrap(),
            }),
            "customer",
            &CUSTOMER_SEED,
        )
        .unwrap();
        let r = submit(&api, &s);
        if r.status == 409 {
            assert_eq!(r.body["code"], "statement_limit_reached", "{}", r.text);
            refused = Some(accepted);
            break;
        }
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let cap = refused.expect("the cap refuses at some point");
    let page = public_get(
        &api,
        &format!(
            "/api/v1/verify/{}?statementsLimit=2&statementsOffset=1",
            a.root
        ),
    );
    let agreement = &page.body["data"]["agreement"];
    assert_eq!(
        agreement["statements"].as_array().unwrap().len(),
        2,
        "{}",
        page.text
    );
    assert_eq!(
        agreement["statementsPagination"]["total"], cap,
        "{}",
        page.text
    );
    assert_eq!(agreement["statementsPagination"]["offset"], 1);
}

#[test]
fn a_key_registration_refused_by_the_plan_leaves_the_invitation_usable_and_no_key() {
    let api = api();
    let t = new_tenant(&api);
    let k = api.keyed(&t.test_key);
    let customer = "cus_refused";
    k.emit_anchored(&Delta::new(customer, 10, "one"));
    let inv = invite(&k, customer);
    assert_eq!(inv.status, 201, "{}", inv.text);
    let token = inv.body["data"]["token"].as_str().unwrap().to_string();
    let origin = inv.body["data"]["origin"].as_str().unwrap().to_string();
    let ledger = Hash32::parse(inv.body["data"]["ledgerId"].as_str().unwrap()).unwrap();
    // Fill the Free plan's storage with the vendor's own facts, smaller and
    // smaller, until fewer bytes are left than a key binding takes.
    let mut n = 0;
    for size in [60 * 1024, 8 * 1024, 1024, 160] {
        loop {
            let content = format!("{n}:{}", "f".repeat(size));
            let r = k.submit_fact(&json!({ "content": content }));
            if r.status == 402 {
                break;
            }
            assert_eq!(r.status, 202, "{}", r.text);
            n += 1;
            assert!(n < 80, "the storage ceiling never refused");
            std::thread::sleep(Duration::from_millis(120));
        }
    }
    let key = counterparty_key("customer", &CUSTOMER_SEED).unwrap();
    let statement = sign(&binding(&origin, ledger, &key), "customer", &CUSTOMER_SEED).unwrap();
    let refused = register(&api, Some(&token), &statement);
    assert_eq!(refused.status, 402, "{}", refused.text);
    // The invitation is still live and no key is registered.
    let opened = public_post(
        &api,
        "/api/v1/agreement/invitation",
        &json!({ "token": token }),
    );
    assert_eq!(opened.status, 200, "{}", opened.text);
    let cp = committed_checkpoint(&k, &json!({ "customerId": customer }));
    let v = public_get(
        &api,
        &format!("/api/v1/verify/{}", cp["merkleRoot"].as_str().unwrap()),
    );
    assert_eq!(
        v.body["data"]["agreement"]["counterpartyKey"],
        Value::Null,
        "{}",
        v.text
    );
    // Once the plan allows it, the same invitation registers the key.
    assert_eq!(set_plan(&api, &t.tenant_id, "growth").status, 200);
    let ok = register(&api, Some(&token), &statement);
    assert_eq!(ok.status, 201, "{}", ok.text);
}

#[test]
fn the_vendor_cannot_silently_replace_the_customers_key() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let a = agreed(&api, &t, "cus_swap");
    let k = api.keyed(&a.k_key);
    let first_hash = k.derive(&a.customer, "limit=1").body["data"]["deltas"][0]["itemHash"]
        .as_str()
        .unwrap()
        .to_string();
    let dispute = sign(
        &Statement::Dispute(Dispute {
            checkpoint: a.reference.clone(),
            kind: DivergenceKind::Changed,
            after: 0,
            delta: EntryId::ItemHash(Hash32::parse(&first_hash).unwrap()),
            agreed: Amount::ZERO,
        }),
        "customer",
        &CUSTOMER_SEED,
    )
    .unwrap();
    assert_eq!(submit(&api, &dispute).status, 201);

    // Re-registering the customer's own key through a new invitation is
    // not a silent success.
    let inv = invite(&k, &a.customer);
    let token = inv.body["data"]["token"].as_str().unwrap().to_string();
    let again = register(&api, Some(&token), &a.key_statement);
    assert_eq!(again.status, 200, "the current key, again: {}", again.text);

    // The vendor invites itself and registers its own key.
    let vendor_key = counterparty_key("customer", &VENDOR_SEED).unwrap();
    let vendor_binding = sign(
        &binding(&a.origin, a.ledger, &vendor_key),
        "customer",
        &VENDOR_SEED,
    )
    .unwrap();
    let swapped = register(&api, Some(&token), &vendor_binding);
    assert_eq!(swapped.status, 201, "{}", swapped.text);
    assert_eq!(
        swapped.body["data"]["signedByPrevious"], false,
        "{}",
        swapped.text
    );
    let vendor_agrees = sign(&balance_statement(&a, a.balance), "customer", &VENDOR_SEED).unwrap();
    assert_eq!(submit(&api, &vendor_agrees).status, 201);

    // An earlier key cannot be registered again.
    let inv = invite(&k, &a.customer);
    let token = inv.body["data"]["token"].as_str().unwrap().to_string();
    let back = register(&api, Some(&token), &a.key_statement);
    assert_eq!(back.status, 409, "{}", back.text);

    for s in [&a.key_statement, &vendor_binding, &dispute, &vendor_agrees] {
        k.wait_fact_verified(&item_hash(s).to_hex());
    }
    // The receipt and the public answer list both keys, flag the change,
    // and keep the customer's dispute.
    let receipt = k.receipt(&a.customer, &format!("period={}", a.period));
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    let v = public_get(&api, &format!("/api/v1/verify/{}", a.root));
    for (what, side) in [
        ("receipt", &receipt.body["data"]["agreement"]),
        ("public answer", &v.body["data"]["agreement"]),
    ] {
        let warnings = side["keyWarnings"].to_string();
        assert!(
            warnings.contains("not signed by the previous key"),
            "{what}: {side}"
        );
        let keys: Vec<&str> = side["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["counterpartyKey"].as_str().unwrap())
            .collect();
        assert_eq!(keys, [a.key.as_str(), vendor_key.as_str()], "{what}");
        let kinds: Vec<(&str, &str)> = side["statements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["kind"].as_str().unwrap(),
                    s["counterpartyKey"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("dispute", a.key.as_str()),
                ("balance", vendor_key.as_str())
            ],
            "{what}"
        );
    }
    // bvs-verify flags the change and passes the rest.
    let dir = bvs_tests::fresh_state_dir("key-swap");
    let saved = dir.join("receipt.json");
    std::fs::write(&saved, &receipt.text).unwrap();
    let out = std::process::Command::new(bvs_tests::bvs_verify_bin())
        .args(["receipt", saved.to_str().unwrap(), "--key", &log_key(&api)])
        .output()
        .expect("run bvs-verify");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("not signed by the previous key"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);

    // A key the current key signs is a rotation: no warning for it.
    let next_key = counterparty_key("customer", &NEXT_SEED).unwrap();
    let mut rotation = sign(
        &binding(&a.origin, a.ledger, &next_key),
        "customer",
        &NEXT_SEED,
    )
    .unwrap();
    let by_current = sign(
        &binding(&a.origin, a.ledger, &next_key),
        "customer",
        &VENDOR_SEED,
    )
    .unwrap();
    rotation.push_str(by_current.split_once("\n\n").unwrap().1);
    let rotated = register(&api, None, &rotation);
    assert_eq!(rotated.status, 201, "{}", rotated.text);
    assert_eq!(
        rotated.body["data"]["signedByPrevious"], true,
        "{}",
        rotated.text
    );
    // Without the current key's signature and without an invitation: no.
    let stranger = counterparty_key("customer", &[5; 32]).unwrap();
    let unsigned = sign(
        &binding(&a.origin, a.ledger, &stranger),
        "customer",
        &[5; 32],
    )
    .unwrap();
    let r = register(&api, None, &unsigned);
    assert_eq!(r.status, 422, "{}", r.text);
    assert!(r.text.contains("not_signed_by_current_key"), "{}", r.text);
    let _ = FACTS;
}

// ------------------------------------------------------------------ page headers

#[test]
fn every_page_asset_and_answer_carries_the_security_headers() {
    let api = api();
    let zeros = "0".repeat(64);
    let paths = [
        "/".to_string(),
        "/app".into(),
        "/app/keys".into(),
        "/login".into(),
        "/agree".into(),
        "/verify".into(),
        format!("/verify/{zeros}"),
        "/verify.js".into(),
        "/verify.css".into(),
        "/agree.js".into(),
        "/pkg/bvs_verifier_wasm.js".into(),
        "/pkg-liabilities/bvs_verifier_wasm.js".into(),
        "/assets/dashboard.js".into(),
        "/health".into(),
        "/openapi.json".into(),
        "/api/v1/logs".into(),
        format!("/api/v1/verify/{zeros}"),
        "/no/such/route".into(),
    ];
    for path in &paths {
        let r = public_get(&api, path);
        assert!(r.status < 500, "{path}: {}", r.status);
        let header = |name: &str| {
            r.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string()
        };
        let csp = header("content-security-policy");
        for part in [
            "default-src 'self'",
            "script-src 'self' 'wasm-unsafe-eval'",
            "style-src 'self'",
            "frame-ancestors 'none'",
            "object-src 'none'",
        ] {
            assert!(
                csp.contains(part),
                "{path} ({}): CSP {csp:?} lacks {part}",
                r.status
            );
        }
        assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
        assert_eq!(header("x-content-type-options"), "nosniff", "{path}");
        assert_eq!(header("referrer-policy"), "no-referrer", "{path}");
    }
    // The headers file is read by Workers, never served.
    let r = public_get(&api, "/_headers");
    assert!(!r.text.contains("Content-Security-Policy"), "{}", r.text);
}
