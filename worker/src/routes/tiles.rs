//! Each shard's log served as C2SP tlog-tiles (<https://c2sp.org/tlog-tiles>)
//! under its monitoring prefix `/log/<name>/` (issue 28, docs/proofs-api.md
//! "Tiles"): the checkpoint and the hash tiles. Entry bundles
//! (`tile/entries/...`) are deliberately not served: an entry would carry
//! an itemHash, which hands out access (docs/hashes.md).

use bvs_core::tiles::{TileCoord, TILE_WIDTH};
use worker::{Headers, Response};

use crate::app::App;
use crate::error::{ApiError, ApiResult};
use crate::http::PathParam;
use crate::ledger::{self, LogId};
use crate::witness;

/// A full tile never changes: cached for a year (C2SP tlog-tiles).
pub const FULL_TILE_CACHE: &str = "public, max-age=31536000, immutable";
/// The checkpoint and partial tiles: short-lived (a newer head follows
/// within seconds while the log grows; a partial tile is replaced by a
/// wider one).
pub const SHORT_CACHE: &str = "public, max-age=5";
/// The highest tile level a tlog-tiles path may name.
pub const TILE_LEVEL_MAX: u8 = 63;

/// `GET /log/:name/checkpoint`: the log's latest signed tree head, the
/// C2SP checkpoint every tile served under the prefix belongs to.
pub async fn checkpoint(app: &App, name: &str) -> ApiResult<Response> {
    let log = LogId::from_path(app, name)?;
    // With the witnesses' cosignature lines collected for it (issue 28).
    let (head, _) = witness::latest_published(app, log).await?;
    let headers = Headers::new();
    headers.set("content-type", "text/plain; charset=utf-8")?;
    headers.set("cache-control", SHORT_CACHE)?;
    Ok(Response::ok(head.note)?.with_headers(headers))
}

/// `GET /log/:name/tile/<L>/<N>[.p/<W>]`: a hash tile of the log's latest
/// signed tree; 404 for a tile that tree does not have.
pub async fn tile(app: &App, name: &str, coord: PathParam<TileCoord>) -> ApiResult<Response> {
    let log = LogId::from_path(app, name)?;
    let coord = coord?;
    let db = ledger::db(app, log)?;
    let data = ledger::tiles::served(&db, coord).await?.ok_or_else(|| {
        ApiError::NotFound(format!(
            "No tile {}: the log's latest checkpoint (GET /log/{name}/checkpoint) has no such \
             tile",
            coord.path()
        ))
    })?;
    let headers = Headers::new();
    headers.set("content-type", "application/octet-stream")?;
    let cache = if coord.is_full() {
        FULL_TILE_CACHE
    } else {
        SHORT_CACHE
    };
    headers.set("cache-control", cache)?;
    Ok(Response::from_bytes(data)?.with_headers(headers))
}

/// Reads `<L>/<N>[.p/<W>]` (the part after `tile/`) in the exact form of
/// C2SP tlog-tiles: a 400 names the part that is malformed, and entry
/// bundles are a 404 (not served, by design).
pub fn parse_tile_path(path: &str) -> ApiResult<TileCoord> {
    if path == "entries" || path.starts_with("entries/") {
        return Err(ApiError::NotFound(
            "Entry bundles (tile/entries/...) are not served: a log entry is an itemHash, which \
             grants access to what it names (docs/proofs-api.md, \"Tiles\"). Hash tiles are."
                .to_string(),
        ));
    }
    let (level_text, rest) = path.split_once('/').ok_or_else(|| {
        ApiError::field(
            "tile",
            "must be <level>/<index>[.p/<width>], e.g. 0/x001/234.p/7",
        )
    })?;
    let level = decimal(level_text)
        .and_then(|l| u8::try_from(l).ok())
        .filter(|l| *l <= TILE_LEVEL_MAX)
        .ok_or_else(|| {
            ApiError::field(
                "level",
                format!("must be a whole number from 0 to {TILE_LEVEL_MAX}, without leading zeros"),
            )
        })?;
    let (index_text, width) = match rest.split_once(".p/") {
        None => (rest, TILE_WIDTH),
        Some((index, w)) => {
            let w = decimal(w)
                .and_then(|w| u32::try_from(w).ok())
                .filter(|w| (1..TILE_WIDTH).contains(w))
                .ok_or_else(|| {
                    ApiError::field(
                        "width",
                        format!(
                            "a partial tile's width must be a whole number from 1 to {}, \
                             without leading zeros",
                            TILE_WIDTH - 1
                        ),
                    )
                })?;
            (index, w)
        }
    };
    let index = bvs_core::tiles::parse_index(index_text).ok_or_else(|| {
        ApiError::field(
            "index",
            "must be groups of three digits, all but the last prefixed x (x001/234)",
        )
    })?;
    let coord = TileCoord {
        level,
        index,
        width,
    };
    // One path per tile: `x000/001` and the like are not this tile's path.
    if coord.path() != format!("tile/{path}") {
        return Err(ApiError::field(
            "index",
            format!("is not in canonical form: the path is {}", coord.path()),
        ));
    }
    Ok(coord)
}

/// A decimal without leading zeros (`0` itself allowed).
fn decimal(text: &str) -> Option<u64> {
    let canonical = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn status(path: &str) -> u16 {
        parse_tile_path(path).err().unwrap().status()
    }

    #[test]
    fn tile_paths_are_read_in_their_c2sp_form() {
        let t = |level, index, width| TileCoord {
            level,
            index,
            width,
        };
        assert_eq!(parse_tile_path("0/000").unwrap(), t(0, 0, 256));
        assert_eq!(parse_tile_path("0/007.p/3").unwrap(), t(0, 7, 3));
        assert_eq!(parse_tile_path("1/x001/234").unwrap(), t(1, 1234, 256));
        assert_eq!(
            parse_tile_path("2/x001/x234/067.p/8").unwrap(),
            t(2, 1_234_067, 8)
        );
        assert_eq!(parse_tile_path("63/000").unwrap(), t(63, 0, 256));
    }

    #[test]
    fn a_bad_tile_path_names_its_part_and_entry_bundles_are_not_served() {
        for (path, field) in [
            ("0", "tile"),
            ("01/000", "level"),
            ("64/000", "level"),
            ("a/000", "level"),
            ("0/7", "index"),
            ("0/001/234", "index"),
            ("0/x000/234", "index"),
            ("0/000.p/256", "width"),
            ("0/000.p/0", "width"),
            ("0/000.p/03", "width"),
            ("0/000.p/", "width"),
        ] {
            let err = parse_tile_path(path).err().unwrap();
            assert_eq!(err.status(), 400, "{path}");
            let ApiError::Validation(problems) = err else {
                panic!("{path}: not a validation error");
            };
            assert_eq!(problems[0].field, field, "{path}");
        }
        assert_eq!(status("entries/000"), 404);
        assert_eq!(status("entries/x001/234.p/3"), 404);
    }
}
