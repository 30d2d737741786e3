//! Issue 28 (part B2): the service collects witness cosignatures (C2SP
//! tlog-witness) from three local witnesses (aics-witness, quorum 2) and
//! publishes each log's latest head with them.
//!
//! The log list publishes the policy; a head is witnessed (checked here with
//! core's tlog-policy check over the published checkpoint) with all three
//! witnesses up and with one stopped; with two stopped the latest head is
//! "not yet witnessed" until they return and the minute sweep resubmits;
//! the status route shows each witness's last cosigned size, status and
//! error; a DEV_MODE fork is refused (422) by every witness, by core's
//! policy check and by `bvs-verify head --policy`, and never published.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_core::cosignature::Freshness;
use bvs_core::note::verify_tree_head;
use bvs_core::policy::Policy;
use bvs_tests::client::Api;
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::{get_jwt, new_tenant_on_plan};
use bvs_tests::witness::Witnesses;
use bvs_tests::{bvs_verify_bin, eventually, fresh_state_dir, Wrangler};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

/// The log's published checkpoint (`/log/sandbox/checkpoint`): its tree
/// size and whether its cosignatures meet `policy`'s quorum.
fn published(api: &Api, key: &str, policy: &Policy) -> (u64, bool, String) {
    let r = api.get("/log/sandbox/checkpoint");
    assert_eq!(r.status, 200, "{}", r.text);
    let note = r.text.clone();
    let head = verify_tree_head(&note, key).expect("the log's signature holds");
    let report = policy
        .check(&note, Freshness::Offline)
        .expect("cosignatures verify");
    (head.size.0, report.met, report.summary())
}

fn status(api: &Api) -> Value {
    let r = api.get("/api/v1/logs/witnesses");
    assert_eq!(r.status, 200, "{}", r.text);
    let logs = r.body["data"]["logs"].as_array().unwrap();
    logs.iter()
        .find(|l| l["name"] == "sandbox")
        .cloned()
        .unwrap()
}

/// One witness's entry in a log's witness status (`status`), by name.
fn witness_named(s: &Value, name: &str) -> Value {
    s["witnesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no witness {name} in {s}"))
}

