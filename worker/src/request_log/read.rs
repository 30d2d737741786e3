//! The request log as the dashboard reads it: a page of one environment's
//! requests (with the dashboard's own, kept on the Sandbox shard), newest
//! first, filtered; and one request by its `Request-Id`, with its bodies.

use bvs_core::types::Env;
use bvs_core::FieldError;

use crate::app::App;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::ids::{KeyId, TenantId};
use crate::ledger::LogId;
use crate::store::keys::KeyRow;
use crate::store::request_log::{self as store, PageQuery};
pub use crate::store::request_log::{DetailRow, EntryRow};

/// Requests per page by default, and at most.
pub const PAGE_DEFAULT: u64 = 50;
pub const PAGE_MAX: u64 = 100;
/// Characters of a path filter.
pub const PATH_FILTER_CHARS_MAX: usize = 200;

/// Which requests: the balance API's (of the environment), the
/// dashboard's, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    All,
    Api,
    Dashboard,
}

impl Family {
    /// # Errors
    /// 400 naming `family`.
    pub fn parse(text: Option<&str>) -> Result<Family, FieldError> {
        match text.unwrap_or("all") {
            "all" | "" => Ok(Family::All),
            "api" => Ok(Family::Api),
            "dashboard" => Ok(Family::Dashboard),
            _ => Err(FieldError::new("family", "must be all, api or dashboard")),
        }
    }
}

/// A status filter: a class (`2xx`, `4xx`, `5xx`, ...) or one status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusFilter {
    pub from: u16,
    pub to: u16,
}

impl StatusFilter {
    pub const ANY: StatusFilter = StatusFilter { from: 0, to: 1000 };

    /// `2xx`..`5xx`, `errors` (400 and up), or a status such as `404`.
    ///
    /// # Errors
    /// 400 naming `status`.
    pub fn parse(text: Option<&str>) -> Result<StatusFilter, FieldError> {
        let Some(t) = text.map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(StatusFilter::ANY);
        };
        let bad = || {
            FieldError::new(
                "status",
                "must be 2xx, 3xx, 4xx, 5xx, errors or a status such as 404",
            )
        };
        if t == "errors" {
            return Ok(StatusFilter { from: 400, to: 600 });
        }
        if let Some(class) = t.strip_suffix("xx") {
            let c: u16 = class.parse().map_err(|_| bad())?;
            if !(1..=5).contains(&c) {
                return Err(bad());
            }
            return Ok(StatusFilter {
                from: c * 100,
                to: c * 100 + 100,
            });
        }
        let s: u16 = t.parse().map_err(|_| bad())?;
        if !(100..600).contains(&s) {
            return Err(bad());
        }
        Ok(StatusFilter { from: s, to: s + 1 })
    }
}

/// The position after which a page starts: strictly older than
/// (created_at, request_id). Written `<ms>:<request id>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: u64,
    pub request_id: String,
}

impl Cursor {
    /// # Errors
    /// 400 naming `before`.
    pub fn parse(text: &str) -> Result<Cursor, FieldError> {
        let bad = || FieldError::new("before", "must be a nextCursor of an earlier page");
        let (ms, id) = text.split_once(':').ok_or_else(bad)?;
        let created_at = ms.parse().map_err(|_| bad())?;
        if !crate::request_id::well_formed(id) {
            return Err(bad());
        }
        Ok(Cursor {
            created_at,
            request_id: id.to_string(),
        })
    }

    pub fn text(&self) -> String {
        format!("{}:{}", self.created_at, self.request_id)
    }
}

/// What one page asks for.
pub struct Query {
    pub env: Env,
    pub family: Family,
    pub status: StatusFilter,
    pub path_part: Option<String>,
    pub key_id: Option<KeyId>,
    pub since_ms: u64,
    pub until_ms: u64,
    pub before: Option<Cursor>,
    pub limit: u64,
}

/// A listed request and the name of its key, if it had one.
pub struct Listed<T> {
    pub row: T,
    pub key_name: Option<String>,
}

/// The tenant's shards: (Sandbox, Production), each if provisioned.
async fn shards(app: &App, tenant_id: &TenantId) -> ApiResult<(Option<LogId>, Option<LogId>)> {
    let contracts = auth::contracts::of_tenant(app, tenant_id).await?;
    let of = |env: Env| {
        contracts
            .iter()
            .find(|c| c.env == env)
            .map(|c| LogId::new(env, c.shard))
    };
    Ok((of(Env::Sandbox), of(Env::Production)))
}

fn key_name(keys: &[KeyRow], id: Option<&KeyId>) -> Option<String> {
    let id = id?;
    keys.iter()
        .find(|k| &k.id == id)
        .map(|k| k.name.clone().unwrap_or_else(|| format!("key {id}")))
}

