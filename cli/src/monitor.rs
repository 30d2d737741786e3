//! `bvs-verify monitor`: a client's memory of each log, kept in a state
//! file (the heads seen, the key and the witness policy pinned on first
//! use), checked against each new head for consistency (`core::monitor`).

use bvs_core::hash::Hash32;
use bvs_core::merkle::TreeSize;
use bvs_core::monitor::{self, MonitorError, SeenHead};
use bvs_core::note;
use bvs_core::policy::Policy;
use bvs_core::verify::{self, VerificationReport};
use serde_json::{json, Value};
use std::collections::BTreeMap;

use crate::args::{latest, read, required_key, Args};

/// Most bytes of a state file read. // spec: silent; 10,000 heads per log, a few logs
const STATE_BYTES_MAX: u64 = 64 * 1024 * 1024;

/// The monitor's state file: per log origin, its key, the witness policy
/// pinned with it (if any) and the heads seen.
/// `{"logs": {"<origin>": {"verifierKey": "...", "witnessPolicy": "...", "heads": [{"treeSize", "root"}]}}}`
struct State {
    logs: BTreeMap<String, LogState>,
}

struct LogState {
    key: String,
    /// tlog-policy text, pinned on first use.
    policy: Option<String>,
    heads: Vec<SeenHead>,
}

fn read_state(path: &str) -> Result<State, String> {
    let mut logs = BTreeMap::new();
    let text = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State { logs }),
        Err(e) => return Err(format!("{path}: {e}")),
        Ok(m) if m.len() > STATE_BYTES_MAX => {
            return Err(format!("{path}: larger than {STATE_BYTES_MAX} bytes"))
        }
        Ok(_) => std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?,
    };
    let bad = |what: &str| format!("{path}: not a bvs-verify state file ({what})");
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
    let entries = v["logs"].as_object().ok_or_else(|| bad("no logs object"))?;
    for (origin, log) in entries {
        let key = log["verifierKey"]
            .as_str()
            .ok_or_else(|| bad("a log without verifierKey"))?;
        let mut heads = Vec::new();
        for h in log["heads"]
            .as_array()
            .ok_or_else(|| bad("a log without heads"))?
        {
            let size = h["treeSize"]
                .as_u64()
                .ok_or_else(|| bad("a head without treeSize"))?;
            let root = h["root"]
                .as_str()
                .and_then(|r| Hash32::parse(r).ok())
                .ok_or_else(|| bad("a head without a hex root"))?;
            monitor::remember(
                &mut heads,
                SeenHead {
                    size: TreeSize(size),
                    root,
                },
            );
        }
        let policy = match &log["witnessPolicy"] {
            Value::Null => None,
            p => Some(
                p.as_str()
                    .ok_or_else(|| bad("a witnessPolicy that is not text"))?
                    .to_string(),
            ),
        };
        logs.insert(
            origin.clone(),
            LogState {
                key: key.to_string(),
                policy,
                heads,
            },
        );
    }
    Ok(State { logs })
}

/// Writes the state next to `path` and renames it over: a crash leaves the
/// old state or the new one, never half of one.
fn write_state(path: &str, state: &State) -> Result<(), String> {
    let logs: serde_json::Map<String, Value> = state
        .logs
        .iter()
        .map(|(origin, log)| {
            let heads: Vec<Value> = log
                .heads
                .iter()
                .map(|h| json!({"treeSize": h.size.0, "root": h.root.to_hex()}))
                .collect();
            let mut entry = json!({"verifierKey": log.key, "heads": heads});
            if let Some(p) = &log.policy {
                entry["witnessPolicy"] = json!(p);
            }
            (origin.clone(), entry)
        })
        .collect();
    let text = serde_json::to_string_pretty(&json!({ "logs": logs })).map_err(|e| e.to_string())?;
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{tmp}: {e}"))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{path}: {e}"))
}

