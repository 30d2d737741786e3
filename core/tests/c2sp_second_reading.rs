//! C2SP tlog-policy and tlog-proof held to a second reading: short
//! implementations written here from the C2SP text alone (no parser of
//! either format is available offline), as docs/hashes.md is held to
//! `sha256sum`. On random policies and proofs, and on mangled ones, core
//! and the second reading accept and refuse the same texts, agree on
//! every quorum, and read each other's files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use bvs_core::cosignature::witness_vkey;
use bvs_core::hash::Hash32;
use bvs_core::merkle::LeafIndex;
use bvs_core::policy::Policy;
use bvs_core::tlog_proof::TlogProof;
use proptest::prelude::*;
use sha2::{Digest, Sha256};

// ------------------------------------------------------------ tlog-policy, from the C2SP text

/// c2sp.org/tlog-policy, read as written: a witness is cosigned or not, a
/// group is met when at least k of its members are; names are defined
/// before use, once, and listed as a group member at most once; `none` is
/// predefined; exactly one quorum line; space and tab separate items;
/// blank and `#` lines are ignored; only tab and newline may be control
/// characters. Keys: signed-note vkeys, type 0x01 for logs, 0x04 for
/// witnesses (tlog-cosignature), key id SHA-256(name || "\n" || type ||
/// key)[:4], no two entries wrapping the same key.
mod policy2 {
    use super::*;

    #[derive(Clone)]
    pub enum Node {
        Witness(usize),
        Group(usize, Vec<Node>),
    }

    pub struct Policy2 {
        pub witnesses: usize,
        pub quorum: Option<Node>,
    }

    fn vkey(text: &str, want_type: u8) -> Option<Vec<u8>> {
        let (name, rest) = text.split_once('+')?;
        let (id, b64) = rest.split_once('+')?;
        let key = STANDARD.decode(b64).ok()?;
        if name.is_empty() || id.len() != 8 || key.len() != 33 || key[0] != want_type {
            return None;
        }
        let digest = Sha256::new()
            .chain_update(name.as_bytes())
            .chain_update(b"\n")
            .chain_update(&key)
            .finalize();
        (hex::encode(&digest[..4]) == id.to_ascii_lowercase()).then(|| key[1..].to_vec())
    }

    pub fn parse(text: &str) -> Option<Policy2> {
        if text
            .bytes()
            .any(|b| b == 0x7f || (b < 0x20 && b != b'\t' && b != b'\n'))
        {
            return None;
        }
        let mut names: Vec<(String, Node, bool)> = Vec::new();
        let (mut log_keys, mut witness_keys) = (Vec::new(), Vec::new());
        let mut quorum: Option<Option<Node>> = None;
        for line in text.split('\n') {
            let items: Vec<&str> = line.split([' ', '\t']).filter(|s| !s.is_empty()).collect();
            if items.is_empty() || items[0].starts_with('#') {
                continue;
            }
            let fresh = |names: &Vec<(String, Node, bool)>, n: &str| {
                n != "none" && !names.iter().any(|(m, _, _)| m == n)
            };
            match items[0] {
                "log" if items.len() == 2 || items.len() == 3 => {
                    let k = vkey(items[1], 0x01)?;
                    if log_keys.contains(&k) {
                        return None;
                    }
                    log_keys.push(k);
                }
                "witness" if items.len() == 3 || items.len() == 4 => {
                    let k = vkey(items[2], 0x04)?;
                    if !fresh(&names, items[1]) || witness_keys.contains(&k) {
                        return None;
                    }
                    names.push((items[1].into(), Node::Witness(witness_keys.len()), false));
                    witness_keys.push(k);
                }
                "group" if items.len() >= 4 => {
                    if !fresh(&names, items[1]) {
                        return None;
                    }
                    let n = items.len() - 3;
                    let k = match items[2] {
                        "all" => n,
                        "any" => 1,
                        d if d.chars().all(|c| c.is_ascii_digit()) => d.parse().ok()?,
                        _ => return None,
                    };
                    if k < 1 || k > n {
                        return None;
                    }
                    let mut members = Vec::new();
                    for m in &items[3..] {
                        let entry = names.iter_mut().find(|(x, _, _)| x == m)?;
                        if entry.2 {
                            return None;
                        }
                        entry.2 = true;
                        members.push(entry.1.clone());
                    }
                    names.push((items[1].into(), Node::Group(k, members), false));
                }
                "quorum" if items.len() == 2 => {
                    if quorum.is_some() {
                        return None;
                    }
                    quorum = Some(if items[1] == "none" {
                        None
                    } else {
                        Some(names.iter().find(|(x, _, _)| x == items[1])?.1.clone())
                    });
                }
                _ => return None,
            }
        }
        Some(Policy2 {
            witnesses: witness_keys.len(),
            quorum: quorum?,
        })
    }

