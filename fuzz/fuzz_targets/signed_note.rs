//! `note::verify_tree_head` never panics on any note or key text, and never
//! accepts an edited copy of a genuine signed tree head unless the edit
//! left the signed note's meaning intact (same origin, size and root).
#![no_main]

use bvs_core::note;
use bvs_fuzz::{patched, public_key, signed_head};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static FIXTURE: OnceLock<(String, String)> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let (head, key) = FIXTURE.get_or_init(|| (signed_head(), public_key()));
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        // Arbitrary note text against the genuine key.
        0 => {
            let _ = note::verify_tree_head(&String::from_utf8_lossy(rest), key);
        }
        // Arbitrary key text against the genuine note.
        1 => {
            let _ = note::verify_tree_head(head, &String::from_utf8_lossy(rest));
        }
        // A genuine note with bytes replaced.
        _ => {
            let edited = patched(head, rest);
            let genuine = note::verify_tree_head(head, key).expect("the fixture verifies");
            if let Ok(th) = note::verify_tree_head(&edited, key) {
                assert_eq!(
                    th.origin, genuine.origin,
                    "edited note accepted: {edited:?}"
                );
                assert_eq!(th.size, genuine.size, "edited note accepted: {edited:?}");
                assert_eq!(th.root, genuine.root, "edited note accepted: {edited:?}");
            }
        }
    }
});
