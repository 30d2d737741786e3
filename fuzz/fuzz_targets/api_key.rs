//! `ApiKey::parse` never panics, and an accepted key prints back to the
//! exact text it came from.
#![no_main]

use bvs_core::types::ApiKey;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(key) = ApiKey::parse(text) {
        assert_eq!(key.expose(), text);
        assert!(text.starts_with("pk_test_") || text.starts_with("pk_live_"));
    }
});
