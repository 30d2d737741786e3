#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::proof::{verify_proof, verify_proof_json, Checker};
use super::statement::Placed;
use super::tree::{path_addrs, TreeBuilder};
use super::*;
use crate::types::CustomerId;
use crate::types::{Env, Period};
use proptest::prelude::*;

fn amount(s: &str) -> Amount {
    Amount::parse(s).unwrap()
}

fn salt(i: u64) -> Salt {
    Salt(Hash32::digest(&[b"salt".as_slice(), &i.to_be_bytes()].concat()).0)
}

fn ledger(i: u64) -> Hash32 {
    Hash32::digest(&[b"ledger".as_slice(), &i.to_be_bytes()].concat())
}

fn leaves(kind: TreeKind, amounts: &[Amount]) -> Vec<SumNode> {
    amounts
        .iter()
        .enumerate()
        .map(|(i, a)| leaf(kind, &salt(i as u64), &ledger(i as u64), *a).unwrap())
        .collect()
}

fn amounts(n: usize) -> Vec<Amount> {
    (0..n)
        .map(|i| Amount::from_units((i as i128 * 7_919 % 1_000) * 10_000_000_000_000_000))
        .collect()
}

/// RFC 9162 MTH with sums, written recursively from the RFC's text: the
/// reference the incremental builder is held to.
fn mth(kind: TreeKind, l: &[SumNode]) -> SumNode {
    match l.len() {
        0 => EMPTY_TOP,
        1 => l[0],
        n => {
            let k = n.next_power_of_two() / 2;
            parent(kind, &mth(kind, &l[..k]), &mth(kind, &l[k..])).unwrap()
        }
    }
}

/// RFC 9162 PATH with sums, recursively.
fn naive_path(kind: TreeKind, l: &[SumNode], m: usize) -> Vec<SumNode> {
    let n = l.len();
    if n <= 1 {
        return Vec::new();
    }
    let k = n.next_power_of_two() / 2;
    if m < k {
        let mut p = naive_path(kind, &l[..k], m);
        p.push(mth(kind, &l[k..]));
        p
    } else {
        let mut p = naive_path(kind, &l[k..], m - k);
        p.push(mth(kind, &l[..k]));
        p
    }
}

#[test]
fn the_builder_root_and_every_path_match_rfc_9162_for_every_size_up_to_70() {
    for kind in [TreeKind::Liabilities, TreeKind::Receivables] {
        for n in 1..=70usize {
            let l = leaves(kind, &amounts(n));
            let tree = SumTree::build(kind, &l).unwrap();
            let top = mth(kind, &l);
            let root = SumNode {
                hash: root_hash(kind, &top, n as u64),
                sum: top.sum,
            };
            assert_eq!(tree.root(), root, "size {n}");
            let total = Amount::checked_sum(l.iter().map(|x| x.sum)).unwrap();
            assert_eq!(root.sum, total);
            for m in 0..n {
                let path = tree.path(m as u64).unwrap();
                assert_eq!(path, naive_path(kind, &l, m), "size {n} leaf {m}");
                verify_path(kind, &l[m], m as u64, n as u64, &path, &root).unwrap();
                let addrs = path_addrs(m as u64, n as u64).unwrap();
                assert!(addrs.len() <= 2 * 7, "{} stored nodes", addrs.len());
            }
        }
    }
}

#[test]
fn an_empty_tree_has_the_tagged_empty_root_and_no_leaf() {
    let b = TreeBuilder::new(TreeKind::Receivables);
    assert_eq!(b.root().unwrap(), empty_root(TreeKind::Receivables));
    assert_ne!(
        empty_root(TreeKind::Receivables).hash,
        empty_root(TreeKind::Liabilities).hash
    );
    assert!(matches!(
        verify_path(
            TreeKind::Receivables,
            &empty_root(TreeKind::Receivables),
            0,
            0,
            &[],
            &empty_root(TreeKind::Receivables)
        ),
        Err(LiabilitiesError::IndexOutOfRange { .. })
    ));
}

