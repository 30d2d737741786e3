//! `bvs-verify`: checks what the service hands out, offline, with the very
//! same `bvs_core` code the service and the verify page run. A thin face:
//! read files, call `bvs_core::verify`, print the report, exit.
//!
//! Exit status: 0 every check passed, 1 a check failed, 2 usage or I/O.

use bvs_core::cosignature::{Freshness, LATEST_HEAD_AGE_SECONDS_DEFAULT};
use bvs_core::hash::Hash32;
use bvs_core::merkle::TreeSize;
use bvs_core::monitor::{self, MonitorError, SeenHead};
use bvs_core::note;
use bvs_core::policy::Policy;
use bvs_core::tlog_proof::{self, TlogProof};
use bvs_core::verify::{self, VerificationReport};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::ExitCode;

const USAGE: &str = "\
bvs-verify: check the balance verification service's proofs offline

Usage:
  bvs-verify receipt <receipt.json> --key <verifierKey> [--liabilities <proof.json>] [--json]
  bvs-verify public <answer.json>... [--root <proofRoot>] --key <verifierKey> [--json]
  bvs-verify head <head.txt> --key <verifierKey> [--json]
  bvs-verify inclusion <inclusion.json> --key <verifierKey> [--json]
  bvs-verify consistency <old-head.txt> <new-head.txt> <proof> --key <verifierKey> [--json]
  bvs-verify monitor <head.txt> [<proof>] --key <verifierKey> --state <heads.json> [--json]
  bvs-verify statement <statement.txt> --key <counterpartyKey> [--root <merkleRoot>] [--json]
  bvs-verify liabilities <proof.json> --key <verifierKey> [--balance <amount>] [--json]
  bvs-verify export-proofs <receipt.json> --out <dir> --key <verifierKey> [--policy <file>]
  bvs-verify proof <file.tlog-proof>... --key <verifierKey> [--policy <file>] [--item <itemHash>] [--json]

  receipt, public, head and monitor also take --policy <file> (below).

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
  liabilities  a customer's proof that its balance is counted in a vendor's
               liabilities statement (docs/liabilities.md): the statement's
               hash, the statement in the signed log, the ledger id, the
               leaf amount (the balance, or 0 with the absolute value in the
               receivables tree for a negative balance) and each sum-tree
               path to the statement's root, total and leaf count; --balance
               pins the balance you expect (your receipt's finalBalance)
  export-proofs
               checks a receipt as `receipt` does, then writes one C2SP
               tlog-proof file per delta into <dir> (leaf-<index>.tlog-proof:
               the entry \"bvs-log-v1\" || itemHash, its inclusion proof and
               the receipt's cosigned tree head), and lists them
  proof        C2SP tlog-proof files: the entry they name (--item pins the
               itemHash), the log's signature, the witnesses (with
               --policy) and the inclusion proof

  --key   the log's verifier key, from GET /api/v1/log/<env>/key (verifierKey),
          kept from before (pinned). Receipts, answers and liabilities
          proofs name a key themselves, which proves nothing: without --key they are not
          reported VERIFIED. For statement: the customer's key,
          <name>+<key id>+<base64 key>.
  --allow-unpinned
          check a receipt, answer or liabilities proof against the key it
          names, reported as VERIFIED WITH AN UNPINNED KEY.
  --balance
          liabilities: the balance you expect the proof to be for.
  --liabilities
          receipt: a liabilities proof (docs/liabilities.md) to tie to the
          receipt: it must pass, and be for the receipt's customer, period
          and finalBalance. A receipt that carries its period's proof
          (`liabilities`) is checked that way without this option.
  --state the monitor's state file (created if missing).
  --policy
          the witness policy to hold heads to: C2SP tlog-policy text
          (witness <name> <vkey>, group <name> <k> <names>, quorum <name>),
          saved from the log list (GET /api/v1/logs) the first time and
          kept, like the key. A head passes only when the policy's quorum
          of witnesses cosigned it; the report names the witnesses that did
          and did not. Its `log` lines, if any, must list the log's key (and
          stand in for --key when it is absent). monitor pins the policy in
          its state file on first use. Without --policy, cosignatures are
          not checked, and the report says so.
  --max-age <seconds>
          head and monitor check the log's latest head, just fetched: a
          cosignature counts only if made within this many seconds
          (default 3600), so a log cannot keep a client on an old view.
          Receipts, answers and proof files are saved documents: their
          cosignatures count whatever their age.
  --now <unix seconds>
          the clock --max-age is measured against (default: this machine's).
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
    balance: Option<String>,
    liabilities: Option<String>,
    state: Option<String>,
    policy: Option<String>,
    max_age: Option<u64>,
    now: Option<u64>,
    item: Option<String>,
    out: Option<String>,
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
        balance: None,
        liabilities: None,
        state: None,
        policy: None,
        max_age: None,
        now: None,
        item: None,
        out: None,
        allow_unpinned: false,
        json: false,
    };
    let number = |v: Option<&String>, name: &str| -> Result<u64, String> {
        v.ok_or(format!("{name} needs a value"))?
            .parse()
            .map_err(|_| format!("{name} must be a whole number of seconds"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => args.json = true,
            "--key" => args.key = Some(it.next().ok_or("--key needs a value")?.clone()),
            "--root" => args.root = Some(it.next().ok_or("--root needs a value")?.clone()),
            "--state" => args.state = Some(it.next().ok_or("--state needs a value")?.clone()),
            "--balance" => args.balance = Some(it.next().ok_or("--balance needs a value")?.clone()),
            "--liabilities" => {
                args.liabilities = Some(it.next().ok_or("--liabilities needs a value")?.clone());
            }
            "--policy" => args.policy = Some(it.next().ok_or("--policy needs a value")?.clone()),
            "--item" => args.item = Some(it.next().ok_or("--item needs a value")?.clone()),
            "--out" => args.out = Some(it.next().ok_or("--out needs a value")?.clone()),
            "--max-age" => args.max_age = Some(number(it.next(), "--max-age")?),
            "--now" => args.now = Some(number(it.next(), "--now")?),
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
    let policy = read_policy(args)?;
    match args.command.as_str() {
        "receipt" => {
            let [text] = files::<1>(args)?;
            let mut report = receipt_report(&text, key, policy.as_ref());
            receipt_liabilities(&mut report, &text, args, key)?;
            Ok(report)
        }
        "public" => public_report(args, key, policy.as_ref()),
        "head" => {
            let key = required_key(args)?.trim();
            let [note] = files::<1>(args)?;
            let mut report = verify::tree_head_report(&note, key);
            if let Some(policy) = &policy {
                verify::push_witness_checks(&mut report, "", &note, key, policy, latest(args)?);
            }
            Ok(report)
        }
        "inclusion" => {
            let key = required_key(args)?.trim();
            let [text] = files::<1>(args)?;
            Ok(verify::inclusion_answer_report(&text, key))
        }
        "monitor" => monitor_head(args, policy),
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
        "liabilities" => {
            let [text] = files::<1>(args)?;
            let balance = args
                .balance
                .as_deref()
                .map(|b| bvs_core::Amount::parse(b.trim()).map_err(|e| format!("--balance {e}")))
                .transpose()?;
            Ok(bvs_core::liabilities::proof::verify_proof_json(
                &text, key, balance,
            ))
        }
        "export-proofs" => export_proofs(args, key, policy.as_ref()),
        "proof" => proof_report(args, policy.as_ref()),
        other => Err(format!("unknown command {other:?}")),
    }
}

/// `public`: every page of a public answer, its agreement side (from the
/// first page), and with a policy each page's witness checks.
fn public_report(
    args: &Args,
    key: Option<&str>,
    policy: Option<&Policy>,
) -> Result<VerificationReport, String> {
    if args.files.is_empty() {
        return Err("public expects at least one file".into());
    }
    let texts = args
        .files
        .iter()
        .map(|f| read(f))
        .collect::<Result<Vec<_>, _>>()?;
    // A liabilities statement's answer (docs/liabilities.md §9): one page.
    if let [text] = texts.as_slice() {
        if bvs_core::liabilities::proof::is_statement_answer(text) {
            return Ok(bvs_core::liabilities::proof::verify_statement_answer_json(
                text, key,
            ));
        }
    }
    let pages: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut report = verify::verify_public_answer(&pages, args.root.as_deref(), key);
    if let Some(first) = texts.first() {
        report
            .checks
            .extend(agreement_checks(first, key, args.root.as_deref()));
        report.ok = report.checks.iter().all(|c| c.ok);
    }
    if let Some(policy) = policy {
        for (p, text) in texts.iter().enumerate() {
            let Ok(answer) = verify::read_public_answer_document(text) else {
                continue;
            };
            let prefix = if texts.len() == 1 {
                String::new()
            } else {
                format!("pages[{p}].")
            };
            let log_key = key.unwrap_or(&answer.verification.public_key);
            verify::push_witness_checks(
                &mut report,
                &prefix,
                &answer.verification.tree_head,
                log_key,
                policy,
                Freshness::Offline,
            );
        }
    }
    Ok(report)
}

/// `proof`: each C2SP tlog-proof file, its checks numbered by file when
/// there are several.
fn proof_report(args: &Args, policy: Option<&Policy>) -> Result<VerificationReport, String> {
    let key = required_key(args)?.trim();
    if args.files.is_empty() {
        return Err("proof expects at least one .tlog-proof file".into());
    }
    let item = args
        .item
        .as_deref()
        .map(|h| Hash32::parse(h.trim()).map_err(|e| format!("--item {e}")))
        .transpose()?;
    let mut report = VerificationReport {
        ok: true,
        checks: Vec::new(),
    };
    for (i, file) in args.files.iter().enumerate() {
        let one = verify::tlog_proof_report(&read(file)?, key, policy, item.as_ref());
        for mut c in one.checks {
            if args.files.len() > 1 {
                c.name = format!("proofs[{i}].{}", c.name);
            }
            report.checks.push(c);
        }
    }
    report.ok = report.checks.iter().all(|c| c.ok);
    Ok(report)
}

/// A receipt's checks (and its agreement side), with the witness checks
/// of its tree head under `policy` (offline: a saved receipt's
/// cosignatures count whatever their age).
fn receipt_report(text: &str, key: Option<&str>, policy: Option<&Policy>) -> VerificationReport {
    let mut report = bvs_core::agreement::receipt_report(text, key);
    if let (Some(policy), Ok(receipt)) = (policy, verify::read_receipt_document(text)) {
        let log_key = key.unwrap_or(&receipt.proof.public_key);
        verify::push_witness_checks(
            &mut report,
            "",
            &receipt.proof.tree_head,
            log_key,
            policy,
            Freshness::Offline,
        );
    }
    report
}

/// `receipt`: the liabilities proof it carries, or `--liabilities`, tied
/// to the receipt's customer, period and finalBalance (docs/liabilities.md
/// §10); nothing when there is neither.
fn receipt_liabilities(
    report: &mut VerificationReport,
    text: &str,
    args: &Args,
    key: Option<&str>,
) -> Result<(), String> {
    let proof = args.liabilities.as_deref().map(read).transpose()?;
    if proof.is_some() || bvs_core::liabilities::receipt::receipt_carries_proof(text) {
        let tied =
            bvs_core::liabilities::receipt::verify_receipt_proof(text, proof.as_deref(), key);
        report.ok &= tied.ok;
        report.checks.extend(tied.checks);
    }
    Ok(())
}

/// `export-proofs`: the receipt's checks, then, only if all passed, one
/// tlog-proof file per delta in `--out`.
fn export_proofs(
    args: &Args,
    key: Option<&str>,
    policy: Option<&Policy>,
) -> Result<VerificationReport, String> {
    let [text] = files::<1>(args)?;
    let out = args
        .out
        .as_deref()
        .ok_or("export-proofs needs --out <dir>")?;
    let mut report = receipt_report(&text, key, policy);
    if !report.ok {
        report.checks.push(verify::Check {
            name: "export".into(),
            ok: false,
            detail: "nothing written: the receipt did not verify".into(),
        });
        return Ok(report);
    }
    let receipt = verify::read_receipt_document(&text).map_err(|e| e.to_string())?;
    let proofs = tlog_proof::from_receipt(&receipt).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(out).map_err(|e| format!("{out}: {e}"))?;
    let mut written = Vec::with_capacity(proofs.len());
    for (anchor, proof) in &proofs {
        let path = std::path::Path::new(out).join(format!("leaf-{}.tlog-proof", proof.index));
        std::fs::write(&path, proof.to_text()).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(format!("{anchor} -> {}", path.display()));
    }
    report.checks.push(verify::Check {
        name: "export".into(),
        ok: true,
        detail: format!(
            "{} tlog-proof files written: {}",
            written.len(),
            written.join(", ")
        ),
    });
    Ok(report)
}

/// The `--policy` file, read.
fn read_policy(args: &Args) -> Result<Option<Policy>, String> {
    args.policy
        .as_deref()
        .map(|path| Policy::parse(&read(path)?).map_err(|e| format!("{path}: {e}")))
        .transpose()
}

/// The bound for checking a log's latest head now (`head`, `monitor`).
fn latest(args: &Args) -> Result<Freshness, String> {
    let now = match args.now {
        Some(n) => n,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| format!("the clock reads before 1970: {e}"))?
            .as_secs(),
    };
    Ok(Freshness::Latest {
        now,
        max_age: args.max_age.unwrap_or(LATEST_HEAD_AGE_SECONDS_DEFAULT),
    })
}

/// The signed note a document carries: a receipt's or answer's tree
/// head, a tlog-proof's checkpoint, or the file itself.
fn note_of(text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let v: Value = serde_json::from_str(trimmed).ok()?;
        let data = if v.get("success").is_some() {
            &v["data"]
        } else {
            &v
        };
        [
            &data["proof"]["treeHead"],
            &data["verification"]["treeHead"],
            &data["treeHead"],
        ]
        .iter()
        .find_map(|h| h.as_str().map(str::to_owned))
    } else if trimmed.starts_with(tlog_proof::TLOG_PROOF_HEADER) {
        TlogProof::parse(text).ok().map(|p| p.checkpoint)
    } else {
        Some(text.to_owned())
    }
}

