//! Shards: each environment's ledgers are spread over N D1 databases, each
//! with its own signed Merkle log. A tenant's environment is placed on one
//! shard when it is provisioned (stored in the control database's
//! `contracts.shard`); every ledger read and write of that tenant goes to
//! that shard's database and log.
//!
//! Configuration: `LEDGER_SHARDS_SANDBOX` / `LEDGER_SHARDS_PRODUCTION` hold
//! the number of shards N of each environment (1 when unset); the shard
//! databases are bound as `LEDGER_SANDBOX_0 .. LEDGER_SANDBOX_{N-1}` and
//! `LEDGER_PRODUCTION_0 ..`. Shards are only ever added: a tenant never
//! moves, new tenants go to the shard with the fewest tenants.

use bvs_core::hash::Hash32;
use bvs_core::types::Env;
use serde::{Deserialize, Serialize};

use crate::app::App;
use crate::error::{ApiError, ApiResult};

/// A shard, and the log it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LogId {
    pub env: Env,
    pub shard: u32,
}

/// The largest shard count a variable may name (Cloudflare allows ~5,000
/// bindings per Worker script, see docs/scaling.md).
pub const SHARDS_MAX: u32 = 1_000;

impl LogId {
    pub fn new(env: Env, shard: u32) -> Self {
        Self { env, shard }
    }

    /// The D1 binding of the shard's database.
    pub fn binding(self) -> String {
        format!("LEDGER_{}_{}", env_upper(self.env), self.shard)
    }

    /// The producer binding of the shard's own verification queue (each
    /// shard has one, consumed with `max_concurrency = 1`: see
    /// [`of_queue`]).
    pub fn queue_binding(self) -> String {
        format!("VERIFY_{}_{}", env_upper(self.env), self.shard)
    }

    /// The log's name in paths: `sandbox` for shard 0 (the log every
    /// environment had before sharding, so its old URLs keep working),
    /// `sandbox-1`, `sandbox-2`, ... for the others.
    pub fn path_name(self) -> String {
        if self.shard == 0 {
            self.env.as_str().to_string()
        } else {
            format!("{}-{}", self.env.as_str(), self.shard)
        }
    }

    /// Reads a path name (`sandbox`, `production-3`); 404 for anything
    /// else, including a shard this service does not have.
    pub fn from_path(app: &App, text: &str) -> ApiResult<LogId> {
        let not_found = || {
            ApiError::NotFound(format!(
                "No log named {text}: see GET /api/v1/logs for the list (sandbox, production, \
                 sandbox-1, ...; aliases: test or live, testnet or mainnet)"
            ))
        };
        let (env_text, shard) = match text.split_once('-') {
            None => (text, 0),
            Some((e, s)) => {
                if s.is_empty() || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(not_found());
                }
                (e, s.parse::<u32>().map_err(|_| not_found())?)
            }
        };
        // The other vocabularies are aliases (`test`/`live`,
        // `testnet`/`mainnet`; docs/glossary.md).
        let env = Env::from_any_name(env_text).ok_or_else(not_found)?;
        if shard >= count(app, env) {
            return Err(not_found());
        }
        Ok(LogId { env, shard })
    }

    /// The log's C2SP origin: the environment's origin for shard 0 (so the
    /// pre-shard log keeps its name, and with it its verifier key), and
    /// `<origin>/<shard>` for the others.
    pub fn origin(self, env_origin: &str) -> String {
        if self.shard == 0 {
            env_origin.to_string()
        } else {
            format!("{env_origin}/{}", self.shard)
        }
    }
}

fn env_upper(env: Env) -> &'static str {
    match env {
        Env::Sandbox => "SANDBOX",
        Env::Production => "PRODUCTION",
    }
}

/// The shard whose verification queue is named `queue`, by the naming
/// rule of wrangler.toml (docs/deploy.md, "Create the queues"): a name
/// ending in `verify-<env>` is shard 0's queue (the queue every shard
/// shared before each had its own), `verify-<env>-<n>` shard n's, whatever
/// comes before (`bvs-`, `bvs-staging-`). Any other queue (the webhooks
/// queue) is no shard's. The consumer runs only this shard's sequencer for
/// a batch of this queue: with each queue's `max_concurrency = 1`, that
/// is what keeps one writer per shard's log.
pub fn of_queue(queue: &str) -> Option<LogId> {
    let (base, shard) = match queue.rsplit_once('-') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            // Shard 0's queue has no number; a number never starts with 0.
            if n.starts_with('0') {
                return None;
            }
            (base, n.parse::<u32>().ok()?)
        }
        _ => (queue, 0),
    };
    let env = [Env::Sandbox, Env::Production]
        .into_iter()
        .find(|env| base.ends_with(&format!("verify-{}", env.as_str())))?;
    let prefix = &base[..base.len() - "verify-".len() - env.as_str().len()];
    (prefix.is_empty() || prefix.ends_with('-')).then_some(LogId::new(env, shard))
}