#[test]
fn a_leaf_or_node_is_refused_when_negative_too_large_or_overflowing() {
    let k = TreeKind::Liabilities;
    assert!(matches!(
        leaf(k, &salt(0), &ledger(0), amount("-0.01")),
        Err(LiabilitiesError::Negative { .. })
    ));
    let max = Amount::from_units(AMOUNT_UNITS_MAX);
    leaf(k, &salt(0), &ledger(0), max).unwrap();
    let over = Amount::from_units(AMOUNT_UNITS_MAX + 1);
    assert!(matches!(
        leaf(k, &salt(0), &ledger(0), over),
        Err(LiabilitiesError::TooLarge { .. })
    ));
    let a = leaf(k, &salt(0), &ledger(0), max).unwrap();
    let b = leaf(k, &salt(1), &ledger(1), amount("1")).unwrap();
    assert!(matches!(
        parent(k, &a, &b),
        Err(LiabilitiesError::TooLarge { .. })
    ));
    // Sums that a wrapping implementation would add to a small number.
    let huge = SumNode {
        hash: a.hash,
        sum: Amount::from_units(i128::MAX),
    };
    assert!(parent(k, &huge, &huge).is_err());
}

#[test]
fn a_push_that_fails_leaves_the_builder_as_it_was() {
    let mut b = TreeBuilder::new(TreeKind::Liabilities);
    let max = Amount::from_units(AMOUNT_UNITS_MAX);
    b.push(leaf(TreeKind::Liabilities, &salt(0), &ledger(0), max).unwrap())
        .unwrap();
    let before = b.clone();
    let one = leaf(TreeKind::Liabilities, &salt(1), &ledger(1), amount("1")).unwrap();
    assert!(b.push(one).is_err());
    assert_eq!(b, before);
}

#[test]
fn push_returns_each_completed_node_once_with_its_address() {
    let l = leaves(TreeKind::Liabilities, &amounts(13));
    let mut b = TreeBuilder::new(TreeKind::Liabilities);
    let mut seen = std::collections::BTreeMap::new();
    for x in &l {
        for (a, n) in b.push(*x).unwrap() {
            assert!(seen.insert(a, n).is_none(), "{a} twice");
        }
    }
    // 13 leaves, 6 + 3 + 1 complete parents.
    assert_eq!(seen.len(), 13 + 6 + 3 + 1);
    let tree = SumTree::build(TreeKind::Liabilities, &l).unwrap();
    for (a, n) in seen {
        assert_eq!(tree.node(a), Some(n));
        let width = 1usize << a.level;
        let start = a.index as usize * width;
        assert_eq!(
            n,
            mth(TreeKind::Liabilities, &l[start..start + width]),
            "{a}"
        );
    }
}

#[test]
fn a_path_from_missing_stored_nodes_names_the_missing_one() {
    let e = tree::path(TreeKind::Liabilities, 2, 5, |_| None).unwrap_err();
    assert!(matches!(e, LiabilitiesError::MissingNode(_)), "{e}");
}

#[test]
fn amounts_are_hashed_in_their_canonical_text() {
    for units in [
        0i128,
        1,
        -1,
        10,
        1_000_000_000_000_000_000,
        -1_000_000_000_000_000_000,
        42_100_000_000_000_000_000,
        AMOUNT_UNITS_MAX,
        i128::MAX,
        i128::MIN,
    ] {
        let a = Amount::from_units(units);
        assert_eq!(
            super::AmountText::new().of(a),
            a.to_string().as_bytes(),
            "{units}"
        );
    }
}

