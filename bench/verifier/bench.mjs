// Benchmark (not a test): inclusion proofs verified per second in Node by
// the WASM verifiers against merkletreejs with Node's crypto SHA-256, on
// the same proofs of a 1,000,000-leaf RFC 9162 tree: the served verifier
// (public/pkg, built for size: SHA-256 as a loop) and the proof-only
// build (target/verifier-proof-only, unrolled SHA-256, also the one that
// exports the page API verifyInclusion); and the gzipped size of wasm + JS
// glue, measured as scripts/build-verifier.sh enforces it: GNU gzip -9 -n.
//
//   scripts/build-verifier.sh && scripts/build-verifier.sh --proof-only
//   node bench/verifier/bench.mjs [leaves=1000000] [proofs=20000]
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MerkleTree } from "merkletreejs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const LEAVES = Number(process.argv[2] ?? 1_000_000);
const PROOFS = Number(process.argv[3] ?? 20_000);
const ROUNDS = 7; // median of these, after one warm-up round

const sha256 = (...parts) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest();
};
const LEAF = Buffer.from([0x00]);
const NODE = Buffer.from([0x01]);
// The log's hash scheme (docs/hashes.md): leaf data is this tag || item.
const SCHEME = "bvs-log-v1";
const TAG = Buffer.from(SCHEME, "ascii");

// RFC 9162 over the log's leaf data: leaf = H(0x00 || "bvs-log-v1" || item),
// node = H(0x01 || left || right). merkletreejs gets the leaf hashes as its
// leaves and the node rule as its hash function; it promotes an odd last
// node unchanged, which is RFC 9162's tree.
const items = [];
const leaves = [];
for (let i = 0; i < LEAVES; i++) {
  const n = Buffer.alloc(8);
  n.writeBigUInt64BE(BigInt(i));
  const item = sha256(n);
  items.push(item);
  leaves.push(sha256(LEAF, TAG, item));
}
let t = performance.now();
const tree = new MerkleTree(leaves, (buf) => sha256(NODE, buf));
const buildMs = performance.now() - t;
const root = tree.getRoot();

// The same random leaves for both (a fixed LCG, so runs are comparable).
let seed = 42;
const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
const picks = Array.from({ length: PROOFS }, () => next() % LEAVES);
const mtProofs = picks.map((i) => tree.getProof(leaves[i], i));
const hexProofs = mtProofs.map((p) => p.map((n) => n.data.toString("hex")));
// The API's inclusionProof field, as JSON text (what verifyInclusion takes).
const jsonProofs = hexProofs.map((p) => JSON.stringify(p));
const itemHex = picks.map((i) => items[i].toString("hex"));
const rootHex = root.toString("hex");
// The same proofs as raw bytes, for verifyInclusionBytes (the fast path):
// the path's hashes concatenated, leaf side first.
const bytesProofs = mtProofs.map((p) => new Uint8Array(Buffer.concat(p.map((n) => n.data))));
const itemBytes = picks.map((i) => new Uint8Array(items[i]));
const rootBytes = new Uint8Array(root);
const pathLen = hexProofs.reduce((a, p) => a + p.length, 0) / PROOFS;

