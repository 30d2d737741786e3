//! The command line and the files it names: options, the files read
//! (each within its bound), the pinned key and policy, and the bound for
//! a latest head.

use bvs_core::cosignature::{Freshness, LATEST_HEAD_AGE_SECONDS_DEFAULT};
use bvs_core::policy::Policy;
use bvs_core::verify;

pub const USAGE: &str = "\
bvs-verify: check the balance verification service's proofs offline

Usage:
  bvs-verify receipt <receipt.json> --key <verifierKey> [--liabilities <proof.json>] [--json]
  bvs-verify public <answer.json>... [--root <proofRoot>] --key <verifierKey> [--json]
  bvs-verify as-of <derive.json> --key <verifierKey> [--json]
  bvs-verify head <head.txt> --key <verifierKey> [--json]
  bvs-verify inclusion <inclusion.json> --key <verifierKey> [--json]
  bvs-verify consistency <old-head.txt> <new-head.txt> <proof> --key <verifierKey> [--json]
  bvs-verify monitor <head.txt> [<proof>] --key <verifierKey> --state <heads.json> [--json]
  bvs-verify statement <statement.txt> --key <counterpartyKey> [--root <merkleRoot>] [--json]
  bvs-verify liabilities <proof.json> --customer <customerId> --key <verifierKey> [--balance <amount>] [--json]
  bvs-verify liabilities <proof.json> --ledger <ledgerId> --key <verifierKey> [--balance <amount>] [--json]
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
  as-of        a balance as of a moment, saved from GET
               /api/v1/balance/derive/<customerId>?asOf=<time> (the whole
               answer, its data, or its asOf): the signed tree head, every
               listed delta's inclusion, that they are the ledger's
               consecutive deltas, the boundary (basis verified: each listed
               delta verified by asOf, the next one after it; basis
               declared: the whole ledger at that head, counting those
               declared by asOf), the count, the last delta and the balance
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
               hash, the statement in the signed log, that the proof is for
               your own ledger (--customer: your customerId, from which and
               the statement's tenantId the ledger id is recomputed; or
               --ledger: your ledger id; one of them is required, so another
               customer's proof fails customer.ledgerId), the
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
  --customer, --ledger
          liabilities: who is checking (above).
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
pub const FILE_BYTES_MAX: u64 = verify::RECEIPT_JSON_BYTES_MAX as u64;

pub struct Args {
    pub command: String,
    pub files: Vec<String>,
    pub key: Option<String>,
    pub root: Option<String>,
    pub balance: Option<String>,
    pub customer: Option<String>,
    pub ledger: Option<String>,
    pub liabilities: Option<String>,
    pub state: Option<String>,
    pub policy: Option<String>,
    pub max_age: Option<u64>,
    pub now: Option<u64>,
    pub item: Option<String>,
    pub out: Option<String>,
    pub allow_unpinned: bool,
    pub json: bool,
}

pub fn parse_args(raw: &[String]) -> Result<Args, String> {
    let mut it = raw.iter();
    let command = it.next().ok_or("no command given")?.clone();
    let mut args = Args {
        command,
        files: Vec::new(),
        key: None,
        root: None,
        balance: None,
        customer: None,
        ledger: None,
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
            "--customer" => {
                args.customer = Some(it.next().ok_or("--customer needs a value")?.clone());
            }
            "--ledger" => args.ledger = Some(it.next().ok_or("--ledger needs a value")?.clone()),
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

pub fn read(path: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{path}: {e}"))?;
    if meta.len() > FILE_BYTES_MAX {
        return Err(format!("{path}: larger than {FILE_BYTES_MAX} bytes"));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

pub fn files<const N: usize>(args: &Args) -> Result<[String; N], String> {
    let texts = args
        .files
        .iter()
        .map(|f| read(f))
        .collect::<Result<Vec<_>, _>>()?;
    texts
        .try_into()
        .map_err(|v: Vec<String>| format!("{} expects {N} file(s), got {}", args.command, v.len()))
}

pub fn required_key(args: &Args) -> Result<&str, String> {
    args.key
        .as_deref()
        .ok_or_else(|| format!("{} needs --key <verifierKey>", args.command))
}

/// The `--policy` file, read.
pub fn read_policy(args: &Args) -> Result<Option<Policy>, String> {
    args.policy
        .as_deref()
        .map(|path| Policy::parse(&read(path)?).map_err(|e| format!("{path}: {e}")))
        .transpose()
}

/// The bound for checking a log's latest head now (`head`, `monitor`).
pub fn latest(args: &Args) -> Result<Freshness, String> {
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
