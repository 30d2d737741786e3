//! Issue 28 (part B1): each shard's log served as C2SP tlog-tiles under
//! its monitoring prefix `/log/<name>/` (docs/proofs-api.md "Tiles").
//!
//! A monitor written against the prefix alone (the checkpoint and the hash
//! tiles, no JSON route; the log key pinned from `/api/v1/log/:env/key`)
//! verifies the checkpoint, recomputes its root from the tiles, and proves
//! a known delta's inclusion from its log leaf hash. The same tiles are
//! checked by code the project did not write: Go's tlog algorithm as the
//! `tlog_tiles` crate (its tile-authenticating hash reader, its record
//! proofs, and the tiles it builds from the same leaf hashes) and the
//! `aics-tlog` command (PyPI, a C2SP tlog-tiles client, in
//! `.venv-witness`). Nothing past the signed size, no entry bundles, and
//! no served 32-byte chunk equals a proof root or an itemHash the test
//! was handed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use bvs_core::log::{self as core_log, HASH_SCHEME};
use bvs_core::merkle::{LeafIndex, TreeSize};
use bvs_core::note::verify_tree_head;
use bvs_core::tiles::{self, TileCoord, TILE_WIDTH};
use bvs_core::Hash32;
use bvs_tests::api;
use bvs_tests::client::Api;
use bvs_tests::ledger::Delta;
use bvs_tests::tenant::new_tenant_on_plan;
use bvs_tests::{eventually, repo_root};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(90);
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
const SHORT: &str = "public, max-age=5";

/// One GET: status, headers we check, body bytes.
struct Got {
    status: u16,
    cache: String,
    content_type: String,
    cors: String,
    nosniff: String,
    body: Vec<u8>,
}

fn get(url: &str) -> Got {
    let r = reqwest::blocking::get(url).unwrap();
    let header = |name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let (cache, content_type) = (header("cache-control"), header("content-type"));
    let (cors, nosniff) = (
        header("access-control-allow-origin"),
        header("x-content-type-options"),
    );
    let status = r.status().as_u16();
    Got {
        status,
        cache,
        content_type,
        cors,
        nosniff,
        body: r.bytes().unwrap().to_vec(),
    }
}

fn json_of(g: &Got) -> Value {
    serde_json::from_slice(&g.body).unwrap()
}

/// RFC 9162 MTH over leaf hashes, written here from the RFC (not core's).
fn mth(leaves: &[[u8; 32]]) -> [u8; 32] {
    match leaves.len() {
        0 => Sha256::digest([]).into(),
        1 => leaves[0],
        n => {
            let k = n.next_power_of_two() / 2;
            let mut h = Sha256::new();
            h.update([1u8]);
            h.update(mth(&leaves[..k]));
            h.update(mth(&leaves[k..]));
            h.finalize().into()
        }
    }
}

/// RFC 9162 audit path of leaf `m` among `leaves` (leaf side first).
fn path(m: usize, leaves: &[[u8; 32]]) -> Vec<[u8; 32]> {
    let n = leaves.len();
    if n <= 1 {
        return Vec::new();
    }
    let k = n.next_power_of_two() / 2;
    if m < k {
        let mut p = path(m, &leaves[..k]);
        p.push(mth(&leaves[k..]));
        p
    } else {
        let mut p = path(m - k, &leaves[k..]);
        p.push(mth(&leaves[..k]));
        p
    }
}

/// The log leaf hash of an itemHash: SHA-256(0x00 ‖ "bvs-log-v1" ‖ item)
/// (docs/hashes.md), written here from the doc.
fn log_leaf_hash(item: &Hash32) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(b"bvs-log-v1");
    h.update(item.0);
    h.finalize().into()
}

fn chunks(data: &[u8]) -> Vec<[u8; 32]> {
    assert_eq!(data.len() % 32, 0);
    data.chunks_exact(32)
        .map(|c| c.try_into().unwrap())
        .collect()
}

/// `tlog_tiles::TileReader` over HTTP: the tiles of one prefix.
struct HttpTiles {
    prefix: String,
}

impl tlog_tiles::TileReader for HttpTiles {
    fn height(&self) -> u8 {
        8
    }
    fn read_tiles(&self, want: &[tlog_tiles::Tile]) -> Result<Vec<Vec<u8>>, tlog_tiles::Error> {
        Ok(want
            .iter()
            .map(|t| {
                // Go writes the height in the path (`tile/8/<L>/...`);
                // tlog-tiles drops it.
                let p = t.path();
                let p = p.strip_prefix("tile/8/").unwrap();
                let g = get(&format!("{}tile/{p}", self.prefix));
                assert_eq!(g.status, 200, "tile/{p}");
                g.body
            })
            .collect())
    }
    fn save_tiles(&self, _: &[tlog_tiles::Tile], _: &[Vec<u8>]) {}
}