#[test]
fn heads_are_witnessed_by_a_quorum_and_forks_are_refused() {
    let dir = fresh_state_dir("witnessed");
    let mut w = Witnesses::start(&dir, 3, 2);
    let server = Wrangler::start_with_vars(&dir, &w.vars());
    let api = Api::new(server.base_url.clone());

    // The log list publishes the policy, k of n and as tlog-policy text.
    let entry = api.log_entry("sandbox");
    let key = entry["verifierKey"].as_str().unwrap().to_string();
    assert_eq!(entry["witnessPolicy"]["quorum"], 2, "{entry}");
    assert_eq!(
        entry["witnessPolicy"]["witnesses"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let policy = Policy::parse(entry["witnessPolicyText"].as_str().unwrap()).unwrap();
    assert!(policy.accepts_log(&key));
    assert_eq!(policy.witnesses().len(), 3);

    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);

    // All three up: the head with the first delta is witnessed.
    let a = k.emit_anchored(&Delta::new("cus_w", 10, "first"));
    let size_a = k.wait_anchored(a["anchorId"].as_str().unwrap())["treeSize"]
        .as_u64()
        .unwrap_or(1);
    let (size, _, words) = eventually(WAIT, "a witnessed head (3 up)", || {
        let p = published(&api, &key, &policy);
        (p.1 && p.0 >= size_a).then_some(p)
    });
    eprintln!("3 up: size {size}: {words}");
    let s = status(&api);
    assert_eq!(s["witnessedSize"], size, "{s}");
    for wi in s["witnesses"].as_array().unwrap() {
        assert_eq!(wi["status"], "cosigned", "{s}");
        assert_eq!(wi["cosignedSize"], size, "{s}");
        assert!(wi["cosignedAt"].is_string(), "{s}");
    }

    // Receipts, public answers and the delta status say witnessed, and
    // carry the cosigned head.
    let r = k.receipt("cus_w", "");
    assert_eq!(r.status, 200, "{}", r.text);
    let receipt = r.body["data"].clone();
    assert_eq!(receipt["proof"]["witnessed"], true, "{receipt}");
    let head = receipt["proof"]["treeHead"].as_str().unwrap();
    let report = policy.check(head, Freshness::Offline).unwrap();
    assert!(report.met, "{}", report.summary());
    let root = receipt["itemsRoot"].as_str().unwrap();
    let answer = api.get(&format!("/api/v1/verify/{root}"));
    assert_eq!(answer.status, 200, "{}", answer.text);
    let v = &answer.body["data"]["verification"];
    assert_eq!(v["witnessed"], true, "{v}");
    let report = policy
        .check(v["treeHead"].as_str().unwrap(), Freshness::Offline)
        .unwrap();
    assert!(report.met, "{}", report.summary());
    let st = k.delta_status(a["anchorId"].as_str().unwrap());
    assert_eq!(st.body["data"]["witnessed"], true, "{}", st.text);
    // bvs-verify --policy passes the saved receipt.
    let files = dir.join("verify");
    std::fs::create_dir_all(&files).unwrap();
    let (rfile, pfile) = (files.join("receipt.json"), files.join("policy.txt"));
    std::fs::write(&rfile, receipt.to_string()).unwrap();
    std::fs::write(&pfile, entry["witnessPolicyText"].as_str().unwrap()).unwrap();
    let out = std::process::Command::new(bvs_verify_bin())
        .args([
            "receipt",
            rfile.to_str().unwrap(),
            "--key",
            &key,
            "--policy",
        ])
        .arg(&pfile)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("PASS  witnesses"), "{text}");
    // The tenant is told (one event per newly witnessed head).
    eventually(WAIT, "a checkpoint.witnessed event", || {
        let r = get_jwt(&api, "/dashboard/events?type=checkpoint.witnessed", &t.jwt);
        assert_eq!(r.status, 200, "{}", r.text);
        let events = r.body["data"]["events"].as_array().unwrap().clone();
        (!events.is_empty()).then_some(events)
    });

    // One stopped: 2 of 3 still make the quorum.
    w.stop(1);
    k.emit_anchored(&Delta::new("cus_w", 5, "second"));
    let (size_b, _, words) = eventually(WAIT, "a witnessed head (2 up)", || {
        let p = published(&api, &key, &policy);
        (p.1 && p.0 > size).then_some(p)
    });
    eprintln!("2 up: size {size_b}: {words}");
    assert!(words.contains("not cosigned by"), "{words}");

    // Two stopped: the new head is verified but not yet witnessed.
    w.stop(2);
    let c = k.emit_anchored(&Delta::new("cus_w", 7, "third"));
    let (size_c, met, words) = eventually(WAIT, "the newest head published", || {
        let p = published(&api, &key, &policy);
        (p.0 > size_b).then_some(p)
    });
    assert!(!met, "one witness cannot make a quorum of 2: {words}");
    let s = eventually(
        WAIT,
        "the stopped witnesses recorded as unavailable",
        || {
            let s = status(&api);
            let down = s["witnesses"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|w| w["status"] == "unavailable")
                .count();
            (down == 2).then_some(s)
        },
    );
    assert!(s["witnessedSize"].as_u64().unwrap() < size_c, "{s}");
    // Answers say "not yet witnessed" for the new delta's head.
    let r = k.receipt("cus_w", "");
    assert_eq!(r.body["data"]["proof"]["witnessed"], false, "{}", r.text);
    let st = k.delta_status(c["anchorId"].as_str().unwrap());
    assert_eq!(st.body["data"]["witnessed"], false, "{}", st.text);
    // They return; the minute sweep (after the back-off) resubmits.
    w.resume(1);
    w.resume(2);
    let (_, _, words) = eventually(WAIT, "witnessed again after the witnesses return", || {
        sweep(&api, now_ms() + 60_000);
        let p = published(&api, &key, &policy);
        (p.1 && p.0 >= size_c).then_some(p)
    });
    eprintln!("back: {words}");
    let st = k.delta_status(c["anchorId"].as_str().unwrap());
    assert_eq!(st.body["data"]["witnessed"], true, "{}", st.text);
    let r = k.receipt("cus_w", "");
    assert_eq!(r.body["data"]["proof"]["witnessed"], true, "{}", r.text);

    // A forked head (DEV_MODE fault): refused by every witness, never
    // published, visible in the status.
    let before = published(&api, &key, &policy);
    let r = api.post("/dev/witness/fork", &json!({"env": "sandbox"}));
    assert_eq!(r.status, 200, "{}", r.text);
    let answers = r.body["data"]["witnesses"].as_array().unwrap();
    assert_eq!(answers.len(), 3, "{}", r.text);
    for a in answers {
        assert_eq!(a["status"], "refused", "{}", r.text);
        assert!(a["error"].as_str().unwrap().contains("422"), "{}", r.text);
    }
    let s = status(&api);
    for wi in s["witnesses"].as_array().unwrap() {
        assert_eq!(wi["status"], "refused", "{s}");
        assert!(wi["lastError"].as_str().unwrap().contains("422"), "{s}");
    }
    // The verifiers refuse the forked head too: it carries the log's own
    // signature, and only the witnesses' missing cosignatures tell it
    // apart (core's policy check, the one verifyCosignatures runs on the
    // verify page, and bvs-verify head --policy).
    let forked = r.body["data"]["forkedHead"].as_str().unwrap();
    assert!(verify_tree_head(forked, &key).is_ok(), "signed by the log");
    let report = policy.check(forked, Freshness::Offline).unwrap();
    assert!(!report.met, "{}", report.summary());
    let ffile = files.join("forked-head.txt");
    std::fs::write(&ffile, forked).unwrap();
    let out = std::process::Command::new(bvs_verify_bin())
        .args(["head", ffile.to_str().unwrap(), "--key", &key, "--policy"])
        .arg(&pfile)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(!out.status.success(), "bvs-verify passed a fork: {text}");
    assert!(text.contains("FAIL  witnesses"), "{text}");
    let after = published(&api, &key, &policy);
    assert_eq!(after.0, before.0, "the fork is never published");
    assert!(after.1, "the published head stays witnessed");

    // The log goes on: the next head is cosigned again.
    k.emit_anchored(&Delta::new("cus_w", 1, "after the fork"));
    eventually(WAIT, "witnessed after the fork", || {
        let p = published(&api, &key, &policy);
        (p.1 && p.0 > after.0).then_some(p)
    });
    drop(server);
    drop(w);
}

