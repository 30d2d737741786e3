//! The log itself: one signed, append-only Merkle log per shard (`shard`),
//! its key, its tiles, the proof-root index (`roots`), the doorbell that
//! rings its sequencer (`doorbell::ring`) and the one way it grows
//! (`append_and_sign`). The features over it (emit, the sequencer, proofs,
//! witnesses, liabilities, agreement, ...) are rooms of their own.

pub mod backfill;
pub mod doorbell;
pub mod heads;
pub mod roots;
pub mod shard;
pub mod tiles;

use bvs_core::hash::Hash32;
use bvs_core::log::{self, StoredHashes};
use bvs_core::merkle::TreeSize;
use bvs_core::note;
use bvs_core::types::Env;
use worker::D1Database;

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::ids::TenantId;
use crate::store;

pub use shard::LogId;
pub use store::ItemStatus;
pub use tiles::{consistency_proof, inclusion_proofs};

/// The ledger database of a shard: the one place a binding is picked. A
/// `pk_test_` key's request only ever gets its tenant's `LEDGER_SANDBOX_<n>`,
/// a `pk_live_` key's only its `LEDGER_PRODUCTION_<n>`.
pub fn db(app: &App, log: LogId) -> ApiResult<D1Database> {
    let binding = log.binding();
    app.env
        .d1(&binding)
        .map_err(|e| ApiError::internal(format!("ledger shard {binding} is not bound: {e}")))
}

/// The log's identity: its origin line and signing key.
pub struct LogKey {
    pub origin: String,
    seed: [u8; 32],
}

impl LogKey {
    /// The key of `log`: one signing seed per environment, and the
    /// shard's own origin (so each shard's verifier key names its log).
    pub fn load(app: &App, log: LogId) -> ApiResult<LogKey> {
        let (origin_var, seed_secret) = match log.env {
            Env::Sandbox => ("LOG_ORIGIN_SANDBOX", "LOG_SEED_SANDBOX"),
            Env::Production => ("LOG_ORIGIN_PRODUCTION", "LOG_SEED_PRODUCTION"),
        };
        let origin = log.origin(
            &app.var(origin_var)
                .ok_or_else(|| ApiError::internal(format!("{origin_var} is not configured")))?,
        );
        let seed_hex = app.secret(seed_secret)?;
        let bytes = hex::decode(seed_hex.trim())
            .map_err(|_| ApiError::internal(format!("{seed_secret} is not hex")))?;
        let seed: [u8; 32] = bytes
            .try_into()
            .map_err(|_| ApiError::internal(format!("{seed_secret} is not 32 bytes")))?;
        Ok(LogKey { origin, seed })
    }

    pub fn sign(&self, size: u64, root: &Hash32) -> ApiResult<String> {
        note::sign_tree_head(&self.origin, TreeSize(size), root, &self.seed)
            .map_err(|e| ApiError::internal(format!("sign tree head: {e}")))
    }

    /// A 32-byte key for another purpose, derived from the environment's
    /// seed under `label` (HMAC-SHA256): the webhook signing key
    /// (`webhooks::signing::WebhookKey`) signs nothing a log key signs.
    ///
    /// # Errors
    /// Internal error if the HMAC cannot be keyed (never for a byte key).
    pub fn derive(&self, label: &[u8]) -> ApiResult<[u8; 32]> {
        crate::secret::hmac_sha256(&self.seed, &[label])
    }

    /// The signed-note verifier key: `<origin>+<key id>+<base64 key>`.
    pub fn verifier_key(&self) -> ApiResult<String> {
        note::public_key_string(&self.origin, &self.seed)
            .map_err(|e| ApiError::internal(format!("public key: {e}")))
    }
}

/// Makes sure the shard's log exists: an empty tree with a first signed
/// tree head. Idempotent.
pub async fn ensure_log(app: &App, log: LogId) -> ApiResult<()> {
    head_or_init(app, log).await.map(|_| ())
}

/// The latest signed tree head, creating the log's first one if needed.
pub async fn head_or_init(app: &App, log: LogId) -> ApiResult<store::log::HeadRow> {
    let db = db(app, log)?;
    match store::log::latest_head(&db).await? {
        Some(head) => Ok(head),
        None => {
            let key = LogKey::load(app, log)?;
            init_head(&db, &key, app.now_ms).await
        }
    }
}

/// Opens the log in `db` (the shard's database) for its writer, the
/// sequencer: the log's key, loaded once per run, with the log created if
/// it is new (as `head_or_init`).
pub async fn open_log(app: &App, log: LogId, db: &D1Database) -> ApiResult<LogKey> {
    let key = LogKey::load(app, log)?;
    if store::log::latest_head(db).await?.is_none() {
        init_head(db, &key, app.now_ms).await?;
    }
    Ok(key)
}

/// Stores the log's first signed tree head (the empty tree) and returns
/// the latest head.
async fn init_head(db: &D1Database, key: &LogKey, now_ms: u64) -> ApiResult<store::log::HeadRow> {
    let root =
        bvs_core::log::tree_root(TreeSize(0), &StoredHashes::new()).map_err(ApiError::internal)?;
    let note_text = key.sign(0, &root)?;
    let note_hash = note::tree_head_hash(&note_text);
    store::log::insert_first_head(db, &root, &note_text, &note_hash, now_ms).await?;
    store::log::latest_head(db)
        .await?
        .ok_or_else(|| ApiError::internal("the first tree head was not stored"))
}

