// The shapes the pages read from the API (docs/proofs-api.md,
// docs/agreement.md). Amounts are kept as their exact JSON text (see
// `parseExact` in verify.ts and `exact` in agree.ts), never as floats.

/** One check of a report, as the verifier returns it. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** A title of its own, when the check's name does not say enough. */
  title?: string;
}

/** A verifier report `{ok, checks}`. */
export interface Report {
  ok: boolean;
  checks: Check[];
}

/** A customer's signed statement, as the public answer lists it. */
export interface StatementView {
  kind: string;
  statement: string;
  recordedAt: string;
  itemHash: string;
  counterpartyKey?: string;
}

/** The agreement side of a committed single-customer checkpoint. */
export interface Agreement {
  origin: string;
  ledgerId: string;
  period: string;
  merkleRoot: string;
  deltaCount: number;
  balance: string;
  balanceStatement: string;
  counterpartyKey: string | null;
  keyStatement: string | null;
  statements: StatementView[];
  /** Every key of the ledger, oldest first (the last is counterpartyKey). */
  keys?: KeyBinding[];
  /** One line per key change the previous key did not sign. */
  keyWarnings?: string[];
}

/** One key binding of a ledger, as the public answer lists it. */
export interface KeyBinding {
  counterpartyKey: string;
  keyStatement: string;
  registeredAt: string;
  signedByPrevious: boolean | null;
}

/** A record of a public answer. */
export interface PublicRecord {
  anchorId: string;
  /** Absent when the answer withholds amounts (`summary.amountsWithheld`). */
  itemHash?: string;
  /** Only when amounts are withheld: the record's leaf in the log (issue 40). */
  logLeafHash?: string;
  /** Absent when the answer withholds amounts (`summary.amountsWithheld`). */
  delta?: string;
  leafIndex?: number | null;
  declaredTimestamp?: string;
  blockTimestamp?: string | null;
}

export interface Summary {
  kind?: string;
  environment?: string;
  proofRoot?: string;
  itemCount?: number;
  netAmount?: string;
  period?: string | null;
  status?: string;
  firstVerifiedAt?: string | null;
  lastVerifiedAt?: string | null;
  /** Every kind of object the root names, the one shown first. */
  issuedAs?: string[];
  /** The root spans several ledgers: no amount or ledger is shown. */
  amountsWithheld?: boolean;
  /** A checkpoint's: `passed`, `failed` or `pending`. */
  recordsCheck?: string;
}

/** `GET /api/v1/verify/{root}` data. */
export interface PublicAnswer {
  summary?: Summary;
  records?: PublicRecord[];
  verification?: {
    treeHead?: string;
    hashScheme?: string;
    publicKey?: string;
    log?: { name?: string };
  };
  agreement?: Agreement;
}

/** A receipt, as far as the page shows it (the verifier reads it whole). */
export interface ReceiptDoc {
  customerId?: string;
  period?: string | null;
  deltasCount?: number;
  deltaCount?: number;
  startingBalance?: string;
  finalBalance?: string;
  generatedAt?: string;
  receiptId?: string;
  proof?: { treeHead?: string; hashScheme?: string; publicKey?: string };
  verification?: { publicKey?: string };
  summary?: Summary;
  records?: PublicRecord[];
}

/** The element with this id; the pages are written with every id they use. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page has no #${id}`);
  return e as T;
}

/** The message of anything thrown. */
export const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
