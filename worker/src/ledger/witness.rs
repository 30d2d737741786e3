//! Witness cosignatures (issue 28, C2SP tlog-witness): each environment's
//! witness policy (`WITNESS_POLICY_<ENV>`, C2SP tlog-policy text; absent
//! means `quorum none`) and what the log list publishes of it.

use bvs_core::policy::Policy;
use bvs_core::types::Env;
use serde::Serialize;

use crate::app::App;
use crate::error::{ApiError, ApiResult};

/// The var that holds an environment's witness policy.
pub fn policy_var(env: Env) -> &'static str {
    match env {
        Env::Sandbox => "WITNESS_POLICY_SANDBOX",
        Env::Production => "WITNESS_POLICY_PRODUCTION",
    }
}

/// The witness policy of `env`: its witnesses (each with its submission
/// URL) and quorum. Absent or blank is `quorum none` (no witnesses).
///
/// # Errors
/// Internal (a configuration error, logged by line): text that is not
/// tlog-policy, or a witness without a submission URL.
pub fn policy(app: &App, env: Env) -> ApiResult<Policy> {
    let var = policy_var(env);
    let text = app
        .var(var)
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| "quorum none\n".to_owned());
    // A var written on one line in wrangler.toml may use literal `\n`.
    let text = text.replace("\\n", "\n");
    let policy = Policy::parse(&text).map_err(|e| ApiError::internal(format!("{var}: {e}")))?;
    if let Some(w) = policy.witnesses().iter().find(|w| w.url.is_none()) {
        return Err(ApiError::internal(format!(
            "{var}: witness {} has no submission URL",
            w.name
        )));
    }
    Ok(policy)
}

/// The log list's `witnessPolicy`: the quorum as k of these witnesses'
/// cosignature verifier keys.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Threshold {
    pub quorum: usize,
    pub witnesses: Vec<String>,
}

/// One log's published policy: the k-of-n form (`None` when the quorum
/// has nested groups) and the C2SP tlog-policy text naming only that log.
///
/// # Errors
/// Internal: the log's verifier key is not one (never for our own key).
pub fn published(policy: &Policy, log_vkey: &str) -> ApiResult<(Option<Threshold>, String)> {
    let one = policy
        .with_logs(&[log_vkey])
        .map_err(|e| ApiError::internal(format!("witness policy for {log_vkey}: {e}")))?;
    let threshold = policy.threshold().map(|(quorum, ws)| Threshold {
        quorum,
        witnesses: ws.iter().map(|w| w.key.vkey()).collect(),
    });
    Ok((threshold, one.to_text()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_logs_policy_names_that_log_and_the_k_of_n() {
        let w1 = bvs_core::cosignature::witness_vkey("w1.example", &[1; 32]).unwrap();
        let w2 = bvs_core::cosignature::witness_vkey("w2.example", &[2; 32]).unwrap();
        let log = bvs_core::note::public_key_string("example.com/log", &[9; 32]).unwrap();
        let text = format!(
            "witness a {w1} http://127.0.0.1:1\nwitness b {w2} http://127.0.0.1:2\ngroup g 2 a b\nquorum g\n"
        );
        let policy = Policy::parse(&text).unwrap();
        let (threshold, published) = published(&policy, &log).unwrap();
        assert_eq!(
            threshold,
            Some(Threshold {
                quorum: 2,
                witnesses: vec![w1, w2]
            })
        );
        assert!(published.starts_with(&format!("log {log}\n")));
        assert!(published.ends_with("quorum g\n"));
        let none = Policy::parse("quorum none\n").unwrap();
        let (threshold, _) = super::published(&none, &log).unwrap();
        assert_eq!(
            threshold,
            Some(Threshold {
                quorum: 0,
                witnesses: vec![]
            })
        );
    }
}