/// The variable holding an environment's shard count.
pub fn count_var(env: Env) -> &'static str {
    match env {
        Env::Sandbox => "LEDGER_SHARDS_SANDBOX",
        Env::Production => "LEDGER_SHARDS_PRODUCTION",
    }
}

/// How many shards `env` has: the variable, 1 when unset or unreadable.
pub fn count(app: &App, env: Env) -> u32 {
    app.var(count_var(env))
        .and_then(|v| v.trim().parse::<u32>().ok())
        .map_or(1, |n| n.clamp(1, SHARDS_MAX))
}

/// Every shard of `env`.
pub fn of_env(app: &App, env: Env) -> Vec<LogId> {
    (0..count(app, env)).map(|s| LogId::new(env, s)).collect()
}

/// Every shard of every environment, sandbox first.
pub fn all(app: &App) -> Vec<LogId> {
    let mut logs = of_env(app, Env::Sandbox);
    logs.extend(of_env(app, Env::Production));
    logs
}

/// The placement rule: the shard with the fewest tenants (the lowest
/// index on a tie), given each shard's tenant count. Shards missing from
/// `counts` have none.
pub fn emptiest(shards: u32, counts: &[(u32, u64)]) -> u32 {
    (0..shards.max(1))
        .min_by_key(|s| {
            let n = counts
                .iter()
                .find(|(shard, _)| shard == s)
                .map_or(0, |(_, n)| *n);
            (n, *s)
        })
        .unwrap_or(0)
}

/// Where a tenant's new environment goes: the emptiest shard of `env`
/// (`emptiest`), read from the control database's contracts.
///
/// # Errors
/// D1 errors.
pub async fn place(app: &App, env: Env) -> ApiResult<u32> {
    let counts = crate::store::contracts::shard_counts(&app.control_db()?, env).await?;
    Ok(emptiest(count(app, env), &counts))
}

