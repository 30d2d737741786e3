//! Invitation tokens name their shard.

use super::*;

fn two(_: Env) -> u32 {
    2
}

#[test]
fn a_token_names_its_shard_and_reads_back_to_it() {
    for log in [
        LogId::new(Env::Sandbox, 0),
        LogId::new(Env::Sandbox, 1),
        LogId::new(Env::Production, 1),
    ] {
        let token = new_token(log).unwrap();
        assert_eq!(token_log(&token, two), Some(log), "{token}");
    }
    assert!(new_token(LogId::new(Env::Sandbox, 1))
        .unwrap()
        .starts_with("inv_test_1_"));
}

#[test]
fn a_token_from_before_shards_is_shard_zeros_and_bad_ones_name_none() {
    let legacy = format!("inv_live_{}", "a".repeat(32));
    assert_eq!(
        token_log(&legacy, two),
        Some(LogId::new(Env::Production, 0))
    );
    for bad in [
        "inv_test_2_abc",  // no such shard
        "inv_test_01_abc", // not canonical
        "inv_test__abc",
        "inv_test_x1_abc",
        "inv_test_-1_abc",
        "inv_test_99999999999_abc",
        "inv_other_0_abc",
        "",
    ] {
        assert_eq!(token_log(bad, two), None, "{bad}");
    }
}
