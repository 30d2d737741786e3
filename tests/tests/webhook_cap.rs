//! Webhook delivery attempts are capped (issue 14), also when an attempt
//! ends before it is recorded: such an attempt is noted when its lease
//! expires, and once every attempt is spent the delivery ends `failed`,
//! visible in the deliveries list, and is never tried again.
//!
//! Runs its own `wrangler dev` with `WEBHOOK_LEASE_MS=1500` (a DEV_MODE
//! knob) so twelve leases expire within seconds; the webhook's url carries
//! the DEV_MODE fault `bvs-fault=unrecorded`, which ends every attempt
//! after its claim and before its record, as a dying Worker would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bvs_tests::client::Api;
use bvs_tests::cron::{now_ms, sweep};
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::{create_webhook, get_jwt, new_tenant};
use bvs_tests::{fresh_state_dir, Wrangler};
use serde_json::Value;

static SERVER: OnceLock<Wrangler> = OnceLock::new();

fn api() -> Api {
    let w = SERVER.get_or_init(|| {
        Wrangler::start_with_vars(
            &fresh_state_dir("webhook_cap"),
            &[("WEBHOOK_LEASE_MS", "1500")],
        )
    });
    Api::new(w.base_url.clone())
}

/// Attempts in all (worker/src/webhooks/delivery.rs, docs/webhooks.md).
const ATTEMPTS_MAX: usize = 12;

fn deliveries(api: &Api, jwt: &str, id: &str) -> Vec<Value> {
    let r = get_jwt(api, &format!("/dashboard/webhooks/{id}/deliveries"), jwt);
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

#[test]
fn attempts_that_end_before_their_record_are_capped_and_the_delivery_fails() {
    let api = api();
    let t = new_tenant(&api);
    let hook = create_webhook(
        &api,
        &t.jwt,
        "http://127.0.0.1:9/hook?bvs-fault=unrecorded",
        &["delta.verified"],
        "always dies",
    );
    assert_eq!(hook.status, 201, "{}", hook.text);
    let id = hook.body["data"]["id"].as_str().unwrap().to_string();
    api.keyed(&t.test_key)
        .emit(&Delta::new("cus_cap", 3, "capped"));

    // The minute sweep re-rings what is due; run it often, at the real time.
    let deadline = Instant::now() + Duration::from_secs(150);
    let failed = loop {
        assert!(
            Instant::now() < deadline,
            "the delivery never ended: {:?}",
            deliveries(&api, &t.jwt, &id)
        );
        sweep(&api, now_ms());
        std::thread::sleep(Duration::from_millis(1200));
        let ds = deliveries(&api, &t.jwt, &id);
        if ds.len() == 1 && ds[0]["status"] == "failed" {
            break ds[0].clone();
        }
    };
    let attempts = failed["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), ATTEMPTS_MAX, "{failed}");
    for (i, a) in attempts.iter().enumerate() {
        assert_eq!(a["attempt"], i + 1, "{failed}");
        assert!(a["httpStatus"].is_null(), "{failed}");
        assert!(
            a["error"]
                .as_str()
                .unwrap()
                .contains("before it was recorded"),
            "{failed}"
        );
    }
    assert_eq!(attempts[ATTEMPTS_MAX - 1]["outcome"], "failed", "{failed}");
    assert!(
        failed["lastError"]
            .as_str()
            .unwrap()
            .contains("12 attempts"),
        "{failed}"
    );
    assert!(failed["nextAttemptAt"].is_null(), "{failed}");

    // Final: later sweeps change nothing.
    for _ in 0..3 {
        sweep(&api, now_ms() + 86_400_000);
        std::thread::sleep(Duration::from_millis(800));
    }
    let after = deliveries(&api, &t.jwt, &id);
    assert_eq!(after[0]["status"], "failed");
    assert_eq!(after[0]["attempts"].as_array().unwrap().len(), ATTEMPTS_MAX);
}