/// The shard that issued `root`, as the control database's proof-root
/// index names it (written alongside the write that issued the root,
/// `roots::with_root_index`): one read, never a search of every shard,
/// so an unknown root costs one control read.
///
/// # Errors
/// D1 errors.
pub async fn of_root(app: &App, root: &Hash32) -> ApiResult<Option<LogId>> {
    Ok(crate::store::roots::find(&app.control_db()?, root)
        .await?
        .map(|row| LogId::new(row.env, row.shard)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emptiest_prefers_fewest_then_lowest() {
        assert_eq!(emptiest(2, &[]), 0);
        assert_eq!(emptiest(2, &[(0, 1)]), 1);
        assert_eq!(emptiest(3, &[(0, 2), (1, 1), (2, 1)]), 1);
        assert_eq!(emptiest(1, &[(0, 9)]), 0);
        // A shard beyond the configured count is ignored.
        assert_eq!(emptiest(2, &[(0, 1), (1, 1), (5, 0)]), 0);
    }

    #[test]
    fn a_verification_queue_names_its_shard() {
        let cases = [
            ("bvs-verify-sandbox", Some((Env::Sandbox, 0))),
            ("bvs-verify-sandbox-1", Some((Env::Sandbox, 1))),
            ("bvs-verify-production-12", Some((Env::Production, 12))),
            ("bvs-staging-verify-production", Some((Env::Production, 0))),
            ("bvs-staging-verify-sandbox-3", Some((Env::Sandbox, 3))),
            ("verify-sandbox", Some((Env::Sandbox, 0))),
            ("bvs-webhooks", None),
            ("bvs-verify-sandbox-0", None),
            ("bvs-verify-sandbox-01", None),
            ("bvs-verify-sandbox-", None),
            ("bvs-verify-staging", None),
            ("bvs-unverify-sandbox", None),
            ("bvs-verify-sandbox-x", None),
        ];
        for (queue, want) in cases {
            assert_eq!(
                of_queue(queue),
                want.map(|(env, shard)| LogId::new(env, shard)),
                "{queue}"
            );
        }
    }

    /// wrangler.toml keeps every shard's queue coherent in each of its
    /// three set-ups (local, production, staging): for each environment,
    /// every bound shard database `LEDGER_<ENV>_<n>` (at least
    /// `LEDGER_SHARDS_<ENV>` of them) has a producer binding
    /// `VERIFY_<ENV>_<n>` whose queue's name [`of_queue`] reads as that
    /// shard, and that queue a consumer with `max_concurrency = 1`.
    #[test]
    fn wrangler_toml_gives_every_shard_its_own_queue_with_one_consumer() {
        let toml = include_str!("../../../wrangler.toml");
        let sections = wrangler_sections(toml);
        assert_eq!(sections.len(), 3, "top level, production, staging");
        for (name, text) in &sections {
            let producers = entries(text, "binding = \"VERIFY_");
            let consumers = entries(text, "max_concurrency");
            let mut queues = Vec::new();
            for env in [Env::Sandbox, Env::Production] {
                let count: u32 = entries(text, count_var(env))
                    .iter()
                    .find_map(|e| value_of(e, count_var(env)))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("{name}: {} is not set", count_var(env)));
                let bound = (0..SHARDS_MAX)
                    .take_while(|s| {
                        text.contains(&format!("\"{}\"", LogId::new(env, *s).binding()))
                    })
                    .count();
                assert!(
                    bound >= count as usize,
                    "{name}: {env:?} binds {bound} < {count}"
                );
                for log in (0..bound as u32).map(|s| LogId::new(env, s)) {
                    let binding = format!("\"{}\"", log.queue_binding());
                    let queue = producers
                        .iter()
                        .filter(|p| p.contains(&binding))
                        .find_map(|p| value_of(p, "queue"))
                        .unwrap_or_else(|| panic!("{name}: no producer {binding}"));
                    assert_eq!(of_queue(&queue), Some(log), "{name}: {binding} -> {queue}");
                    let consumer = consumers
                        .iter()
                        .find(|c| value_of(c, "queue").as_deref() == Some(queue.as_str()))
                        .unwrap_or_else(|| panic!("{name}: no consumer of {queue}"));
                    assert_eq!(
                        value_of(consumer, "max_concurrency").as_deref(),
                        Some("1"),
                        "{name}: {queue} must have one sequencer at a time"
                    );
                    queues.push(queue);
                }
            }
            let distinct: std::collections::BTreeSet<&String> = queues.iter().collect();
            assert_eq!(distinct.len(), queues.len(), "{name}: a shared queue");
        }
    }

    /// The top level and each `[env.*]` table of wrangler.toml, comment
    /// lines left out.
    fn wrangler_sections(toml: &str) -> Vec<(String, String)> {
        let mut sections = vec![("top".to_string(), String::new())];
        for line in toml.lines().map(str::trim).filter(|l| !l.starts_with('#')) {
            if let Some(env) = line.strip_prefix("[env.").and_then(|t| t.strip_suffix(']')) {
                sections.push((env.to_string(), String::new()));
            } else if let Some((_, text)) = sections.last_mut() {
                text.push_str(line);
                text.push('\n');
            }
        }
        sections
    }

    /// Every entry of a section holding `needle`: its `[[...]]` tables
    /// (the top level), else its inline `{ ... }` tables and the text
    /// between them (the `[env.*]` sections).
    fn entries(text: &str, needle: &str) -> Vec<String> {
        let parts: Vec<&str> = if text.contains("[[") {
            text.split("[[").collect()
        } else {
            text.split(['{', '}']).collect()
        };
        parts
            .into_iter()
            .filter(|e| e.contains(needle))
            .map(str::to_string)
            .collect()
    }

    /// The value of `key = ...` in an entry, quotes removed.
    fn value_of(entry: &str, key: &str) -> Option<String> {
        entry.split([',', '\n']).find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
        })
    }

    #[test]
    fn names() {
        let l = LogId::new(Env::Production, 3);
        assert_eq!(l.binding(), "LEDGER_PRODUCTION_3");
        assert_eq!(l.queue_binding(), "VERIFY_PRODUCTION_3");
        assert_eq!(l.path_name(), "production-3");
        assert_eq!(l.origin("h/production"), "h/production/3");
        let z = LogId::new(Env::Sandbox, 0);
        assert_eq!(z.path_name(), "sandbox");
        assert_eq!(z.origin("h/sandbox"), "h/sandbox");
    }
}
