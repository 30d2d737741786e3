// src/schema.d.ts is generated from the service's OpenAPI document by
// openapi-typescript and checked in: it must equal what the generator
// makes from worker/src/openapi.json now (regenerate: npm run generate).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import openapiTS, { astToString } from "openapi-typescript";

test("src/schema.d.ts equals openapi-typescript's output for worker/src/openapi.json", async () => {
  const document = new URL("../../../worker/src/openapi.json", import.meta.url);
  const generated = astToString(await openapiTS(document));
  const checkedIn = readFileSync(new URL("../src/schema.d.ts", import.meta.url), "utf8");
  const body = (text) => text.slice(text.indexOf("export interface paths"));
  assert.equal(body(checkedIn), body(generated), "src/schema.d.ts is stale: run `npm run generate` in sdk/typescript");
});
