//! `bvs-verify`: checks what the service hands out, offline, with the very
//! same `bvs_core` code the service and the verify page run. A thin face:
//! read files, call `bvs_core::verify`, print the report, exit.
//!
//! Exit status: 0 every check passed, 1 a check failed, 2 usage or I/O.

use bvs_core::hash::Hash32;
use bvs_core::merkle::TreeSize;
use bvs_core::monitor::{self, MonitorError, SeenHead};
use bvs_core::note;
use bvs_core::verify::{self, VerificationReport};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::ExitCode;

const USAGE: &str = "\
bvs-verify: check the balance verification service's proofs offline

Usage:
  bvs-verify receipt <receipt.json> --key <verifierKey> [--json]
  bvs-verify public <answer.json>... [--root <proofRoot>] --key <verifierKey> [--json]
  bvs-verify head <head.txt> --key <verifierKey> [--json]
  bvs-verify inclusion <inclusion.json> --key <verifierKey> [--json]
  bvs-verify consistency <old-head.txt> <new-head.txt> <proof> --key <verifierKey> [--json]
  bvs-verify monitor <head.txt> [<proof>] --key <verifierKey> --state <heads.json> [--json]
  bvs-verify statement <statement.txt> --key <counterpartyKey> [--root <merkleRoot>] [--json]

  receipt      a receipt saved from GET /api/v1/balance/receipt/<customerId>
               (the whole answer or its data): signed tree head, every
               itemHash recomputed from the raw data it carries, every
               inclusion proof, the roots, the counts, the replayed balance;
               for a receipt of a checkpoint the customer co-signed (or
               disputed), its agreement side: the checkpoint is the
               receipt's own (agreement.checkpoint), the customer's key
               binding is self-signed and in the log (agreement.key), and
               every statement is signed by that key, names this log,
               ledger, period, root, count and balance, and is in the log
               (agreement.statements[i])
  public       the pages of GET /api/v1/verify/<proofRoot>; for a checkpoint
               the customer co-signed, also its agreement side: the
               customer's key binding (agreement.key) and every balance or
               dispute statement (agreement.statements[i]) against this
               answer's log, ledger, period, root and count
  head         a signed tree head saved from GET /api/v1/log/<env>/checkpoint
  inclusion    an inclusion proof saved from
               GET /api/v1/log/<env>/proof/inclusion?itemHash=<hex>: the item
               is a leaf of the signed tree
  consistency  two saved signed tree heads and the consistency proof between
               them (GET /api/v1/log/<env>/proof/consistency?from=&to=, a JSON
               array of hex hashes, or one hex hash per line)
  monitor      a new signed tree head against every head of its log seen
               before, kept in the state file (per log origin, with the
               log's key): a head of a size seen before must have the same
               root, any other needs the consistency proof the command asks
               for (second file). A fork (two histories) fails loudly and is
               not recorded; a consistent head is added to the state.
  statement    a customer's signed statement (co-signed balance, dispute or
               key binding; docs/agreement.md), checked against the
               customer's key; --root pins the checkpoint's merkleRoot
               (alias: cosigned)

  --key   the log's verifier key, from GET /api/v1/log/<env>/key (verifierKey),
          kept from before (pinned). Receipts and answers name a key
          themselves, which proves nothing: without --key they are not
          reported VERIFIED. For statement: the customer's key,
          <name>+<key id>+<base64 key>.
  --allow-unpinned
          check a receipt or answer against the key it names, reported as
          VERIFIED WITH AN UNPINNED KEY.
  --state the monitor's state file (created if missing).
  --json  print the report as JSON: {ok, checks: [{name, ok, detail}]}

Log proofs are checked under the hash scheme the document names
(hashScheme, e.g. bvs-log-v1: log leaves are SHA-256(0x00 || \"bvs-log-v1\"
|| itemHash)); a scheme this verifier does not know fails the hashScheme
check, and no proof is checked under a guessed rule.

Exit status: 0 every check passed, 1 a check failed, 2 usage or I/O error.
";

/// Largest file read, in bytes: a receipt's own bound.
const FILE_BYTES_MAX: u64 = verify::RECEIPT_JSON_BYTES_MAX as u64;

struct Args {
    command: String,
    files: Vec<String>,
    key: Option<String>,
    root: Option<String>,
    state: Option<String>,
    allow_unpinned: bool,
    json: bool,
}

