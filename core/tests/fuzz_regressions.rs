//! Inputs the fuzz targets (fuzz/, run with fuzz/run.sh) found interesting,
//! kept as plain tests so they hold without nightly or cargo-fuzz.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bvs_core::amount::Amount;
use bvs_core::hash::Hash32;
use bvs_core::merkle::{self, LeafIndex, TreeSize};
use bvs_core::types::ApiKey;

/// fuzz/receipt: a receipt whose itemHash was edited from `c` to `C` still
/// verified. Not a forgery: hex is case-insensitive, both spell the same 32
/// bytes, and every hash the service prints is lowercase.
#[test]
fn a_hash_in_uppercase_hex_is_the_same_hash() {
    let lower = "8eb87cf4d681611fdb31efdf272e6342b575bf201b7a29a5cb16ad14c182ba2d";
    let upper = lower.to_ascii_uppercase();
    let a = Hash32::parse(lower).unwrap();
    let b = Hash32::parse(&upper).unwrap();
    assert_eq!(a, b);
    assert_eq!(b.to_hex(), lower, "printed back in lowercase");
}

/// fuzz/amount's invariant on inputs near its edges: whatever parses
/// prints canonically and parses back to itself.
#[test]
fn amounts_near_the_edges_print_canonically_and_parse_back() {
    for text in [
        "0",
        "-0",
        "1e3",
        "1E+3",
        "2.5E-1",
        "0.000000000000000001",
        "1000000000",
        "-1000000000",
        "12.3400",
        "1e-18",
        "100e-2",
    ] {
        let a = Amount::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let printed = a.to_string();
        assert_eq!(Amount::parse(&printed).unwrap(), a, "{text} -> {printed}");
        assert!(!printed.contains(['e', 'E', '+']), "{printed}");
    }
    for text in [
        "1e-19",
        "+1",
        "01",
        ".5",
        "1.",
        "NaN",
        "--1",
        "1e99999999999",
        "",
    ] {
        assert!(Amount::parse(text).is_err(), "{text} must not parse");
    }
}

/// fuzz/api_key's invariant: an accepted key prints back to its exact text.
#[test]
fn an_accepted_api_key_prints_back_exactly() {
    let text = "pk_test_abcd1234ABCD5678.0123456789abcdefABCDEF";
    assert_eq!(ApiKey::parse(text).unwrap().expose(), text);
    for bad in [
        "pk_test_abcd1234ABCD5678.0123456789abcdefABCDEF ",
        "pk_prod_abcd1234ABCD5678.0123456789abcdefABCDEF",
        "pk_test_abcd.12",
        "pk_test_ab-d1234ABCD5678.0123456789abcdefABCDEF",
        "pk_test_\u{e9}bcd1234ABCD5678.0123456789abcdefABCDEF",
    ] {
        assert!(ApiKey::parse(bad).is_err(), "{bad:?}");
    }
}

/// fuzz/merkle_proof: sizes at the top of u64 and empty trees are refused
/// without panicking.
#[test]
fn proofs_with_extreme_sizes_are_refused_without_panicking() {
    let h = Hash32::digest(b"x");
    for (index, size) in [
        (u64::MAX, u64::MAX),
        (0, 0),
        (u64::MAX - 1, u64::MAX),
        (5, 3),
    ] {
        assert!(merkle::verify_inclusion_of_leaf_hash(
            &[h],
            LeafIndex(index),
            TreeSize(size),
            &h,
            &merkle::leaf_hash(&h)
        )
        .is_err());
    }
    assert!(merkle::verify_consistency(&[h], TreeSize(u64::MAX), &h, TreeSize(1), &h).is_err());
    assert!(merkle::verify_consistency(&[], TreeSize(3), &h, TreeSize(3), &h).is_ok());
}