async function loadVerifier(dir) {
  const glue = join(ROOT, dir, "bvs_verifier_wasm.js");
  const wasm = readFileSync(join(ROOT, dir, "bvs_verifier_wasm_bg.wasm"));
  const mod = await import(glue);
  mod.initSync({ module: wasm });
  return { mod, wasm, js: readFileSync(glue) };
}
const full = await loadVerifier("public/pkg");
let proofOnly;
try {
  proofOnly = await loadVerifier("target/verifier-proof-only");
} catch {
  throw new Error("run scripts/build-verifier.sh --proof-only first");
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const runMerkletreejs = () => {
  for (let k = 0; k < PROOFS; k++) {
    if (!tree.verify(mtProofs[k], leaves[picks[k]], root)) throw new Error(`merkletreejs rejected proof ${k}`);
  }
};
const runWasm = () => {
  for (let k = 0; k < PROOFS; k++) {
    const r = proofOnly.mod.verifyInclusion(itemHex[k], picks[k], LEAVES, rootHex, jsonProofs[k], SCHEME);
    if (!r.startsWith('{"ok":true')) throw new Error(`wasm rejected proof ${k}: ${r}`);
  }
};
const bytesRun = (m) => () => {
  for (let k = 0; k < PROOFS; k++) {
    if (!m.verifyInclusionBytes(picks[k], LEAVES, rootBytes, itemBytes[k], bytesProofs[k], SCHEME)) throw new Error(`wasm (bytes) rejected proof ${k}`);
  }
};
const runWasmBytes = bytesRun(full.mod);
const runProofOnlyBytes = bytesRun(proofOnly.mod);
// Rounds alternate between them, so a busy machine slows all alike;
// the first round of each is a warm-up (and the correctness check).
const ms = { mt: [], wasm: [], bytes: [], pbytes: [] };
for (let r = 0; r <= ROUNDS; r++) {
  for (const [k, fn] of [["mt", runMerkletreejs], ["wasm", runWasm], ["bytes", runWasmBytes], ["pbytes", runProofOnlyBytes]]) {
    const t0 = performance.now();
    fn();
    if (r > 0) ms[k].push(performance.now() - t0);
  }
}
const mtRate = PROOFS / (median(ms.mt) / 1000);
const wasmRate = PROOFS / (median(ms.wasm) / 1000);
const bytesRate = PROOFS / (median(ms.bytes) / 1000);
const pbytesRate = PROOFS / (median(ms.pbytes) / 1000);
const pbytesRatios = ms.mt.map((m, i) => m / ms.pbytes[i]);
const ratios = ms.mt.map((m, i) => m / ms.wasm[i]);
const bytesRatios = ms.mt.map((m, i) => m / ms.bytes[i]);
// A tampered proof must fail in both (one flipped hash).
const bad = [...hexProofs[0]];
bad[0] = (bad[0][0] === "0" ? "1" : "0") + bad[0].slice(1);
if (proofOnly.mod.verifyInclusion(itemHex[0], picks[0], LEAVES, rootHex, JSON.stringify(bad), SCHEME).startsWith('{"ok":true')) throw new Error("wasm accepted a tampered proof");
const badBytes = new Uint8Array(bytesProofs[0]);
badBytes[0] ^= 1;
if (full.mod.verifyInclusionBytes(picks[0], LEAVES, rootBytes, itemBytes[0], badBytes, SCHEME)) throw new Error("wasm (bytes) accepted a tampered proof");
if (full.mod.verifyInclusionBytes(picks[0] ^ 1, LEAVES, rootBytes, itemBytes[0], bytesProofs[0], SCHEME)) throw new Error("wasm (bytes) accepted a proof at the wrong index");

const gz = (b) => execFileSync("gzip", ["-9", "-n"], { input: b }).length;
const kb = (n) => (n / 1024).toFixed(1);
console.log(`\n${LEAVES} leaves (merkletreejs build ${(buildMs / 1000).toFixed(1)} s), ${PROOFS} proofs, mean path ${pathLen.toFixed(1)} hashes, median of ${ROUNDS} rounds, Node ${process.version}\n`);
console.log("| verifier | proofs/s | vs merkletreejs |");
console.log("|---|---:|---:|");
console.log(`| merkletreejs 0.6.0 (Node crypto) | ${Math.round(mtRate)} | 1.00× |`);
console.log(`| proof-only \`verifyInclusionBytes\` (bytes in, bool out) | ${Math.round(pbytesRate)} | ${(pbytesRate / mtRate).toFixed(2)}× (per round: ${pbytesRatios.map((x) => x.toFixed(1)).join(", ")}) |`);
console.log(`| served (public/pkg) \`verifyInclusionBytes\` | ${Math.round(bytesRate)} | ${(bytesRate / mtRate).toFixed(2)}× (per round: ${bytesRatios.map((x) => x.toFixed(1)).join(", ")}) |`);
console.log(`| proof-only \`verifyInclusion\` (hex + JSON in, JSON report out) | ${Math.round(wasmRate)} | ${(wasmRate / mtRate).toFixed(2)}× (per round: ${ratios.map((x) => x.toFixed(1)).join(", ")}) |`);
console.log("\n| build | wasm (gzip -9 -n) | JS glue (gzip -9 -n) | total gzipped |");
console.log("|---|---:|---:|---:|");
const row = (name, v) => console.log(`| ${name} | ${kb(v.wasm.length)} KB (${kb(gz(v.wasm))} KB) | ${kb(v.js.length)} KB (${kb(gz(v.js))} KB) | **${gz(v.wasm) + gz(v.js)} B** (${kb(gz(v.wasm) + gz(v.js))} KB) |`);
row("full, served (receipts, answers, signed heads, cosignatures)", full);
row("proof-only (`--no-default-features`)", proofOnly);