fn parse_args(raw: &[String]) -> Result<Args, String> {
    let mut it = raw.iter();
    let command = it.next().ok_or("no command given")?.clone();
    let mut args = Args {
        command,
        files: Vec::new(),
        key: None,
        root: None,
        state: None,
        allow_unpinned: false,
        json: false,
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => args.json = true,
            "--key" => args.key = Some(it.next().ok_or("--key needs a value")?.clone()),
            "--root" => args.root = Some(it.next().ok_or("--root needs a value")?.clone()),
            "--state" => args.state = Some(it.next().ok_or("--state needs a value")?.clone()),
            "--allow-unpinned" => args.allow_unpinned = true,
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            f => args.files.push(f.to_string()),
        }
    }
    Ok(args)
}

fn read(path: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{path}: {e}"))?;
    if meta.len() > FILE_BYTES_MAX {
        return Err(format!("{path}: larger than {FILE_BYTES_MAX} bytes"));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

fn files<const N: usize>(args: &Args) -> Result<[String; N], String> {
    let texts = args
        .files
        .iter()
        .map(|f| read(f))
        .collect::<Result<Vec<_>, _>>()?;
    texts
        .try_into()
        .map_err(|v: Vec<String>| format!("{} expects {N} file(s), got {}", args.command, v.len()))
}

fn required_key(args: &Args) -> Result<&str, String> {
    args.key
        .as_deref()
        .ok_or_else(|| format!("{} needs --key <verifierKey>", args.command))
}

fn run(args: &Args) -> Result<VerificationReport, String> {
    let key = args.key.as_deref().map(str::trim);
    match args.command.as_str() {
        "receipt" => {
            let [text] = files::<1>(args)?;
            // The receipt's own checks, then, for a receipt of a checkpoint
            // the customer co-signed or disputed, its agreement side.
            Ok(bvs_core::agreement::receipt_report(&text, key))
        }
        "public" => {
            if args.files.is_empty() {
                return Err("public expects at least one file".into());
            }
            let texts = args
                .files
                .iter()
                .map(|f| read(f))
                .collect::<Result<Vec<_>, _>>()?;
            let pages: Vec<&str> = texts.iter().map(String::as_str).collect();
            let mut report = verify::verify_public_answer(&pages, args.root.as_deref(), key);
            if let Some(first) = texts.first() {
                report
                    .checks
                    .extend(agreement_checks(first, key, args.root.as_deref()));
                report.ok = report.checks.iter().all(|c| c.ok);
            }
            Ok(report)
        }
        "head" => {
            let key = required_key(args)?.trim();
            let [note] = files::<1>(args)?;
            Ok(verify::tree_head_report(&note, key))
        }
        "inclusion" => {
            let key = required_key(args)?.trim();
            let [text] = files::<1>(args)?;
            Ok(verify::inclusion_answer_report(&text, key))
        }
        "monitor" => monitor_head(args),
        "consistency" => {
            let key = required_key(args)?.trim();
            let [old, new, proof] = files::<3>(args)?;
            let proof = verify::parse_proof_document(&proof)
                .map_err(|e| format!("{}: {e}", args.files[2]))?;
            Ok(verify::consistency_report(&old, &new, &proof, key))
        }
        "statement" | "cosigned" => {
            let key = required_key(args)?.trim();
            let [text] = files::<1>(args)?;
            let root = args
                .root
                .as_deref()
                .map(|r| bvs_core::Hash32::parse(r.trim()).map_err(|e| format!("--root {e}")))
                .transpose()?;
            Ok(bvs_core::agreement::statement_report(
                &text,
                key,
                root.as_ref(),
            ))
        }
        other => Err(format!("unknown command {other:?}")),
    }
}

/// The agreement side of a public answer for a co-signed checkpoint
/// (issue 19): the customer's key binding and every statement, checked by
/// `bvs_core::agreement` against this answer's log, ledger, period, root
/// and count. None when the answer has no registered customer key.
fn agreement_checks(page: &str, key: Option<&str>, root: Option<&str>) -> Vec<verify::Check> {
    let Ok(doc) = serde_json::from_str::<Value>(page) else {
        return Vec::new();
    };
    let data = if doc.get("success").is_some() {
        &doc["data"]
    } else {
        &doc
    };
    let a = &data["agreement"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let counterparty_key = text(&a["counterpartyKey"]);
    if counterparty_key.is_empty() {
        return Vec::new();
    }
    let log_origin = match key {
        Some(k) => k.split('+').next().unwrap_or_default().to_string(),
        None => text(&a["origin"]),
    };
    let root_text = root.map_or_else(|| text(&a["merkleRoot"]), str::to_string);
    let Ok(root) = Hash32::parse(root_text.trim()) else {
        return vec![verify::Check {
            name: "agreement.key".into(),
            ok: false,
            detail: "no merkleRoot to check the agreement against".into(),
        }];
    };
    let statements: Vec<(String, String, String)> = a["statements"]
        .as_array()
        .map(|v| {
            v.iter()
                .map(|s| {
                    (
                        text(&s["statement"]),
                        text(&s["recordedAt"]),
                        text(&s["counterpartyKey"]),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let keys: Vec<(String, String, String)> = a["keys"]
        .as_array()
        .map(|v| {
            v.iter()
                .map(|k| {
                    (
                        text(&k["counterpartyKey"]),
                        text(&k["keyStatement"]),
                        text(&k["registeredAt"]),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let (period, key_statement, balance_statement, ledger_id) = (
        text(&data["summary"]["period"]),
        text(&a["keyStatement"]),
        text(&a["balanceStatement"]),
        text(&a["ledgerId"]),
    );
    bvs_core::agreement::answer_agreement_checks(&bvs_core::agreement::AnswerAgreement {
        log_origin: &log_origin,
        root: &root,
        period: &period,
        item_count: data["summary"]["itemCount"].as_u64().unwrap_or(u64::MAX),
        ledger_id: &ledger_id,
        counterparty_key: &counterparty_key,
        key_statement: &key_statement,
        balance_statement: &balance_statement,
        statements: statements
            .iter()
            .map(|(s, at, k)| {
                (
                    s.as_str(),
                    at.as_str(),
                    (!k.is_empty()).then_some(k.as_str()),
                )
            })
            .collect(),
        keys: keys
            .iter()
            .map(|(k, s, at)| bvs_core::agreement::AnswerKey {
                counterparty_key: k,
                key_statement: s,
                registered_at: at,
            })
            .collect(),
    })
}

/// A receipt or answer names its own key, which proves nothing: without a
/// pinned `--key` its key checks fail, unless `--allow-unpinned`, which
/// keeps them and says so.
fn require_pinned_key(args: &Args, report: &mut VerificationReport) {
    if args.key.is_some() || !matches!(args.command.as_str(), "receipt" | "public") {
        return;
    }
    for c in report
        .checks
        .iter_mut()
        .filter(|c| c.name.ends_with("publicKey"))
    {
        if args.allow_unpinned {
            c.detail = format!("UNPINNED (--allow-unpinned): {}", c.detail);
        } else {
            c.ok = false;
            c.detail =
                "not pinned: the document names its own key, which proves nothing; pass --key \
                        <verifierKey> (GET /api/v1/log/<env>/key, kept from before), or \
                        --allow-unpinned to check against the named key anyway"
                    .into();
        }
    }
    report.ok = report.checks.iter().all(|c| c.ok);
}

/// Whether the report was made with a key the user did not pin.
fn unpinned(args: &Args) -> bool {
    args.key.is_none() && matches!(args.command.as_str(), "receipt" | "public")
}

// ------------------------------------------------------------------ monitor

/// Most bytes of a state file read. // spec: silent; 10,000 heads per log, a few logs
const STATE_BYTES_MAX: u64 = 64 * 1024 * 1024;

/// The monitor's state file: per log origin, its key and the heads seen.
/// `{"logs": {"<origin>": {"verifierKey": "...", "heads": [{"treeSize", "root"}]}}}`
struct State {
    logs: BTreeMap<String, (String, Vec<SeenHead>)>,
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
        logs.insert(origin.clone(), (key.to_string(), heads));
    }
    Ok(State { logs })
}

/// Writes the state next to `path` and renames it over: a crash leaves the
/// old state or the new one, never half of one.
fn write_state(path: &str, state: &State) -> Result<(), String> {
    let logs: serde_json::Map<String, Value> = state
        .logs
        .iter()
        .map(|(origin, (key, heads))| {
            let heads: Vec<Value> = heads
                .iter()
                .map(|h| json!({"treeSize": h.size.0, "root": h.root.to_hex()}))
                .collect();
            (origin.clone(), json!({"verifierKey": key, "heads": heads}))
        })
        .collect();
    let text = serde_json::to_string_pretty(&json!({ "logs": logs })).map_err(|e| e.to_string())?;
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{tmp}: {e}"))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{path}: {e}"))
}

fn monitor_head(args: &Args) -> Result<VerificationReport, String> {
    let key = required_key(args)?.trim();
    let state_path = args
        .state
        .as_deref()
        .ok_or("monitor needs --state <heads.json>")?;
    let (note_text, proof) = match args.files.as_slice() {
        [head] => (read(head)?, None),
        [head, proof] => {
            let hashes = verify::parse_proof_document(&read(proof)?)
                .map_err(|e| format!("{proof}: {e}"))?
                .iter()
                .map(|h| Hash32::parse(h).map_err(|e| format!("{proof}: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            (read(head)?, Some(hashes))
        }
        _ => return Err("monitor expects a head file and, optionally, a proof file".into()),
    };
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
    let push = |report: &mut VerificationReport, name: &str, ok: bool, detail: String| {
        report.checks.push(verify::Check {
            name: name.into(),
            ok,
            detail,
        });
        report.ok = report.checks.iter().all(|c| c.ok);
    };
    push(
        &mut report,
        "treeHead",
        true,
        format!(
            "signed by {}: size {}, root {}",
            head.origin, head.size, head.root
        ),
    );
    let (known_key, seen) = state
        .logs
        .entry(head.origin.clone())
        .or_insert_with(|| (key.to_string(), Vec::new()));
    if known_key != key {
        push(
            &mut report,
            "publicKey",
            false,
            format!(
                "the state pins key {known_key} for {}, this head was checked with {key}: a log's key never \
                 changes silently",
                head.origin
            ),
        );
        return Ok(report);
    }
    let seen_count = seen.len();
    match monitor::observe(seen, new, proof.as_deref()) {
        Ok(o) => {
            let detail = match o {
                monitor::Observation::First => {
                    format!("first head seen of {}: remembered", head.origin)
                }
                monitor::Observation::Known => format!("size {} was seen before, same root", head.size),
                monitor::Observation::Consistent { from } => format!(
                    "consistent with the head of size {from} seen before (and so with all {seen_count})"
                ),
            };
            push(&mut report, "history", true, detail);
            monitor::remember(seen, new);
            write_state(state_path, &state)?;
        }
        Err(e @ MonitorError::NeedProof { .. }) => {
            push(&mut report, "history", false, e.to_string())
        }
        Err(e) => {
            eprintln!("bvs-verify: {e}");
            push(&mut report, "history", false, e.to_string());
        }
    }
    Ok(report)
}

fn print_human(args: &Args, report: &VerificationReport) {
    let what = args.files.join(" ");
    let passed = report.checks.iter().filter(|c| c.ok).count();
    let width = report
        .checks
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0);
    for c in &report.checks {
        let mark = if c.ok { "PASS" } else { "FAIL" };
        println!("{mark}  {:width$}  {}", c.name, c.detail);
    }
    if report.ok && unpinned(args) {
        println!(
            "\nVERIFIED WITH AN UNPINNED KEY: {what}: all {passed} checks passed against the key the \
             document names; pin the log's key with --key to be sure."
        );
    } else if report.ok {
        println!("\nVERIFIED: {what}: all {passed} checks passed.",);
        // The log it is proven in: the pinned key's name is the log's
        // origin (one log per ledger shard, GET /api/v1/logs).
        if let Some((origin, _)) = args.key.as_deref().and_then(|k| k.split_once('+')) {
            println!("Log: {origin}");
        }
    } else {
        let failed = report.checks.len() - passed;
        println!(
            "\nNOT VERIFIED: {what}: {failed} of {} checks failed.",
            report.checks.len()
        );
        if let Some(first) = report.first_failure() {
            println!("First failure: {}: {}", first.name, first.detail);
        }
    }
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.is_empty() || raw.iter().any(|a| a == "--help" || a == "-h") {
        print!("{USAGE}");
        return if raw.is_empty() {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let report = parse_args(&raw).and_then(|args| {
        run(&args).map(|mut r| {
            require_pinned_key(&args, &mut r);
            (args, r)
        })
    });
    match report {
        Err(e) => {
            eprintln!("bvs-verify: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Ok((args, report)) => {
            if args.json {
                match serde_json::to_string_pretty(&report) {
                    Ok(text) => println!("{text}"),
                    Err(e) => {
                        eprintln!("bvs-verify: {e}");
                        return ExitCode::from(2);
                    }
                }
            } else {
                print_human(&args, &report);
            }
            if report.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
    }
}