    pub fn met(node: &Node, cosigned: &[bool]) -> bool {
        match node {
            Node::Witness(w) => cosigned[*w],
            Node::Group(k, members) => members.iter().filter(|m| met(m, cosigned)).count() >= *k,
        }
    }
}

/// A random valid policy: `n` witnesses, groups over names not yet used,
/// a quorum, URLs, comments and white space as the format allows.
fn arb_policy() -> impl Strategy<Value = String> {
    (
        1usize..=6,
        proptest::collection::vec(any::<u64>(), 0..5),
        any::<u64>(),
        any::<u32>(),
    )
        .prop_map(|(n, groups, quorum_pick, style)| {
            let sep = |i: usize| {
                if (style >> (i % 32)) & 1 == 1 {
                    "\t"
                } else {
                    "  "
                }
            };
            let mut lines = vec!["# a policy".to_string()];
            let mut names: Vec<(String, bool)> = Vec::new();
            for w in 1..=n {
                let url = if w % 2 == 0 {
                    " https://w.example/x"
                } else {
                    ""
                };
                lines.push(format!(
                    "witness{}w{w} {}{url}",
                    sep(w),
                    witness_vkey(&format!("w{w}.example"), &[w as u8; 32]).unwrap()
                ));
                names.push((format!("w{w}"), false));
            }
            for (g, pick) in groups.iter().enumerate() {
                let free: Vec<usize> = (0..names.len()).filter(|i| !names[*i].1).collect();
                if free.is_empty() {
                    break;
                }
                let members: Vec<usize> = free
                    .iter()
                    .copied()
                    .filter(|i| (pick >> (i % 64)) & 1 == 1)
                    .collect();
                let members = if members.is_empty() {
                    vec![free[0]]
                } else {
                    members
                };
                let k = match pick % 3 {
                    0 => "all".to_string(),
                    1 => "any".to_string(),
                    _ => (1 + (pick / 3) as usize % members.len()).to_string(),
                };
                let listed: Vec<String> = members.iter().map(|i| names[*i].0.clone()).collect();
                for i in &members {
                    names[*i].1 = true;
                }
                lines.push(format!(
                    "group{}g{g} {k} {}",
                    sep(g + 7),
                    listed.join(sep(g + 9))
                ));
                names.push((format!("g{g}"), false));
                if g % 2 == 1 {
                    lines.push(String::new());
                }
            }
            let q = quorum_pick as usize % (names.len() + 1);
            lines.push(if q == names.len() {
                "quorum none".to_string()
            } else {
                format!("  quorum {}  ", names[q].0)
            });
            lines.join("\n") + "\n"
        })
}

/// A random change to a policy's text that may or may not keep it valid.
fn mangle(text: &str, how: u64, at: u64) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let i = at as usize % lines.len();
    let j = (at / 7) as usize % lines.len();
    match how % 8 {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(j, l);
        }
        2 => lines.swap(i, j),
        3 => {
            let token = [
                "0", "all", "any", "7", "x", "01", "-1", "none", "zz", "w1", "g0",
            ][(at % 11) as usize];
            let mut items: Vec<String> = lines[i].split(' ').map(str::to_owned).collect();
            let k = (at / 11) as usize % items.len();
            items[k] = token.to_owned();
            lines[i] = items.join(" ");
        }
        4 => lines[i].push('\r'),
        5 => lines[i] = format!("#{}", lines[i]),
        6 => lines[i].push_str(" extra"),
        _ => lines[i] = lines[i].replace("witness", "log"),
    }
    lines.join("\n")
}