/// What one append writes: the grown tiles (`store::log::insert_tiles`,
/// whose statements borrow their bytes), then `rest` (a pre-tiles log's
/// stored hashes, the leaves and the size the tiles cover), in that order,
/// and the new signed head, which the caller inserts last.
pub struct Appended {
    pub tiles: Vec<(bvs_core::tiles::TileCoord, Vec<u8>)>,
    pub rest: Vec<store::Query<'static>>,
    pub head: store::log::HeadRow,
}

/// Appends `leaves` (numbered from `old_size`) to the log of size
/// `old_size` whose tiles `tiles::tiles_for_append` are in `tiles`:
/// computes the new root and tiles (`tiles::grow`) and signs the new tree
/// head. Writes nothing: the caller puts the statements, its own, and the
/// head into one batch. The sequencer and the benchmark fixture both write
/// the log through here.
///
/// # Errors
/// A tile that is missing, or the signing key.
pub fn append_and_sign(
    key: &LogKey,
    old_size: u64,
    leaves: &[store::log::NewLeaf],
    tiles: &bvs_core::tiles::Tiles,
    now_ms: u64,
) -> ApiResult<Appended> {
    let new_size = old_size + leaves.len() as u64;
    let items: Vec<Hash32> = leaves.iter().map(|l| l.item_hash).collect();
    let growth = tiles::grow(old_size, &items, tiles)?;
    let note_text = key.sign(new_size, &growth.root)?;
    let mut rest = store::log::insert_leaf_set(leaves, now_ms)?;
    rest.push(store::log::set_tiles_size(new_size)?);
    let head = store::log::HeadRow {
        tree_size: new_size,
        root: growth.root,
        note_hash: note::tree_head_hash(&note_text),
        note: note_text,
        created_at: now_ms,
    };
    Ok(Appended {
        tiles: growth.tiles,
        rest,
        head,
    })
}

/// Benchmark fixture (DEV_MODE only, see routes::dev): appends `count`
/// synthetic leaves through the same append, signing and storage code as
/// the sequencer, so proof latency can be measured on a large log. With
/// `legacy`, writes them as a log was kept before tiles (stored hashes,
/// `log_hashes`; the tiles do not grow), as a Worker from before tiles
/// would: the fixture of the migration's test.
pub async fn grow_synthetic(
    app: &App,
    at: LogId,
    count: u64,
    seed: &str,
    legacy: bool,
) -> ApiResult<u64> {
    let db = db(app, at)?;
    let key = LogKey::load(app, at)?;
    let mut done = 0;
    while done < count {
        let n = (count - done).min(log::APPEND_LEAVES_MAX);
        let old = head_or_init(app, at).await?.tree_size;
        let leaves: Vec<store::log::NewLeaf> = (old..old + n)
            .map(|i| store::log::NewLeaf {
                leaf_index: i,
                item_hash: Hash32::digest(format!("{seed}:{i}").as_bytes()),
                kind: store::log::LeafKind::Fact,
                ref_id: format!("bench:{seed}"),
                tenant_id: TenantId::from_text("bench"),
            })
            .collect();
        let appended = if legacy {
            append_legacy(&db, &key, old, &leaves, app.now_ms).await?
        } else {
            let coords = tiles::tiles_for_append(old, n)?;
            let have = store::log::tiles_with(&db, &coords, Vec::new()).await?;
            append_and_sign(&key, old, &leaves, &have, app.now_ms)?
        };
        let mut statements = store::log::insert_tiles(&appended.tiles)?;
        statements.extend(appended.rest);
        statements.push(store::log::insert_head(&appended.head)?);
        store::batch(&db, statements).await?;
        done += n;
    }
    Ok(done)
}

/// An append as a log was kept before tiles: stored hashes (DEV_MODE
/// fixture, `grow_synthetic`).
async fn append_legacy(
    db: &D1Database,
    key: &LogKey,
    old_size: u64,
    leaves: &[store::log::NewLeaf],
    now_ms: u64,
) -> ApiResult<Appended> {
    let count = leaves.len() as u64;
    let new_size = old_size + count;
    let need = tiles::indexes_for_append(old_size, count)?;
    let mut hashes = tiles::read_hashes(db, &need, Vec::new()).await?;
    let items: Vec<Hash32> = leaves.iter().map(|l| l.item_hash).collect();
    let written = log::append(TreeSize(old_size), &items, &hashes).map_err(ApiError::internal)?;
    for (i, h) in &written {
        hashes.insert(*i, *h);
    }
    let root = log::tree_root(TreeSize(new_size), &hashes).map_err(ApiError::internal)?;
    let note_text = key.sign(new_size, &root)?;
    let mut rest = store::log::insert_stored_hashes(&written)?;
    rest.extend(store::log::insert_leaf_set(leaves, now_ms)?);
    let head = store::log::HeadRow {
        tree_size: new_size,
        root,
        note_hash: note::tree_head_hash(&note_text),
        note: note_text,
        created_at: now_ms,
    };
    Ok(Appended {
        tiles: Vec::new(),
        rest,
        head,
    })
}
