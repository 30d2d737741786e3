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