#[test]
fn the_block_digest_is_sha_256_for_every_length() {
    let bytes: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
    for len in 0..300 {
        let (a, b) = bytes[..len].split_at(len / 3);
        assert_eq!(
            super::digest(&[a, b]),
            Hash32::digest(&bytes[..len]),
            "{len} bytes"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn any_amount_text_is_amounts_display(units in any::<i128>()) {
        let a = Amount::from_units(units);
        let mut text = super::AmountText::new();
        let want = a.to_string();
        prop_assert_eq!(text.of(a), want.as_bytes());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn resuming_a_tree_from_its_text_at_any_point_gives_the_same_root(n in 1usize..400, split in 0usize..400) {
        let l = leaves(TreeKind::Liabilities, &amounts(n));
        let split = split.min(n);
        let mut b = TreeBuilder::new(TreeKind::Liabilities);
        for x in &l[..split] {
            b.push(*x).unwrap();
        }
        let mut c = TreeBuilder::from_text(TreeKind::Liabilities, &b.to_text()).unwrap();
        prop_assert_eq!(&c, &b);
        for x in &l[split..] {
            c.push(*x).unwrap();
        }
        prop_assert_eq!(c.top().unwrap(), mth(TreeKind::Liabilities, &l));
    }

    #[test]
    fn every_path_verifies_and_any_single_change_fails(n in 1usize..120, m in 0usize..120, which in 0usize..64, byte in 0usize..32) {
        let m = m % n;
        let kind = TreeKind::Liabilities;
        let l = leaves(kind, &amounts(n));
        let tree = SumTree::build(kind, &l).unwrap();
        let root = tree.root();
        let path = tree.path(m as u64).unwrap();
        prop_assert!(verify_path(kind, &l[m], m as u64, n as u64, &path, &root).is_ok());
        if !path.is_empty() {
            let i = which % path.len();
            let mut p = path.clone();
            p[i].hash.0[byte] ^= 1;
            prop_assert!(verify_path(kind, &l[m], m as u64, n as u64, &p, &root).is_err());
            let mut p = path.clone();
            p[i].sum = p[i].sum.checked_add(Amount::from_units(1)).unwrap();
            prop_assert!(verify_path(kind, &l[m], m as u64, n as u64, &p, &root).is_err());
            let mut p = path.clone();
            p.pop();
            prop_assert!(verify_path(kind, &l[m], m as u64, n as u64, &p, &root).is_err());
        }
        let mut bad_root = root;
        bad_root.sum = bad_root.sum.checked_add(Amount::from_units(1)).unwrap();
        let total_mismatch = matches!(
            verify_path(kind, &l[m], m as u64, n as u64, &path, &bad_root),
            Err(LiabilitiesError::TotalMismatch { .. })
        );
        prop_assert!(total_mismatch);
        let mut bad_leaf = l[m];
        bad_leaf.sum = bad_leaf.sum.checked_add(Amount::from_units(1)).unwrap();
        prop_assert!(verify_path(kind, &bad_leaf, m as u64, n as u64, &path, &root).is_err());
        // Another index or leaf count: a wrong shape, or a wrong root.
        if n > 1 {
            let other = (m + 1) % n;
            prop_assert!(verify_path(kind, &l[m], other as u64, n as u64, &path, &root).is_err());
        }
        // The leaf count is sealed into the root: no other count passes,
        // even where RFC 9162's path has the same shape for both.
        for other in [n as u64 + 1, n as u64 - 1, 2 * n as u64] {
            if other > m as u64 {
                prop_assert!(verify_path(kind, &l[m], m as u64, other, &path, &root).is_err());
            }
        }
        // The other tree's tags: the same leaves do not verify there.
        prop_assert!(verify_path(TreeKind::Receivables, &l[m], m as u64, n as u64, &path, &root).is_err());
    }
}

// ------------------------------------------------------------------ statements

const SEED: [u8; 32] = [7; 32];

fn statement_over(balances: &[(u64, &str)]) -> (StatementBuilder, Vec<Placed>) {
    let seed = Seed(SEED);
    let mut ledgers: Vec<(Hash32, Amount)> = balances
        .iter()
        .map(|(i, b)| (ledger(*i), amount(b)))
        .collect();
    seed.shuffle(&mut ledgers);
    let mut b = StatementBuilder::new(seed);
    let placed = ledgers
        .iter()
        .map(|(l, a)| b.push(*l, *a).unwrap())
        .collect();
    (b, placed)
}

fn period() -> Period {
    Period::parse("2026-11").unwrap()
}

#[test]
fn positive_zero_and_negative_balances_go_where_they_belong() {
    let (b, placed) = statement_over(&[(1, "42.1"), (2, "0"), (3, "-5.5"), (4, "7"), (5, "-0.5")]);
    let s = b.finish("ten_1", Env::Sandbox, period(), None).unwrap();
    assert_eq!(s.liabilities.leaf_count, 5);
    assert_eq!(s.liabilities.total, amount("49.1"));
    assert_eq!(s.receivables.leaf_count, 2);
    assert_eq!(s.receivables.total, amount("6"));
    let negative: Vec<_> = placed
        .iter()
        .filter(|p| p.receivables_index.is_some())
        .map(|p| p.ledger)
        .collect();
    assert_eq!(negative.len(), 2);
    assert!(negative.contains(&ledger(3)) && negative.contains(&ledger(5)));
    // Liability leaf indexes are 0..5 in the shuffled order.
    let mut idx: Vec<u64> = placed.iter().map(|p| p.liabilities_index).collect();
    idx.sort_unstable();
    assert_eq!(idx, vec![0, 1, 2, 3, 4]);
}

#[test]
fn the_shuffle_depends_on_the_seed_and_ledgers_come_in_its_order_each_once() {
    let ids: Vec<Hash32> = (0..50).map(ledger).collect();
    let order = |seed: [u8; 32]| {
        let mut l: Vec<(Hash32, Amount)> = ids.iter().map(|i| (*i, Amount::ZERO)).collect();
        Seed(seed).shuffle(&mut l);
        l.into_iter().map(|(i, _)| i).collect::<Vec<_>>()
    };
    assert_ne!(order([1; 32]), order([2; 32]));
    assert_ne!(order([1; 32]), ids);
    let mut b = StatementBuilder::new(Seed([1; 32]));
    let o = order([1; 32]);
    b.push(o[1], Amount::ZERO).unwrap();
    assert!(matches!(
        b.push(o[0], Amount::ZERO),
        Err(LiabilitiesError::OutOfOrder { .. })
    ));
    assert!(matches!(
        b.push(o[1], Amount::ZERO),
        Err(LiabilitiesError::OutOfOrder { .. })
    ));
    b.push(o[2], Amount::ZERO).unwrap();
    assert_eq!(b.count(), 2);
}

#[test]
fn a_statement_builder_resumes_from_its_text() {
    let (b, _) = statement_over(&[(1, "3"), (2, "-1"), (3, "4")]);
    let text = b.to_text();
    assert!(text.starts_with("bvs-liabilities-builder-v1\nseed 0707"));
    let c = StatementBuilder::from_text(&text).unwrap();
    assert_eq!(c, b);
    assert!(
        StatementBuilder::from_text(&text.replace("liabilities 3:", "liabilities 4:")).is_err()
    );
    assert!(StatementBuilder::from_text("nonsense").is_err());
    let fresh = StatementBuilder::new(Seed(SEED));
    assert_eq!(
        StatementBuilder::from_text(&fresh.to_text()).unwrap(),
        fresh
    );
    assert!(matches!(
        fresh.finish("ten_1", Env::Sandbox, period(), None),
        Err(LiabilitiesError::NoLedgers)
    ));
}

#[test]
fn the_statement_json_is_rfc_8785_and_reads_back() {
    let (b, _) = statement_over(&[(1, "1234567.89"), (2, "-3")]);
    let s = b
        .finish(
            "ten_abc",
            Env::Production,
            period(),
            Some(Hash32::digest(b"old")),
        )
        .unwrap();
    let text = s.canonical_json();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let jcs = serde_json_canonicalizer::to_string(&v).unwrap();
    assert_eq!(text, jcs);
    let back = Statement::from_json(&crate::json::parse(&text).unwrap()).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.item_hash(), s.item_hash());
    let mut expected = vec![DOMAIN_BYTE];
    expected.extend_from_slice(b"bvs-liabilities-statement-v1");
    expected.extend_from_slice(text.as_bytes());
    assert_eq!(s.item_hash(), Hash32::digest(&expected));
    for (bad, field) in [
        (text.replace("ten_abc", "ten abc"), "statement.tenantId"),
        (
            text.replace("\"production\"", "\"prod\""),
            "statement.environment",
        ),
        (
            text.replace("bvs-liabilities-v1", "bvs-liabilities-v2"),
            "statement.scheme",
        ),
        (
            text.replace("\"total\":\"3\"", "\"total\":\"-3\""),
            "statement.receivables.total",
        ),
        (
            text.replace("\"total\":\"3\"", "\"total\":\"3.0\""),
            "statement.receivables.total",
        ),
        (
            text.replace("\"total\":\"3\"", "\"total\":3"),
            "statement.receivables.total",
        ),
        (
            text.replace(
                &s.liabilities.root.to_hex(),
                &s.liabilities.root.to_hex().to_uppercase(),
            ),
            "statement.liabilities.root",
        ),
    ] {
        let e = Statement::from_json(&crate::json::parse(&bad).unwrap()).unwrap_err();
        assert_eq!(e.field, field, "{bad}: {e}");
    }
}

#[test]
fn an_empty_receivables_tree_must_say_so() {
    let (b, _) = statement_over(&[(1, "3")]);
    let s = b.finish("ten_1", Env::Sandbox, period(), None).unwrap();
    assert_eq!(s.receivables.root, empty_root(TreeKind::Receivables).hash);
    let mut r = s.receivables;
    r.total = amount("5");
    let e = Statement::new("ten_1", Env::Sandbox, period(), s.liabilities, r, None).unwrap_err();
    assert_eq!(e.field, "receivables");
    let mut r = s.receivables;
    r.root = Hash32::digest(b"x");
    assert!(Statement::new("ten_1", Env::Sandbox, period(), s.liabilities, r, None).is_err());
}

#[test]
fn the_ledger_id_is_the_one_docs_balance_md_defines() {
    assert_eq!(
        ledger_id("tenant_1", "cust_1"),
        Hash32::digest(b"bvs-ledger-v1\ntenant_1\ncust_1")
    );
}

// ------------------------------------------------------------------ documents

fn sample() -> sample::Sample {
    let balances = [
        ("cust_a", amount("42.1")),
        ("cust_b", amount("0")),
        ("cust_c", amount("-12.25")),
        ("cust_d", amount("1000")),
        ("cust_e", amount("0.000000000000000001")),
        ("cust_f", amount("-3")),
        ("cust_g", amount("99.99")),
    ];
    sample::build(
        "bvs.example/log/sandbox",
        &[0x42; 32],
        "ten_sample",
        period(),
        &balances,
        SEED,
        3,
        5,
    )
    .unwrap()
}

#[test]
fn every_customer_of_a_sample_statement_verifies_from_its_json() {
    let s = sample();
    assert_eq!(s.statement.liabilities.leaf_count, 7);
    assert_eq!(
        s.statement.liabilities.total,
        amount("1142.090000000000000001")
    );
    assert_eq!(s.statement.receivables.total, amount("15.25"));
    for c in &s.customers {
        let text = c.document.to_json();
        let back = ProofDocument::from_json(&crate::json::parse(&text).unwrap()).unwrap();
        assert_eq!(back, c.document);
        let me = CustomerId::parse(&c.customer_id).unwrap();
        let r = verify_proof_json(
            &text,
            Checker::Customer(&me),
            Some(&s.public_key),
            Some(c.balance),
        );
        assert!(r.ok, "{}: {}", c.customer_id, r.to_json());
        let summary = r.checks.last().unwrap();
        assert_eq!(summary.name, "summary");
        if c.customer_id == "cust_a" {
            assert_eq!(
                summary.detail,
                "your balance of 42.1 is counted in a total of 1142.090000000000000001 owed to 7 \
                 customers on 2026-11-30"
            );
        }
        // Enveloped as an API answer, too.
        let enveloped = format!(r#"{{"success":true,"statusCode":200,"data":{text}}}"#);
        assert!(
            verify_proof_json(
                &enveloped,
                Checker::Customer(&me),
                Some(&s.public_key),
                None
            )
            .ok
        );
    }
}

#[test]
fn a_proof_fails_with_the_reason_for_another_balance_key_customer_or_no_log() {
    let s = sample();
    let c = s
        .customers
        .iter()
        .find(|c| c.customer_id == "cust_a")
        .unwrap();
    let first_failure = |doc: &ProofDocument, key: Option<&str>, bal: Option<Amount>| {
        // The customer whose ledger the document is for checks it.
        let owner = s
            .customers
            .iter()
            .find(|o| o.document.ledger_id == doc.ledger_id)
            .unwrap();
        let me = CustomerId::parse(&owner.customer_id).unwrap();
        let r = verify_proof(doc, Checker::Customer(&me), key, bal);
        assert!(!r.ok);
        r.first_failure().unwrap().name.clone()
    };
    assert_eq!(
        first_failure(&c.document, Some(&s.public_key), Some(amount("42.2"))),
        "balance"
    );
    let other_key = crate::note::public_key_string("bvs.example/log/sandbox", &[1; 32]).unwrap();
    assert_eq!(
        first_failure(&c.document, Some(&other_key), None),
        "log.publicKey"
    );
    let mut d = c.document.clone();
    d.customer_id = Some("cust_b".into());
    assert_eq!(
        first_failure(&d, Some(&s.public_key), None),
        "customer.ledgerId"
    );
    let mut d = c.document.clone();
    d.log = None;
    assert_eq!(first_failure(&d, Some(&s.public_key), None), "log");
    let mut d = c.document.clone();
    d.statement_hash = Hash32::digest(b"x");
    assert_eq!(
        first_failure(&d, Some(&s.public_key), None),
        "statementHash"
    );
    // A proof that claims a larger balance than its leaf holds.
    let mut d = c.document.clone();
    d.balance = amount("50");
    assert_eq!(
        first_failure(&d, Some(&s.public_key), None),
        "liabilities.amount"
    );
    // A negative customer without its receivables leaf, and a positive one with one.
    let neg = s
        .customers
        .iter()
        .find(|c| c.customer_id == "cust_c")
        .unwrap();
    let mut d = neg.document.clone();
    d.receivables = None;
    assert_eq!(first_failure(&d, Some(&s.public_key), None), "receivables");
    let mut d = c.document.clone();
    d.receivables = neg.document.receivables.clone();
    assert_eq!(first_failure(&d, Some(&s.public_key), None), "receivables");
    // Not JSON, not a proof.
    assert_eq!(
        verify_proof_json(
            "{",
            Checker::Customer(&CustomerId::parse("cust_a").unwrap()),
            None,
            None
        )
        .first_failure()
        .unwrap()
        .name,
        "parse"
    );
}

#[test]
fn a_negative_balance_is_proven_in_receivables_and_as_zero_in_liabilities() {
    let s = sample();
    let c = s
        .customers
        .iter()
        .find(|c| c.customer_id == "cust_c")
        .unwrap();
    assert_eq!(c.document.liabilities.amount, Amount::ZERO);
    assert_eq!(
        c.document.receivables.as_ref().unwrap().amount,
        amount("12.25")
    );
    let me = CustomerId::parse("cust_c").unwrap();
    let r = verify_proof(
        &c.document,
        Checker::Customer(&me),
        Some(&s.public_key),
        Some(amount("-12.25")),
    );
    assert!(r.ok, "{}", r.to_json());
    let names: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
    for n in [
        "liabilities.amount",
        "liabilities.path",
        "receivables.amount",
        "receivables.path",
    ] {
        assert!(names.contains(&n), "{names:?}");
    }
    assert!(r.checks.last().unwrap().detail.contains("-12.25"));
}

/// Issue 40: a vendor that left one customer out of the total hands it
/// another customer's proof, with no customerId or with the customer's
/// own: it fails for the customer who checks it, by its customerId or its
/// ledger id, and passes only for the customer whose ledger it is.
#[test]
fn another_customers_proof_fails_for_the_customer_checking_it() {
    let s = sample();
    let by = |id: &str| s.customers.iter().find(|c| c.customer_id == id).unwrap();
    let (a, b) = (by("cust_a"), by("cust_b"));
    let (me_a, me_b) = (
        CustomerId::parse("cust_a").unwrap(),
        CustomerId::parse("cust_b").unwrap(),
    );
    let key = Some(s.public_key.as_str());
    let failing = |r: crate::verify::VerificationReport| {
        assert!(!r.ok);
        r.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    };
    let mut unnamed = a.document.clone();
    unnamed.customer_id = None;
    assert!(verify_proof(&unnamed, Checker::Customer(&me_a), key, None).ok);
    assert_eq!(
        failing(verify_proof(&unnamed, Checker::Customer(&me_b), key, None)),
        ["customer.ledgerId"]
    );
    let mut renamed = a.document.clone();
    renamed.customer_id = Some("cust_b".into());
    assert_eq!(
        failing(verify_proof(&renamed, Checker::Customer(&me_b), key, None)),
        ["customer.ledgerId"]
    );
    assert_eq!(
        failing(verify_proof(
            &a.document,
            Checker::Customer(&me_b),
            key,
            None
        )),
        ["customer.ledgerId"]
    );
    let ledger_b = b.document.ledger_id;
    assert_eq!(
        failing(verify_proof(
            &unnamed,
            Checker::Ledger(&ledger_b),
            key,
            None
        )),
        ["customer.ledgerId"]
    );
    assert!(verify_proof(&unnamed, Checker::Ledger(&a.document.ledger_id), key, None).ok);
}

#[test]
fn a_proof_without_a_pinned_key_says_so_and_still_checks_everything() {
    let s = sample();
    let c = &s.customers[0];
    let me = CustomerId::parse(&c.customer_id).unwrap();
    let r = verify_proof(&c.document, Checker::Customer(&me), None, None);
    assert!(r.ok);
    let key = r.checks.iter().find(|c| c.name == "log.publicKey").unwrap();
    assert!(key.detail.starts_with("not pinned"));
}

#[test]
fn a_ledger_that_would_take_a_total_past_the_bound_changes_neither_tree() {
    let seed = Seed(SEED);
    let mut ids: Vec<(Hash32, Amount)> = (0..3).map(|i| (ledger(i), Amount::ZERO)).collect();
    seed.shuffle(&mut ids);
    let mut b = StatementBuilder::new(seed);
    let max = Amount::from_units(AMOUNT_UNITS_MAX);
    b.push(ids[0].0, max).unwrap();
    let before = b.clone();
    assert!(matches!(
        b.push(ids[1].0, amount("0.000000000000000001")),
        Err(LiabilitiesError::TooLarge { .. })
    ));
    assert_eq!(b, before);
    // A negative balance adds 0 to the liabilities: it still fits.
    let placed = b.push(ids[1].0, amount("-1")).unwrap();
    assert_eq!(placed.receivables_index, Some(0));
    let s = b.finish("ten_1", Env::Sandbox, period(), None).unwrap();
    assert_eq!(s.liabilities.total, max);
    assert_eq!(s.receivables.total, amount("1"));
}

/// Public verify's answer for a statement (part B, docs/liabilities.md §9)
/// as the worker writes it: the statement first, then its hash and log.
fn statement_answer(s: &sample::Sample, hash: &str) -> String {
    let log = s.customers[0].document.log.clone().unwrap();
    let proof: Vec<String> = log
        .inclusion_proof
        .iter()
        .map(|h| format!("\"{}\"", h.to_hex()))
        .collect();
    format!(
        "{{\"success\":true,\"statusCode\":200,\"data\":{{\"statement\":{},\"kind\":\"liabilities\",\
         \"statementHash\":\"{hash}\",\"log\":{{\"hashScheme\":{},\"leafIndex\":{},\
         \"inclusionProof\":[{}],\"treeHead\":{},\"publicKey\":{}}}}}}}",
        s.statement.canonical_json(),
        crate::json::quoted(&log.hash_scheme),
        log.leaf_index,
        proof.join(","),
        crate::json::quoted(&log.tree_head),
        crate::json::quoted(&log.public_key),
    )
}

#[test]
fn a_statement_answer_verifies_and_a_wrong_hash_or_key_fails() {
    let s = sample();
    let hash = s.statement.item_hash().to_hex();
    let text = statement_answer(&s, &hash);
    assert!(proof::is_statement_answer(&text));
    let report = proof::verify_statement_answer_json(&text, Some(&s.public_key));
    assert!(report.ok, "{report:?}");
    assert!(report.checks.iter().any(|c| c.name == "summary"));
    let wrong = statement_answer(&s, &"0".repeat(64));
    assert!(!proof::verify_statement_answer_json(&wrong, Some(&s.public_key)).ok);
    let other_key = "other+00000000+AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    assert!(!proof::verify_statement_answer_json(&text, Some(other_key)).ok);
    // A customer's proof document is not a statement answer.
    assert!(!proof::is_statement_answer(
        &s.customers[0].document.to_json()
    ));
}

#[test]
fn a_statement_of_a_named_asset_commits_to_it_and_reads_back() {
    let (b, _) = statement_over(&[(1, "42.1"), (2, "-5.5")]);
    let plain = b.finish("ten_1", Env::Sandbox, period(), None).unwrap();
    let usd = plain
        .clone()
        .of_asset(crate::types::Asset::parse("asset", "USD/2").unwrap());
    // The default asset adds no member: a statement from before assets
    // keeps its hash.
    assert!(!plain.canonical_json().contains("asset"));
    assert!(usd
        .canonical_json()
        .starts_with(r#"{"asset":"USD/2","environment":"#));
    assert_ne!(plain.item_hash(), usd.item_hash());
    let read = Statement::from_json(&crate::json::parse(&usd.canonical_json()).unwrap()).unwrap();
    assert_eq!(read, usd);
    assert_eq!(read.item_hash(), usd.item_hash());
}