fn agree(text: &str) -> Result<(), TestCaseError> {
    let ours = Policy::parse(text);
    let theirs = policy2::parse(text);
    prop_assert_eq!(
        ours.is_ok(),
        theirs.is_some(),
        "{:?}\n{:?}",
        text,
        ours.as_ref().err()
    );
    if let (Ok(p), Some(q)) = (ours, theirs) {
        prop_assert_eq!(p.witnesses().len(), q.witnesses);
        for mask in 0u32..(1 << q.witnesses) {
            let cosigned: Vec<bool> = (0..q.witnesses).map(|w| mask >> w & 1 == 1).collect();
            let theirs = q.quorum.as_ref().is_none_or(|n| policy2::met(n, &cosigned));
            prop_assert_eq!(p.quorum_met(&cosigned), theirs, "{:?} {:?}", text, cosigned);
        }
        // What core writes reads back the same in both.
        let written = p.to_text();
        prop_assert_eq!(&Policy::parse(&written).unwrap(), &p);
        prop_assert!(policy2::parse(&written).is_some());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn policies_read_alike_and_set_the_same_quorum(text in arb_policy()) {
        prop_assert!(Policy::parse(&text).is_ok(), "{}", text);
        agree(&text)?;
    }

    #[test]
    fn mangled_policies_are_refused_or_read_alike(text in arb_policy(), how: u64, at: u64) {
        agree(&mangle(&text, how, at))?;
    }
}

// ------------------------------------------------------------ tlog-proof, from the C2SP text

/// c2sp.org/tlog-proof@v1, read as written: the header line; an optional
/// `extra <base64>` line; `index <decimal, no leading zeros>`; zero or
/// more non-empty base64 SHA-256 lines; an empty line; the checkpoint,
/// verbatim, to the end.
mod proof2 {
    use super::*;

    #[derive(Debug)]
    pub struct Proof2 {
        pub extra: Option<Vec<u8>>,
        pub index: u64,
        pub hashes: Vec<[u8; 32]>,
        pub checkpoint: String,
    }

    pub fn write(p: &Proof2) -> String {
        let mut s = "c2sp.org/tlog-proof@v1\n".to_string();
        if let Some(e) = &p.extra {
            s += &format!("extra {}\n", STANDARD.encode(e));
        }
        s += &format!("index {}\n", p.index);
        for h in &p.hashes {
            s += &STANDARD.encode(h);
            s += "\n";
        }
        s + "\n" + &p.checkpoint
    }

    pub fn parse(text: &str) -> Option<Proof2> {
        let (head, checkpoint) = text.split_once("\n\n")?;
        let mut lines = head.split('\n');
        if lines.next()? != "c2sp.org/tlog-proof@v1" {
            return None;
        }
        let mut line = lines.next()?;
        let extra = match line.strip_prefix("extra ") {
            Some(b) => {
                let e = STANDARD.decode(b).ok()?;
                line = lines.next()?;
                Some(e)
            }
            None => None,
        };
        let digits = line.strip_prefix("index ")?;
        if digits.is_empty()
            || !digits.chars().all(|c| c.is_ascii_digit())
            || (digits.len() > 1 && digits.starts_with('0'))
        {
            return None;
        }
        let index = digits.parse().ok()?;
        let hashes = lines
            .map(|l| STANDARD.decode(l).ok()?.try_into().ok())
            .collect::<Option<Vec<[u8; 32]>>>()?;
        if hashes.len() > 64 || checkpoint.is_empty() {
            return None;
        }
        Some(Proof2 {
            extra,
            index,
            hashes,
            checkpoint: checkpoint.to_owned(),
        })
    }
}

fn arb_proof() -> impl Strategy<Value = proof2::Proof2> {
    (
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..60)),
        any::<u64>(),
        proptest::collection::vec(any::<[u8; 32]>(), 0..20),
        "[a-z./]{1,20}\n[0-9]{1,5}\n[A-Za-z0-9+/]{43}=\n\n\u{2014} [a-z.]{1,9} [A-Za-z0-9+/]{8}\n",
    )
        .prop_map(|(extra, index, hashes, checkpoint)| proof2::Proof2 {
            extra,
            index,
            hashes,
            checkpoint,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn proofs_are_written_and_read_alike(p in arb_proof()) {
        let theirs = proof2::write(&p);
        let ours = TlogProof {
            extra: p.extra.clone(),
            index: LeafIndex(p.index),
            proof: p.hashes.iter().map(|h| Hash32(*h)).collect(),
            checkpoint: p.checkpoint.clone(),
        };
        prop_assert_eq!(&ours.to_text(), &theirs);
        prop_assert_eq!(TlogProof::parse(&theirs).unwrap(), ours);
    }

    #[test]
    fn mangled_proofs_are_refused_or_read_alike(p in arb_proof(), at: usize, byte: u8, how: u8) {
        let text = proof2::write(&p);
        let mut bytes = text.into_bytes();
        let i = at % bytes.len();
        match how % 3 {
            0 => bytes[i] = byte,
            1 => { bytes.remove(i); }
            _ => bytes.insert(i, b"\n0 =A"[byte as usize % 5]),
        }
        let Ok(text) = String::from_utf8(bytes) else { return Ok(()) };
        let ours = TlogProof::parse(&text);
        let theirs = proof2::parse(&text);
        prop_assert_eq!(ours.is_ok(), theirs.is_some(), "{:?}: {:?}", text, ours.as_ref().err());
        if let (Ok(o), Some(t)) = (ours, theirs) {
            prop_assert_eq!(o.extra, t.extra);
            prop_assert_eq!(o.index.0, t.index);
            prop_assert_eq!(o.proof.iter().map(|h| h.0).collect::<Vec<_>>(), t.hashes);
            prop_assert_eq!(o.checkpoint, t.checkpoint);
        }
    }
}