/// Without `--key`, a `--policy` that lists the document's log stands in
/// for it: the policy was pinned, and its `log` line is that log's key.
fn key_from_policy(args: &mut Args) -> Result<(), String> {
    let uses_log_key = matches!(
        args.command.as_str(),
        "receipt" | "public" | "head" | "inclusion" | "monitor" | "export-proofs" | "proof"
    );
    if args.key.is_some() || !uses_log_key {
        return Ok(());
    }
    let (Some(policy), Some(first)) = (read_policy(args)?, args.files.first()) else {
        return Ok(());
    };
    let origin = note_of(&read(first)?).and_then(|n| n.lines().next().map(str::to_owned));
    args.key = origin.and_then(|o| policy.log_key(&o).map(str::to_owned));
    Ok(())
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
    let statements = triples(
        &a["statements"],
        ["statement", "recordedAt", "counterpartyKey"],
    );
    let keys = triples(
        &a["keys"],
        ["counterpartyKey", "keyStatement", "registeredAt"],
    );
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

/// Three text fields of each object of a JSON array (missing ones empty).
fn triples(list: &Value, names: [&str; 3]) -> Vec<(String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    list.as_array()
        .map(|v| {
            v.iter()
                .map(|o| (text(&o[names[0]]), text(&o[names[1]]), text(&o[names[2]])))
                .collect()
        })
        .unwrap_or_default()
}

/// A receipt or answer names its own key, which proves nothing: without a
/// pinned `--key` its key checks fail, unless `--allow-unpinned`, which
/// keeps them and says so.
fn require_pinned_key(args: &Args, report: &mut VerificationReport) {
    if args.key.is_some() || !matches!(args.command.as_str(), "receipt" | "public" | "liabilities")
    {
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
    args.key.is_none() && matches!(args.command.as_str(), "receipt" | "public" | "liabilities")
}

// ------------------------------------------------------------------ monitor

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

fn monitor_head(args: &Args, policy: Option<Policy>) -> Result<VerificationReport, String> {
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
        if !report.checks.iter().any(|c| c.name.ends_with("witnesses"))
            && matches!(
                args.command.as_str(),
                "receipt" | "public" | "head" | "monitor" | "proof" | "export-proofs"
            )
        {
            println!(
                "Witnesses: not checked (no --policy): a log showing others another history \
                 would not be caught here."
            );
        }
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
    let report = parse_args(&raw).and_then(|mut args| {
        key_from_policy(&mut args)?;
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
