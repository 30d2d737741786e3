// The answers' and inputs' shapes of the API, named: aliases of the
// OpenAPI schemas (src/schema.d.ts, generated from worker/src/openapi.json).
// Types only; the vendor dashboard (dashboard/src/api.ts) names its shapes
// from here too, so the contract has one source.
import type { components } from "./schema.js";

type S = components["schemas"];
export type DeltaInput = S["DeltaInput"];
export type EmitRecord = S["EmitRecord"];
export type Batch = S["Batch"];
export type DeltaStatus = S["DeltaStatus"];
export type DeltaObject = S["DeltaObject"];
export type Derivation = S["Derivation"];
export type CompareInput = S["CompareInput"];
export type Comparison = S["Comparison"];
export type Customer = S["Customer"];
export type CustomerDetail = S["CustomerDetail"];
export type FactInput = S["FactInput"];
export type FactQueued = S["FactQueued"];
export type Fact = S["Fact"];
export type FactVerification = S["FactVerification"];
export type CheckpointInput = S["CheckpointInput"];
export type Checkpoint = S["Checkpoint"];
export type ListedCheckpoint = S["ListedCheckpoint"];
export type Receipt = S["Receipt"];
export type Invitation = S["Invitation"];
export type AgreementStatement = S["AgreementStatement"];
export type Delivery = S["Delivery"];
export type WebhookKey = S["WebhookKey"];
export type LoggedIn = S["LoggedIn"];
export type Profile = S["Profile"];
export type Contract = S["Contract"];
export type ApiKey = S["ApiKey"];
export type CreatedApiKey = S["CreatedApiKey"];
export type CreatedWebhook = S["CreatedWebhook"];
export type RotatedWebhookSecret = S["RotatedWebhookSecret"];
export type WebhookTest = S["WebhookTest"];
export type DeliveryAttempt = S["DeliveryAttempt"];
export type Pagination = S["Pagination"];
export type WindowSummary = S["WindowSummary"];
export type Usage = S["Usage"];
export type RequestLogEntry = S["RequestLogEntry"];
export type RequestLogPage = S["RequestLogPage"];
export type EventDelivery = S["EventDelivery"];
export type LoggedEvent = S["LoggedEvent"];
export type Resent = S["Resent"];
export type WitnessStatus = S["WitnessStatus"];
export type LogWitnesses = S["LogWitnesses"];
export type DailyUsage = S["DailyUsage"];
export type Webhook = S["Webhook"];
/** A liabilities statement's progress and, once built, what it states (issue 31). */
export type LiabilitiesStatement = S["LiabilitiesStatement"];

// A customer's liabilities proof (docs/liabilities.md §8), written out here:
// the OpenAPI schema leaves its inner objects open. Amounts outside the
// statement are JSON numbers; the verifier reads them from the answer's
// exact text, never through these parsed values.

/** One tree of a statement: its root, total (canonical decimal text) and leaf count. */
export interface LiabilitiesTree {
  root: string;
  total: string;
  leafCount: number;
}

/** The statement as logged and hashed (docs/liabilities.md §1). */
export interface LiabilitiesProofStatement {
  scheme: "bvs-liabilities-v1";
  tenantId: string;
  environment: "sandbox" | "production";
  period: string;
  liabilities: LiabilitiesTree;
  receivables: LiabilitiesTree;
  supersedes: string | null;
}

/** A customer's leaf in one tree and its siblings, leaf side first. */
export interface LiabilitiesLeafProof {
  leafIndex: number;
  salt: string;
  amount: number;
  path: { hash: string; sum: number }[];
}

/** A customer's proof that its balance is counted in a statement. */
export interface LiabilitiesProof {
  scheme: "bvs-liabilities-v1";
  statement: LiabilitiesProofStatement;
  statementHash: string;
  customer: { customerId: string | null; ledgerId: string; balance: number };
  liabilities: LiabilitiesLeafProof;
  /** For a negative balance; else null. */
  receivables: LiabilitiesLeafProof | null;
  /** The statement in the signed log. */
  log: { hashScheme: string; leafIndex: number; inclusionProof: string[]; treeHead: string; publicKey: string };
}
