//! `verify_receipt_json` never panics on any text, and an edited genuine
//! receipt never passes unless the edit left its JSON meaning unchanged.
#![no_main]

use bvs_core::verify::verify_receipt_json;
use bvs_fuzz::{patched, public_key, receipt_json};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static FIXTURE: OnceLock<(String, String)> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let (genuine, key) = FIXTURE.get_or_init(|| (receipt_json(), public_key()));
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        let text = String::from_utf8_lossy(rest);
        let _ = verify_receipt_json(&text, Some(key));
        let _ = verify_receipt_json(&text, None);
        return;
    }
    let edited = patched(genuine, rest);
    let report = verify_receipt_json(&edited, Some(key));
    if report.ok {
        let a: serde_json::Value = serde_json::from_str(genuine).expect("fixture is JSON");
        let b: serde_json::Value =
            serde_json::from_str(&edited).expect("an accepted receipt is JSON");
        // Only edits outside what is verified may pass (message texts,
        // generatedAt, verifyUrl, whitespace-equivalent forms).
        // Numbers by value (`1e2` is `100`), hex hashes in either case
        // (`C` is `c`): the same meaning in another spelling.
        let same = |x: &serde_json::Value, y: &serde_json::Value| match (x, y) {
            (serde_json::Value::Number(p), serde_json::Value::Number(q)) => {
                p.as_f64() == q.as_f64()
            }
            (serde_json::Value::String(p), serde_json::Value::String(q)) => {
                p.eq_ignore_ascii_case(q)
            }
            _ => x == y,
        };
        assert_eq!(
            a["customerId"], b["customerId"],
            "edited customerId accepted: {edited}"
        );
        for field in [
            "deltasCount",
            "startingBalance",
            "finalBalance",
            "itemsRoot",
        ] {
            assert!(
                same(&a[field], &b[field]),
                "edited {field} accepted: {edited}"
            );
        }
        assert_eq!(
            a["proof"]["treeHead"], b["proof"]["treeHead"],
            "edited head accepted"
        );
        for (x, y) in a["deltas"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(b["deltas"].as_array().into_iter().flatten())
        {
            assert!(
                same(&x["delta"], &y["delta"]),
                "edited delta accepted: {edited}"
            );
            assert!(
                same(&x["itemHash"], &y["itemHash"]),
                "edited itemHash accepted: {edited}"
            );
        }
    }
});
