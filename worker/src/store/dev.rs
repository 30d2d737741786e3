use serde::Deserialize;
use worker::D1Database;

use super::Query;
use super::{args, first, run, Arg};
use crate::error::ApiResult;

const INSERT_PING: &str =
    "INSERT INTO dev_pings (id, note, created_at, consumed_at) VALUES (?1, ?2, ?3, NULL)";
const SELECT_PING: &str = "SELECT id, note, created_at, consumed_at FROM dev_pings WHERE id = ?1";
/// A read that touches no table: what a bare D1 call costs (crate::profile).
const SELECT_ONE: &str = "SELECT 1 AS one";
const CONSUME_PING: &str =
    "UPDATE dev_pings SET consumed_at = ?2 WHERE id = ?1 AND consumed_at IS NULL";

#[derive(Deserialize)]
pub struct PingRow {
    pub id: String,
    pub note: String,
    pub created_at: u64,
    pub consumed_at: Option<u64>,
}

pub async fn insert_ping(db: &D1Database, id: &str, note: &str, now_ms: u64) -> ApiResult<()> {
    run(
        db,
        Query::new(INSERT_PING, args![id, note, Arg::Int(now_ms as i64)]),
    )
    .await?;
    Ok(())
}

pub async fn ping(db: &D1Database, id: &str) -> ApiResult<Option<PingRow>> {
    first(db, Query::new(SELECT_PING, args![id])).await
}

pub async fn consume_ping(db: &D1Database, id: &str, now_ms: u64) -> ApiResult<u64> {
    run(
        db,
        Query::new(CONSUME_PING, args![id, Arg::Int(now_ms as i64)]),
    )
    .await
}

/// One trivial read (DEV_MODE profiling, `crate::profile`).
pub async fn one(db: &D1Database) -> ApiResult<()> {
    let _: Option<serde_json::Value> = first(db, Query::new(SELECT_ONE, [])).await?;
    Ok(())
}