/// A witness that answers every request with `200` and a body that never
/// ends: 4 KiB chunks, one every 50 ms, for as long as the connection
/// stays open. Its URL.
fn endless_witness() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let mut request = [0u8; 65_536];
                let _ = conn.read(&mut request);
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n\
                            transfer-encoding: chunked\r\n\r\n";
                if conn.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let chunk = format!("1000\r\n{}\r\n", "\u{2014} ".repeat(1024));
                while conn.write_all(chunk.as_bytes()).is_ok() {
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
        }
    });
    url
}

#[test]
fn an_oversized_witness_answer_is_refused_unread() {
    // w3 of the policy answers an endless body: the service reads at most
    // ANSWER_BYTES_MAX (16 KiB) of it, refuses it (misbehaved) and
    // publishes the head with w1 and w2's quorum promptly: well within
    // the submission timeout (5 s) it would wait if it read on.
    let dir = fresh_state_dir("witnessed-oversized");
    let mut w = Witnesses::start(&dir, 3, 2);
    w.stop(3);
    let hostile = endless_witness();
    let policy_text = w.policy().replace(&w.url(3), &hostile);
    assert_ne!(policy_text, w.policy());
    let vars: Vec<(&str, &str)> = bvs_tests::witness::POLICY_VARS
        .iter()
        .map(|v| (*v, policy_text.as_str()))
        .collect();
    let server = Wrangler::start_with_vars(&dir, &vars);
    let api = Api::new(server.base_url.clone());
    let entry = api.log_entry("sandbox");
    let key = entry["verifierKey"].as_str().unwrap().to_string();
    let policy = Policy::parse(entry["witnessPolicyText"].as_str().unwrap()).unwrap();
    let t = new_tenant_on_plan(&api, "enterprise");
    let k = api.keyed(&t.test_key);

    let started = std::time::Instant::now();
    let a = k.emit_anchored(&Delta::new("cus_big", 10, "first"));
    let size_a = k.wait_anchored(a["anchorId"].as_str().unwrap())["treeSize"]
        .as_u64()
        .unwrap_or(1);
    let (size, _, words) = eventually(WAIT, "a witnessed head (w3 endless)", || {
        let p = published(&api, &key, &policy);
        (p.1 && p.0 >= size_a).then_some(p)
    });
    let took = started.elapsed();
    eprintln!("witnessed size {size} in {took:?}: {words}");
    assert!(
        took < Duration::from_secs(5),
        "the head waited {took:?} for the endless witness"
    );
    let s = status(&api);
    let w3 = witness_named(&s, "w3");
    assert_eq!(w3["status"], "misbehaved", "{s}");
    let error = w3["lastError"].as_str().unwrap();
    assert!(error.contains("more than 16384 bytes"), "{s}");
    for name in ["w1", "w2"] {
        let wi = witness_named(&s, name);
        assert_eq!(wi["status"], "cosigned", "{s}");
    }
    drop(server);
    drop(w);
}
