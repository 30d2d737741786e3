// Issue 43: the TypeScript SDK checks a balance as of a moment with core's
// verifier (verifyAsOf), and fails a tampered one. Run by
// tests/tests/as_of.rs with BVS_LOG_KEY, BVS_AS_OF_FILE and
// BVS_AS_OF_TAMPERED set.
import { readFileSync } from "node:fs";
import { verifyAsOf } from "../dist/index.js";

const key = process.env.BVS_LOG_KEY;
const good = await verifyAsOf(readFileSync(process.env.BVS_AS_OF_FILE, "utf8"), { key });
if (!good.ok) throw new Error(`the as-of answer failed: ${JSON.stringify(good.checks.filter((c) => !c.ok))}`);
const bad = await verifyAsOf(readFileSync(process.env.BVS_AS_OF_TAMPERED, "utf8"), { key });
if (bad.ok) throw new Error("a tampered as-of answer passed");
console.log("sdk ok", good.checks.length, "checks");