pub fn monitor_head(args: &Args, policy: Option<Policy>) -> Result<VerificationReport, String> {
    let key = required_key(args)?.trim();
    let state_path = args
        .state
        .as_deref()
        .ok_or("monitor needs --state <heads.json>")?;
    let (note_text, proof) = monitor_inputs(args)?;
    let mut report = VerificationReport {
        ok: true,
        checks: Vec::new(),
    };
    let head = match note::verify_tree_head(&note_text, key) {
        Ok(h) => h,
        Err(e) => return Ok(VerificationReport::failure("treeHead", e.to_string())),
    };
    let mut state = read_state(state_path)?;
    let new = SeenHead {
        size: head.size,
        root: head.root,
    };
    push_check(
        &mut report,
        "treeHead",
        true,
        format!(
            "signed by {}: size {}, root {}",
            head.origin, head.size, head.root
        ),
    );
    let log = state
        .logs
        .entry(head.origin.clone())
        .or_insert_with(|| LogState {
            key: key.to_string(),
            policy: None,
            heads: Vec::new(),
        });
    let Some(policy) = pinned_checks(&mut report, log, key, &head.origin, policy, state_path)?
    else {
        return Ok(report);
    };
    if let Some(policy) = &policy {
        verify::push_witness_checks(&mut report, "", &note_text, key, policy, latest(args)?);
        if !report.ok {
            return Ok(report);
        }
    }
    let seen = &mut log.heads;
    let seen_count = seen.len();
    match monitor::observe(seen, new, proof.as_deref()) {
        Ok(o) => {
            let detail = observation_detail(o, &head.origin, head.size, seen_count);
            push_check(&mut report, "history", true, detail);
            monitor::remember(seen, new);
            if let Some(policy) = policy {
                log.policy = Some(policy.to_text());
            }
            write_state(state_path, &state)?;
        }
        Err(e @ MonitorError::NeedProof { .. }) => {
            push_check(&mut report, "history", false, e.to_string())
        }
        Err(e) => {
            eprintln!("bvs-verify: {e}");
            push_check(&mut report, "history", false, e.to_string());
        }
    }
    Ok(report)
}

/// `monitor`'s files: the head, and optionally a consistency proof.
fn monitor_inputs(args: &Args) -> Result<(String, Option<Vec<Hash32>>), String> {
    match args.files.as_slice() {
        [head] => Ok((read(head)?, None)),
        [head, proof] => {
            let hashes = verify::parse_proof_document(&read(proof)?)
                .map_err(|e| format!("{proof}: {e}"))?
                .iter()
                .map(|h| Hash32::parse(h).map_err(|e| format!("{proof}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((read(head)?, Some(hashes)))
        }
        _ => Err("monitor expects a head file and, optionally, a proof file".into()),
    }
}

fn push_check(report: &mut VerificationReport, name: &str, ok: bool, detail: String) {
    report.checks.push(verify::Check {
        name: name.into(),
        ok,
        detail,
    });
    report.ok = report.checks.iter().all(|c| c.ok);
}

/// The key and the witness policy the state pins for the log, against the
/// ones given: `None` (the failed check in `report`) when either differs,
/// else the policy to check with. The policy is pinned on first use, like
/// the key; a different one later is refused, never swapped in silently.
fn pinned_checks(
    report: &mut VerificationReport,
    log: &LogState,
    key: &str,
    origin: &str,
    policy: Option<Policy>,
    state_path: &str,
) -> Result<Option<Option<Policy>>, String> {
    if log.key != key {
        push_check(
            report,
            "publicKey",
            false,
            format!(
                "the state pins key {} for {origin}, this head was checked with {key}: a log's \
                 key never changes silently",
                log.key
            ),
        );
        return Ok(None);
    }
    let pinned = log
        .policy
        .as_deref()
        .map(|text| {
            Policy::parse(text).map_err(|e| format!("{state_path}: the pinned witness policy: {e}"))
        })
        .transpose()?;
    Ok(match (policy, pinned) {
        (Some(given), Some(pinned)) if given != pinned => {
            push_check(
                report,
                "policy",
                false,
                format!(
                    "the state pins another witness policy for {origin}: a log's witnesses never \
                     change silently (compare them, then start a new state file)"
                ),
            );
            None
        }
        (Some(given), _) => Some(Some(given)),
        (None, pinned) => Some(pinned),
    })
}

/// The words of a head the history accepts.
fn observation_detail(
    o: monitor::Observation,
    origin: &str,
    size: TreeSize,
    seen_count: usize,
) -> String {
    match o {
        monitor::Observation::First => format!("first head seen of {origin}: remembered"),
        monitor::Observation::Known => format!("size {size} was seen before, same root"),
        monitor::Observation::Consistent { from } => format!(
            "consistent with the head of size {from} seen before (and so with all {seen_count})"
        ),
    }
}
