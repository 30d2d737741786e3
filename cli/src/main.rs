//! `bvs-verify`: checks what the service hands out, offline, with the very
//! same `bvs_core` code the service and the verify page run. A thin face:
//! read files, call `bvs_core::verify`, print the report, exit.
//!
//! Exit status: 0 every check passed, 1 a check failed, 2 usage or I/O.

use bvs_core::cosignature::Freshness;
use bvs_core::hash::Hash32;
use bvs_core::policy::Policy;
use bvs_core::tlog_proof::{self, TlogProof};
use bvs_core::verify::{self, VerificationReport};
use serde_json::Value;
use std::process::ExitCode;

mod args;
mod monitor;

use args::{files, latest, parse_args, read, read_policy, required_key, Args, USAGE};

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
        "as-of" => {
            let [text] = files::<1>(args)?;
            Ok(verify::verify_as_of_document(&text, key))
        }
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
        "monitor" => monitor::monitor_head(args, policy),
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
        "liabilities" => liabilities_report(args, key),
        "export-proofs" => export_proofs(args, key, policy.as_ref()),
        "proof" => proof_report(args, policy.as_ref()),
        other => Err(format!("unknown command {other:?}")),
    }
}

/// `liabilities`: a customer's proof, checked for the customer named by
/// `--customer` (or `--ledger`): one of them is required (issue 40).
fn liabilities_report(args: &Args, key: Option<&str>) -> Result<VerificationReport, String> {
    let [text] = files::<1>(args)?;
    let balance = args
        .balance
        .as_deref()
        .map(|b| bvs_core::Amount::parse(b.trim()).map_err(|e| format!("--balance {e}")))
        .transpose()?;
    use bvs_core::liabilities::proof::{verify_proof_json, Checker};
    match (args.customer.as_deref(), args.ledger.as_deref()) {
        (Some(c), None) => {
            let c = bvs_core::types::CustomerId::parse(c.trim())
                .map_err(|e| format!("--customer: {e}"))?;
            Ok(verify_proof_json(
                &text,
                Checker::Customer(&c),
                key,
                balance,
            ))
        }
        (None, Some(l)) => {
            let l =
                bvs_core::hash::Hash32::parse(l.trim()).map_err(|e| format!("--ledger: {e}"))?;
            Ok(verify_proof_json(&text, Checker::Ledger(&l), key, balance))
        }
        _ => Err(
            "liabilities needs who is checking: --customer <your customerId> or \
             --ledger <your ledgerId> (one of them)"
                .into(),
        ),
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
        report.checks.extend(agreement_checks(first, key));
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
/// core's `agreement::answer_agreement_report` (the verify page's check
/// too) against the log of the pinned key (else the one the agreement
/// names), and the answer's ledger, period, root and count. None when the
/// answer has no registered customer key, or is not JSON (the answer's own
/// checks say so).
fn agreement_checks(page: &str, key: Option<&str>) -> Vec<verify::Check> {
    let Ok(doc) = serde_json::from_str::<Value>(page) else {
        return Vec::new();
    };
    let data = if doc.get("success").is_some() {
        &doc["data"]
    } else {
        &doc
    };
    let log_origin = match key {
        Some(k) => k.split('+').next().unwrap_or_default().to_string(),
        None => data["agreement"]["origin"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    };
    bvs_core::agreement::answer_agreement_report(page, &log_origin).checks
}

/// A receipt or answer names its own key, which proves nothing: without a
/// pinned `--key` its key checks fail, unless `--allow-unpinned`, which
/// keeps them and says so.
fn require_pinned_key(args: &Args, report: &mut VerificationReport) {
    if args.key.is_some()
        || !matches!(
            args.command.as_str(),
            "receipt" | "public" | "liabilities" | "as-of"
        )
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
    args.key.is_none()
        && matches!(
            args.command.as_str(),
            "receipt" | "public" | "liabilities" | "as-of"
        )
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
