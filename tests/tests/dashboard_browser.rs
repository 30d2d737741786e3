//! The vendor dashboard in headless Chromium against a real `wrangler dev`:
//! tests/browser/dashboard.mjs (playwright-core, Debian's /usr/bin/chromium)
//! walks from sign-up to a verified receipt with the mouse alone, plus the
//! failure paths, and saves each page at desktop and phone width into
//! tests/artifacts/dashboard-*.png. The webhook it creates points at a real
//! receiver here, which must see the test event and a delta.verified event.
//! The server runs with three local witnesses (quorum 2), so the journey's
//! receipt is witnessed and the Witnesses page shows real cosignatures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Duration;

use bvs_tests::receiver::Receiver;
use bvs_tests::witness::Witnesses;
use bvs_tests::{fresh_state_dir, repo_root, Wrangler};

#[test]
fn a_vendor_goes_from_sign_up_to_a_verified_receipt_in_the_browser() {
    let root_dir = repo_root();
    assert!(
        root_dir.join("public/assets/dashboard.js").exists(),
        "public/assets is missing: run scripts/build-dashboard.sh (scripts/setup.sh does)"
    );
    // Screenshots of an earlier run must not count for this one.
    let artifacts = root_dir.join("tests/artifacts");
    if let Ok(entries) = std::fs::read_dir(&artifacts) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("dashboard-") || name.starts_with("failed-dashboard-") {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
    }
    let state = fresh_state_dir("dashboard-browser");
    let witnesses = Witnesses::start(&state, 3, 2);
    let server = Wrangler::start_with_vars(&state, &witnesses.vars());
    let base = server.base_url.clone();
    let rx = Receiver::start(&[]);

    let node = root_dir.join("node_modules/.bin/node");
    let out = Command::new(if node.exists() { node } else { "node".into() })
        .arg(root_dir.join("tests/browser/dashboard.mjs"))
        .arg(&base)
        .arg(rx.url("/dashboard-hook"))
        // The journey moves its account to Enterprise for its 250 customers.
        .env("BVS_ADMIN_TOKEN", bvs_tests::dev_var("ADMIN_TOKEN"))
        .env("BVS_WITNESSES", "3")
        .current_dir(&root_dir)
        .output()
        .expect("run node tests/browser/dashboard.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "browser test failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");

    // What the dashboard showed as delivered really arrived, signed with the
    // secret the dashboard showed once.
    let secret = stdout
        .lines()
        .find_map(|l| l.strip_prefix("webhook secret: "))
        .expect("the script prints the webhook secret")
        .trim()
        .to_string();
    // The journey rotates the secret after the test event: the legacy
    // signature switches to the new secret at once (docs/webhooks.md).
    let rotated = stdout
        .lines()
        .find_map(|l| l.strip_prefix("webhook rotated secret: "))
        .expect("the script prints the rotated webhook secret")
        .trim()
        .to_string();
    assert_ne!(rotated, secret);
    let got = rx.wait_for(2, Duration::from_secs(10));
    for (event, key) in [("test", &secret), ("delta.verified", &rotated)] {
        let req = got
            .iter()
            .find(|r| r.json()["event"] == event)
            .unwrap_or_else(|| panic!("no {event} request among {got:?}"));
        assert_eq!(req.path, "/dashboard-hook");
        assert!(req.signature_is_valid(key), "{event}: bad signature");
    }
    for name in [
        "home",
        "overview",
        "keys",
        "webhook-deliveries",
        "customer",
        "verify-page",
        // Issue 30's pages.
        "overview-charts",
        "request",
        "logs",
        "events",
        "event",
        "customer-chart",
        "search",
        "customers-search",
        // Issue 28's witness status.
        "witnesses",
    ] {
        assert!(
            artifacts.join(format!("dashboard-{name}.png")).exists(),
            "{name}"
        );
        assert!(
            artifacts
                .join(format!("dashboard-{name}-phone.png"))
                .exists(),
            "{name} (phone)"
        );
    }
}
