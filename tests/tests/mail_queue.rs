//! Resend-verification and request-password-reset answer the same, and do
//! the same work, whether or not the address has an account (issue 14):
//! the route records a mail request and rings the queue for every address;
//! the queue consumer looks the address up and sends. The routes' source is
//! held to one path by a unit test in worker/src/auth/mailer.rs; here the
//! answers are compared byte for byte and the mails arrive from the queue.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use bvs_tests::api;
use bvs_tests::client::{Api, Reply};
use bvs_tests::tenant::{
    latest_token, mailbox, new_tenant, next_token, register, unique_email, TEST_PASSWORD,
};
use serde_json::json;

fn ask(api: &Api, path: &str, email: &str) -> Reply {
    api.post(path, &json!({ "email": email }))
}

#[test]
fn both_mail_routes_answer_known_and_unknown_addresses_alike_and_mail_from_the_queue() {
    let api = api();
    let unverified = unique_email("unverified");
    assert_eq!(register(&api, &unverified, TEST_PASSWORD).status, 201);
    let first_verify = latest_token(&api, &unverified, "verify_email");
    let verified = new_tenant(&api).email;
    let unknown = unique_email("ghost");

    for path in [
        "/dashboard/auth/resend-verification-email",
        "/dashboard/auth/request-password-reset",
    ] {
        let replies: Vec<Reply> = [&unverified, &verified, &unknown]
            .iter()
            .map(|e| ask(&api, path, e))
            .collect();
        for r in &replies {
            assert_eq!(r.status, 200, "{path}: {}", r.text);
            assert_eq!(r.text, replies[0].text, "{path}: identical answers");
        }
    }

    // The consumer sent what there was to send ...
    let second_verify = next_token(&api, &unverified, "verify_email", &first_verify);
    assert_ne!(first_verify, second_verify);
    latest_token(&api, &unverified, "reset_password");
    latest_token(&api, &verified, "reset_password");
    // ... and nothing else: a verified account gets no verification mail
    // beyond its first, an unknown address none at all.
    std::thread::sleep(Duration::from_secs(2));
    let verify_mails = mailbox(&api, &verified)
        .iter()
        .filter(|m| m["kind"] == "verify_email")
        .count();
    assert_eq!(verify_mails, 1);
    assert!(mailbox(&api, &unknown).is_empty());
    // The new verification link works.
    let v = api.get(&format!("/dashboard/auth/verify?token={second_verify}"));
    assert_eq!(v.status, 200, "{}", v.text);
}