/// Stored hashes in memory, for `tlog_tiles`' own tile builder.
struct Stored(HashMap<u64, tlog_tiles::Hash>);

impl tlog_tiles::HashReader for Stored {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<tlog_tiles::Hash>, tlog_tiles::Error> {
        Ok(indexes.iter().map(|i| self.0[i]).collect())
    }
}

fn aics_tlog(args: &[String]) -> Value {
    let out = Command::new(repo_root().join(".venv-witness/bin/aics-tlog"))
        .args(args)
        .output()
        .expect("run aics-tlog (scripts/setup-witness.sh installs it)");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "aics-tlog {args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(text.trim()).unwrap()
}

/// What the tenant was handed: roots (proof keys) and itemHashes.
struct Handed {
    roots: BTreeSet<Hash32>,
    items: BTreeSet<Hash32>,
}

fn hash(v: &Value) -> Hash32 {
    Hash32::parse(v.as_str().unwrap()).unwrap()
}

/// Emits two deltas and three batches of 100 (past a full tile), makes a
/// checkpoint, waits until all are in the log; returns the receipt's data.
fn grow_log(api: &Api, key: &str, handed: &mut Handed) -> Value {
    let k = api.keyed(key);
    // Two known deltas, so the checkpoint's and receipt's root (over both)
    // differs from each delta's own itemsRoot.
    let mut known = Vec::new();
    for amount in [42, -2] {
        let one = k.emit(&Delta::new("cus_known", amount, "known delta"));
        handed.roots.insert(hash(&one["itemsRoot"]));
        handed.items.insert(hash(&one["itemHash"]));
        known.push(one["anchorId"].as_str().unwrap().to_string());
    }
    let mut last = String::new();
    for b in 0..3 {
        let items: Vec<Value> = (0..100)
            .map(|i| json!({"customerId": format!("cus_bulk_{b}_{}", i % 7), "delta": i + 1, "reason": "bulk"}))
            .collect();
        let r = k.batch(&items);
        assert_eq!(r.status, 202, "{}", r.text);
        let d = &r.body["data"];
        handed.roots.insert(hash(&d["itemsRoot"]));
        for h in d["itemHashes"].as_array().unwrap() {
            handed.items.insert(hash(h));
        }
        last = d["results"][99]["anchorId"].as_str().unwrap().to_string();
    }
    k.wait_anchored(&last);
    for a in &known {
        k.wait_anchored(a);
    }
    let cp = k.checkpoint(&json!({"customerId": "cus_known"}));
    assert_eq!(cp.status, 202, "{}", cp.text);
    let committed = k.wait_committed(cp.body["data"]["checkpointId"].as_str().unwrap());
    handed.roots.insert(hash(&committed["merkleRoot"]));
    let r = k.receipt("cus_known", "");
    assert_eq!(r.status, 200, "{}", r.text);
    let d = r.body["data"].clone();
    handed.roots.insert(hash(&d["itemsRoot"]));
    for x in d["deltas"].as_array().unwrap() {
        handed.roots.insert(hash(&x["itemsRoot"]));
    }
    d
}