/// The shards a page reads, each with the sources read there: the
/// query's environment and family on the tenant's shards.
fn reads(
    q: &Query,
    sandbox: Option<LogId>,
    production: Option<LogId>,
) -> Vec<(LogId, [&'static str; 2])> {
    // (shard, the sources read there)
    let mut reads: Vec<(LogId, [&str; 2])> = Vec::new();
    let api = q.env.as_str();
    match (q.env, q.family) {
        (Env::Sandbox, Family::All) => reads.extend(sandbox.map(|s| (s, [api, "dashboard"]))),
        (Env::Production, Family::All) => {
            reads.extend(production.map(|s| (s, [api, api])));
            reads.extend(sandbox.map(|s| (s, ["dashboard", "dashboard"])));
        }
        (_, Family::Api) => {
            let shard = if q.env == Env::Sandbox {
                sandbox
            } else {
                production
            };
            reads.extend(shard.map(|s| (s, [api, api])));
        }
        (_, Family::Dashboard) => reads.extend(sandbox.map(|s| (s, ["dashboard", "dashboard"]))),
    }
    reads
}

/// One page, newest first, and the cursor of the next one (`None`: this
/// was the last).
///
/// # Errors
/// D1 errors.
pub async fn page(
    app: &App,
    tenant_id: &TenantId,
    q: &Query,
) -> ApiResult<(Vec<Listed<EntryRow>>, Option<Cursor>)> {
    let ((sandbox, production), keys) =
        futures_util::future::try_join(shards(app, tenant_id), auth::keys::list(app, tenant_id))
            .await?;
    let reads = reads(q, sandbox, production);
    let before = q.before.clone().unwrap_or(Cursor {
        created_at: u64::MAX >> 11,
        request_id: String::new(),
    });
    // An empty id sorts first: "strictly older than (t, '')" would skip
    // rows at t, so the open start is one past the newest possible time.
    let pages = reads.iter().map(|(log, sources)| async {
        let db = crate::ledger::db(app, *log)?;
        store::page(
            &db,
            &PageQuery {
                tenant_id,
                sources: *sources,
                since_ms: q.since_ms,
                until_ms: q.until_ms,
                before: (before.created_at, &before.request_id),
                status_from: q.status.from,
                status_to: q.status.to,
                path_part: q.path_part.as_deref(),
                key_id: q.key_id.as_ref(),
                limit: q.limit + 1,
            },
        )
        .await
    });
    let mut rows: Vec<EntryRow> = futures_util::future::try_join_all(pages)
        .await?
        .into_iter()
        .flatten()
        .collect();
    rows.sort_by(|a, b| (b.created_at, &b.request_id).cmp(&(a.created_at, &a.request_id)));
    let more = rows.len() as u64 > q.limit;
    rows.truncate(usize::try_from(q.limit).unwrap_or(usize::MAX));
    let next = more.then(|| rows.last()).flatten().map(|r| Cursor {
        created_at: r.created_at,
        request_id: r.request_id.clone(),
    });
    let listed = rows
        .into_iter()
        .map(|row| Listed {
            key_name: key_name(&keys, row.key_id.as_ref()),
            row,
        })
        .collect();
    Ok((listed, next))
}

/// The tenant's request with this id (the newest, if a caller reused
/// it), from either environment, with its bodies.
///
/// # Errors
/// 404 when the log has no such request (never made, another tenant's,
/// or past its time); D1 errors.
pub async fn one(
    app: &App,
    tenant_id: &TenantId,
    request_id: &str,
) -> ApiResult<Listed<DetailRow>> {
    let not_found = || {
        ApiError::NotFound(format!(
            "No request {request_id} in the request log (it keeps requests for the plan's log \
             time; see docs/dashboard.md)"
        ))
    };
    if !crate::request_id::well_formed(request_id) {
        return Err(not_found());
    }
    let ((sandbox, production), keys) =
        futures_util::future::try_join(shards(app, tenant_id), auth::keys::list(app, tenant_id))
            .await?;
    let reads = [sandbox, production]
        .into_iter()
        .flatten()
        .map(|log| async move {
            let db = crate::ledger::db(app, log)?;
            store::one(&db, tenant_id, request_id).await
        });
    let found = futures_util::future::try_join_all(reads)
        .await?
        .into_iter()
        .flatten()
        .max_by_key(|r| r.entry.created_at)
        .ok_or_else(not_found)?;
    Ok(Listed {
        key_name: key_name(&keys, found.entry.key_id.as_ref()),
        row: found,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn status_filters_are_classes_errors_or_one_status() {
        assert_eq!(
            StatusFilter::parse(Some("4xx")).unwrap(),
            StatusFilter { from: 400, to: 500 }
        );
        assert_eq!(
            StatusFilter::parse(Some("errors")).unwrap(),
            StatusFilter { from: 400, to: 600 }
        );
        assert_eq!(
            StatusFilter::parse(Some("404")).unwrap(),
            StatusFilter { from: 404, to: 405 }
        );
        assert_eq!(StatusFilter::parse(None).unwrap(), StatusFilter::ANY);
        for bad in ["6xx", "0xx", "abc", "99", "600"] {
            assert_eq!(
                StatusFilter::parse(Some(bad)).unwrap_err().field,
                "status",
                "{bad}"
            );
        }
    }

    #[test]
    fn a_cursor_reads_back_what_it_wrote() {
        let c = Cursor {
            created_at: 1_700_000_000_123,
            request_id: "req_a:b".into(),
        };
        assert_eq!(Cursor::parse(&c.text()).unwrap(), c);
        assert!(Cursor::parse("x:req").is_err());
        assert!(Cursor::parse("12").is_err());
        assert!(Cursor::parse("12:a b").is_err());
    }
}
