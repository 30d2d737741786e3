//! `Amount::parse` and the delta rules never panic; whatever parses prints
//! in a canonical form that parses back to the same amount.
#![no_main]

use bvs_core::amount::Amount;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(a) = Amount::parse(text) {
        let printed = a.to_string();
        let again = Amount::parse(&printed).expect("a printed amount parses");
        assert_eq!(again, a, "{text:?} -> {printed:?}");
        assert_eq!(again.to_string(), printed, "printing is canonical");
        let _ = a.checked_neg();
        let _ = a.checked_add(a);
    }
    let _ = Amount::parse_delta("delta", text);
    let _ = Amount::from_db_text(text);
});
