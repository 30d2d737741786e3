//! `bvs-verify`: checks what the service hands out, offline, with the very
//! same `bvs_core` code the service and the verify page run. A thin face:
//! read files, call `bvs_core::verify`, print the report, exit.
//!
//! Exit status: 0 every check passed, 1 a check failed, 2 usage or I/O.

use bvs_core::verify::{self, VerificationReport};
use std::process::ExitCode;

const USAGE: &str = "\
bvs-verify: check the balance verification service's proofs offline

Usage:
  bvs-verify receipt <receipt.json> [--key <verifierKey>] [--json]
  bvs-verify public <answer.json>... [--root <proofRoot>] [--key <verifierKey>] [--json]
  bvs-verify head <head.txt> --key <verifierKey> [--json]
  bvs-verify inclusion <inclusion.json> --key <verifierKey> [--json]
  bvs-verify consistency <old-head.txt> <new-head.txt> <proof> --key <verifierKey> [--json]

  receipt      a receipt saved from GET /api/v1/balance/receipt/<customerId>
               (the whole answer or its data): signed tree head, every
               itemHash recomputed from the raw data it carries, every
               inclusion proof, the roots, the counts, the replayed balance
  public       the pages of GET /api/v1/verify/<proofRoot>
  head         a signed tree head saved from GET /api/v1/log/<env>/checkpoint
  inclusion    an inclusion proof saved from
               GET /api/v1/log/<env>/proof/inclusion?itemHash=<hex>: the item
               is a leaf of the signed tree
  consistency  two saved signed tree heads and the consistency proof between
               them (GET /api/v1/log/<env>/proof/consistency?from=&to=, a JSON
               array of hex hashes, or one hex hash per line)

  --key   the log's verifier key, from GET /api/v1/log/<env>/key (verifierKey).
          Optional for receipts and answers, which name their key: pin it to
          be sure the key is the log's published one.
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
        json: false,
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => args.json = true,
            "--key" => args.key = Some(it.next().ok_or("--key needs a value")?.clone()),
            "--root" => args.root = Some(it.next().ok_or("--root needs a value")?.clone()),
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
            Ok(verify::verify_receipt_document(&text, key))
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
            Ok(verify::verify_public_answer(
                &pages,
                args.root.as_deref(),
                key,
            ))
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
        "consistency" => {
            let key = required_key(args)?.trim();
            let [old, new, proof] = files::<3>(args)?;
            let proof = verify::parse_proof_document(&proof)
                .map_err(|e| format!("{}: {e}", args.files[2]))?;
            Ok(verify::consistency_report(&old, &new, &proof, key))
        }
        other => Err(format!("unknown command {other:?}")),
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
    if report.ok {
        println!("\nVERIFIED: {what}: all {passed} checks passed.",);
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
    let report = parse_args(&raw).and_then(|args| run(&args).map(|r| (args, r)));
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