#[test]
fn a_monitor_audits_a_log_from_its_tiles_alone_and_nothing_served_is_a_proof_root() {
    let api = api();
    let t = new_tenant_on_plan(&api, "enterprise");
    let mut handed = Handed {
        roots: BTreeSet::new(),
        items: BTreeSet::new(),
    };
    let receipt = grow_log(&api, &t.test_key, &mut handed);
    let name = receipt["log"]["name"].as_str().unwrap().to_string();
    let known = &receipt["proof"]["items"][0];
    let (known_item, known_index) = (
        hash(&known["itemHash"]),
        known["leafIndex"].as_u64().unwrap(),
    );

    // The log list names the prefix; the key is pinned from the key route.
    let list = api.log_list();
    let entry = list
        .iter()
        .find(|l| l["name"] == name.as_str())
        .unwrap()
        .clone();
    let prefix = entry["monitoringUrl"].as_str().unwrap().to_string();
    assert_eq!(prefix, url(&api, &format!("/log/{name}/")));
    for l in &list {
        assert!(l["monitoringUrl"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/log/{}/", l["name"].as_str().unwrap())));
    }
    let key_reply = api.get(&format!("/api/v1/log/{name}/key"));
    let log_key = key_reply.body["data"]["verifierKey"]
        .as_str()
        .unwrap()
        .to_string();
    let origin = key_reply.body["data"]["origin"]
        .as_str()
        .unwrap()
        .to_string();

    // From here on, only the prefix. The checkpoint covers the 302 deltas.
    let (note, head) = eventually(WAIT, "the tiles checkpoint to cover the batches", || {
        let g = get(&format!("{prefix}checkpoint"));
        assert_eq!(g.status, 200);
        let note = String::from_utf8(g.body.clone()).unwrap();
        let head = verify_tree_head(&note, &log_key).unwrap();
        (head.size.0 > 302).then_some((note, head))
    });
    let cp = get(&format!("{prefix}checkpoint"));
    assert_eq!(cp.cache, SHORT);
    assert_eq!(cp.content_type, "text/plain; charset=utf-8");
    assert_eq!(cp.cors, "*");
    let size = head.size.0;

    // Every tile of the tree, each at its width there.
    let mut served: Vec<(TileCoord, Vec<u8>)> = Vec::new();
    for level in 0..tiles::levels(size) {
        let mut index = 0;
        while let Some(coord) = tiles::tile_at(size, level, index) {
            let g = get(&format!("{prefix}{}", coord.path()));
            assert_eq!(g.status, 200, "{}", coord.path());
            assert_eq!(g.body.len(), 32 * coord.width as usize, "{}", coord.path());
            assert_eq!(g.content_type, "application/octet-stream");
            assert_eq!(g.nosniff, "nosniff");
            assert_eq!(g.cors, "*");
            let want = if coord.is_full() { IMMUTABLE } else { SHORT };
            assert_eq!(g.cache, want, "{}", coord.path());
            served.push((coord, g.body));
            index += 1;
        }
    }
    let full0 = served
        .iter()
        .filter(|(c, _)| c.level == 0 && c.is_full())
        .count();
    assert!(full0 >= 1, "a full level-0 tile is served");
    assert!(
        served.iter().any(|(c, _)| c.level == 1 && !c.is_full()),
        "a partial level-1 tile is served"
    );

    // The monitor: the leaves are level 0; the root is recomputed from them.
    let leaves: Vec<[u8; 32]> = served
        .iter()
        .filter(|(c, _)| c.level == 0)
        .flat_map(|(_, d)| chunks(d))
        .collect();
    assert_eq!(leaves.len() as u64, size);
    assert_eq!(
        mth(&leaves),
        head.root.0,
        "the tiles recompute the checkpoint's root"
    );
    let level1: Vec<[u8; 32]> = served
        .iter()
        .filter(|(c, _)| c.level == 1)
        .flat_map(|(_, d)| chunks(d))
        .collect();
    for (i, entry) in level1.iter().enumerate() {
        assert_eq!(
            *entry,
            mth(&leaves[i * 256..(i + 1) * 256]),
            "level-1 entry {i}"
        );
    }
    // A known delta's inclusion, from its log leaf hash alone.
    let leaf = log_leaf_hash(&known_item);
    assert_eq!(leaves[known_index as usize], leaf);
    let proof: Vec<Hash32> = path(known_index as usize, &leaves)
        .into_iter()
        .map(Hash32)
        .collect();
    core_log::HASH_SCHEME
        .verify_inclusion(
            &proof,
            LeafIndex(known_index),
            TreeSize(size),
            &head.root,
            &known_item,
        )
        .unwrap();
    assert_eq!(HASH_SCHEME.leaf_hash(&known_item).0, leaf);

    // Go's tlog (the tlog_tiles crate): tiles authenticated against the
    // checkpoint, a record proof from them, and the same tiles built from
    // the same leaf hashes.
    let reader = HttpTiles {
        prefix: prefix.clone(),
    };
    let th = tlog_tiles::Hash(head.root.0);
    let hr = tlog_tiles::TileHashReader::new(size, th, &reader);
    assert_eq!(tlog_tiles::tree_hash(size, &hr).unwrap(), th);
    let rp = tlog_tiles::prove_record(size, known_index, &hr).unwrap();
    tlog_tiles::check_record(&rp, size, th, known_index, tlog_tiles::Hash(leaf)).unwrap();
    let mut stored = Stored(HashMap::new());
    for (n, l) in leaves.iter().enumerate() {
        let n = n as u64;
        let new =
            tlog_tiles::stored_hashes_for_record_hash(n, tlog_tiles::Hash(*l), &stored).unwrap();
        let first = tlog_tiles::stored_hash_count(n);
        for (i, h) in new.into_iter().enumerate() {
            stored.0.insert(first + i as u64, h);
        }
    }
    for (coord, data) in &served {
        let go = tlog_tiles::Tile::new(8, coord.level, coord.index, coord.width, false);
        assert_eq!(&go.read_data(&stored).unwrap(), data, "{}", coord.path());
    }

    // aics-tlog (PyPI): the checkpoint's signature, its root from the tiles,
    // and the known leaf's inclusion, all over HTTP from the prefix.
    let base = |cmd: &str| {
        vec![
            cmd.to_string(),
            "--tiles".into(),
            prefix.clone(),
            "--origin".into(),
            origin.clone(),
            "--log-key".into(),
            log_key.clone(),
        ]
    };
    let report = aics_tlog(&base("verify-checkpoint"));
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["tiles_ok"], true, "{report}");
    let mut args = base("verify-inclusion");
    args.extend([
        "--index".into(),
        known_index.to_string(),
        "--leaf-hash".into(),
        hex::encode(leaf),
    ]);
    let report = aics_tlog(&args);
    assert_eq!(report["ok"], true, "{report}");

    // Nothing beyond the signed size; no entry bundles; bad paths named.
    let edge = tiles::tile_at(size, 0, size / 256).unwrap();
    let beyond = [
        TileCoord {
            width: edge.width + 1,
            ..edge
        },
        TileCoord {
            width: TILE_WIDTH,
            ..edge
        },
        TileCoord {
            index: edge.index + 1,
            width: 1,
            ..edge
        },
        TileCoord {
            level: 1,
            index: 0,
            width: TILE_WIDTH,
        },
        TileCoord {
            level: 2,
            index: 0,
            width: 1,
        },
        TileCoord {
            level: 9,
            index: 0,
            width: 1,
        },
    ];
    for c in beyond {
        let g = get(&format!("{prefix}{}", c.path()));
        assert_eq!(g.status, 404, "{}", c.path());
        assert_eq!(json_of(&g)["code"], "record_not_found");
    }
    let narrower = TileCoord { width: 1, ..edge };
    let g = get(&format!("{prefix}{}", narrower.path()));
    assert_eq!(g.status, 200);
    assert_eq!(
        g.body,
        served.iter().find(|(c, _)| *c == edge).unwrap().1[..32]
    );
    for p in [
        "tile/entries/000",
        "tile/entries/000.p/1",
        "tile/entries/x001/000",
    ] {
        let g = get(&format!("{prefix}{p}"));
        assert_eq!(g.status, 404, "{p}");
        assert!(json_of(&g)["message"]
            .as_str()
            .unwrap()
            .contains("not served"));
    }
    for (p, field) in [
        ("tile/01/000", "level"),
        ("tile/64/000", "level"),
        ("tile/0/0", "index"),
        ("tile/0/x000/001", "index"),
        ("tile/0/000.p/256", "width"),
        ("tile/0", "tile"),
    ] {
        let g = get(&format!("{prefix}{p}"));
        assert_eq!(g.status, 400, "{p}");
        assert_eq!(json_of(&g)["field"], field, "{p}");
    }
    let g = get(&url(&api, "/log/sandbox-99/checkpoint"));
    assert_eq!(g.status, 404);
    let g = get(&url(&api, "/log/sandbox-99/tile/0/000"));
    assert_eq!(g.status, 404);

    // No served 32-byte chunk is a proof root or an itemHash we were
    // handed (either opens GET /api/v1/verify/...); nor is the checkpoint's
    // root. The roots: each known delta's itemsRoot, the three batches',
    // and the checkpoint's merkleRoot (also the receipt's itemsRoot).
    assert!(handed.roots.len() >= 6 && handed.items.len() >= 302);
    let all: Vec<[u8; 32]> = served.iter().flat_map(|(_, d)| chunks(d)).collect();
    for c in &all {
        let c = Hash32(*c);
        assert!(
            !handed.roots.contains(&c),
            "a served tile holds the proof root {c:?}"
        );
        assert!(
            !handed.items.contains(&c),
            "a served tile holds the itemHash {c:?}"
        );
    }
    assert!(!handed.roots.contains(&head.root) && !handed.items.contains(&head.root));
    assert!(note.starts_with(&format!("{origin}\n{size}\n")));
}

fn url(api: &Api, path: &str) -> String {
    format!("{}{path}", api.base)
}
