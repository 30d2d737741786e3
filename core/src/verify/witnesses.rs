//! Witness cosignatures on a signed tree head, against a policy or a
//! k-of-n quorum.

use super::{tree_head_report, Detail, VerificationReport};
use crate::cosignature::{CosignedNote, Freshness, WitnessKey};
use crate::json;
use crate::policy::{Cosigned, Policy, Words};

/// The witness checks of the signed tree head `note_text` under `policy`,
/// added to `report` with `prefix` before their names: `policy.log`, that
/// the policy accepts the log key the head was checked with (when it
/// lists logs), and `witnesses`, whether the policy's quorum cosigned the
/// head, naming the witnesses that did and did not. `freshness` is
/// [`Freshness::Latest`] only for a log's latest head checked now, never
/// for a saved receipt or answer.
pub fn push_witness_checks(
    report: &mut VerificationReport,
    prefix: &str,
    note_text: &str,
    log_key: &str,
    policy: &Policy,
    freshness: Freshness,
) {
    if !policy.logs().is_empty() {
        report.result(
            format!("{prefix}policy.log"),
            if policy.accepts_log(log_key.trim()) {
                Ok("the policy lists the log's key".into())
            } else {
                Err(format!(
                    "the policy does not list the log key {}",
                    json::quoted(log_key.trim())
                ))
            },
        );
    }
    report.result(
        format!("{prefix}witnesses"),
        match policy.check(note_text, freshness) {
            Ok(q) if q.met => Ok(q.summary()),
            Ok(q) => Err(q.summary()),
            Err(e) => Err(e.to_string()),
        },
    );
}

/// Reads a tlog-policy text into the check `policy`: what it demands, or
/// why it cannot be read.
fn read_policy(report: &mut VerificationReport, policy_text: &str) -> Option<Policy> {
    match Policy::parse(policy_text) {
        Ok(policy) => {
            report.push(
                "policy",
                true,
                format!(
                    "{} witnesses; quorum {}",
                    policy.witnesses().len(),
                    policy.rule()
                ),
            );
            Some(policy)
        }
        Err(e) => {
            report.push("policy", false, e.to_string());
            None
        }
    }
}

/// A signed tree head against a log key and a witness policy (tlog-policy
/// text), as a report: `treeHead` (the log's signature), `policy` (the
/// text read), then the checks of [`push_witness_checks`].
pub fn witness_report(
    note_text: &str,
    log_key: &str,
    policy_text: &str,
    freshness: Freshness,
) -> VerificationReport {
    let mut report = tree_head_report(note_text, log_key);
    if let Some(policy) = read_policy(&mut report, policy_text) {
        push_witness_checks(&mut report, "", note_text, log_key, &policy, freshness);
    }
    report
}

/// A signed tree head against a log key and a k-of-n witness quorum,
/// the form the log list publishes (`witnessPolicy`: `quorum` and the
/// witnesses' cosignature vkeys), as a report: `treeHead` (the log's
/// signature), then `witnesses`: whether at least `quorum` of them
/// cosigned the head, naming those that did and did not. What the
/// browser verifier checks; a C2SP tlog-policy file goes through
/// [`witness_report`].
pub fn cosignature_report(
    note_text: &str,
    log_key: &str,
    witness_vkeys: &[String],
    quorum: u64,
    freshness: Freshness,
) -> VerificationReport {
    let mut report = tree_head_report(note_text, log_key);
    report.result(
        "witnesses",
        threshold_detail(note_text, witness_vkeys, quorum, freshness),
    );
    report
}

/// The words of a k-of-n witness check (see [`cosignature_report`]).
fn threshold_detail(
    note_text: &str,
    witness_vkeys: &[String],
    quorum: u64,
    freshness: Freshness,
) -> Detail {
    let note = CosignedNote::read(note_text).map_err(|e| e.to_string())?;
    let n = witness_vkeys.len() as u64;
    if quorum > n {
        return Err("the quorum is larger than the number of witnesses".into());
    }
    let mut words = Words::default();
    let mut count = 0u64;
    for v in witness_vkeys {
        let key = WitnessKey::parse(v).map_err(|e| e.to_string())?;
        let found = note.cosigned_at(&key).map_err(|e| e.to_string())?;
        count += u64::from(words.add(key.name(), Cosigned::judge(found, freshness)));
    }
    let rule = format!("{quorum} of the {n} witnesses");
    let met = count >= quorum;
    let text = words.finish(met, &rule);
    if met {
        Ok(text)
    } else {
        Err(text)
    }
}

/// Where a saved document keeps its signed tree head and the log key it
/// names: a receipt's `proof`, a liabilities proof's `log`.
const HEAD_HOLDERS: [&str; 2] = ["proof", "log"];

/// The witness checks of a saved document's signed tree head (a receipt or
/// a liabilities proof, enveloped as an API answer or not) under a C2SP
/// tlog-policy text, as the SDKs' `witnessPolicy` asks (issue 40):
/// `policy` (what it demands), then [`push_witness_checks`] with the
/// trusted key (else the key the document names) and every valid
/// cosignature counted whatever its age (a saved document). A head whose
/// cosignature lines were stripped fails `witnesses` unless the policy
/// requires none.
pub fn document_witness_report(
    document_text: &str,
    trusted_key: Option<&str>,
    policy_text: &str,
) -> VerificationReport {
    let mut report = VerificationReport::new();
    let Some(policy) = read_policy(&mut report, policy_text) else {
        return report;
    };
    let value = match json::parse(document_text) {
        Ok(v) => v,
        Err(e) => return VerificationReport::failure("witnesses", e.to_string()),
    };
    let doc = super::unwrap_envelope(&value);
    let holder = HEAD_HOLDERS
        .iter()
        .find_map(|h| doc.as_object().and_then(|o| o.get(h)))
        .and_then(json::Value::as_object);
    let text = |name: &str| match holder.and_then(|h| h.get(name)) {
        Some(json::Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let Some(note) = text("treeHead") else {
        report.push(
            "witnesses",
            false,
            "the document has no signed tree head (proof.treeHead or log.treeHead)",
        );
        return report;
    };
    let Some(log_key) = trusted_key.map(str::to_owned).or_else(|| text("publicKey")) else {
        report.push("witnesses", false, "no log key: give the one you trust");
        return report;
    };
    push_witness_checks(
        &mut report,
        "",
        &note,
        &log_key,
        &policy,
        Freshness::Offline,
    );
    report
}
