use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement};

use super::{args, first, run, Arg};
use crate::error::{ApiError, ApiResult};

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
    run(db, INSERT_PING, &args![id, note, Arg::Int(now_ms as i64)]).await?;
    Ok(())
}

pub async fn ping(db: &D1Database, id: &str) -> ApiResult<Option<PingRow>> {
    first(db, SELECT_PING, &args![id]).await
}

pub async fn consume_ping(db: &D1Database, id: &str, now_ms: u64) -> ApiResult<u64> {
    run(db, CONSUME_PING, &args![id, Arg::Int(now_ms as i64)]).await
}

/// One trivial read (DEV_MODE profiling, `crate::profile`): what [`first`]
/// does (prepare, bind nothing, read the first row: one D1 round trip,
/// counted), written out here so that the profiling stop, which runs
/// after the emit's key read, enters none of the store helpers that read
/// goes through (issue 26: the emit's walk enters each file once).
pub async fn one(db: &D1Database) -> ApiResult<()> {
    let _trip = crate::roundtrips::d1();
    let statement = db
        .prepare(SELECT_ONE)
        .bind(&[])
        .map_err(|e| ApiError::internal(format!("bind: {e}")))?;
    let _: Option<serde_json::Value> = D1PreparedStatement::first(&statement, None)
        .await
        .map_err(|e| ApiError::internal(format!("d1 first: {e}")))?;
    Ok(())
}
