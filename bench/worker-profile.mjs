// A CPU profile of the Worker isolate of a running `wrangler dev`, taken
// through the inspector it opens (`--inspector-port`; the black-box harness
// and the benchmarks pass one, see `ps` for the port):
//   node bench/worker-profile.mjs <inspectorPort> <seconds> <out.cpuprofile>
// prints the isolate's busy time (`busy_ms=`, the samples not idle) and
// each function's inclusive share of the samples (the top 40), and
// writes the profile, which Chrome's DevTools opens. bench/README.md
// ("Where the intake's CPU went") shows one, taken during the intake phase.
import { writeFileSync } from "node:fs";
import WebSocket from "ws";

const [port, secs, out] = process.argv.slice(2);
if (!port || !secs || !out) {
  console.error("usage: node bench/worker-profile.mjs <inspectorPort> <seconds> <out.cpuprofile>");
  process.exit(2);
}
const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
const ws = new WebSocket(targets[0].webSocketDebuggerUrl, { headers: { origin: `http://127.0.0.1:${port}` } });
const pending = new Map();
let next = 0;
ws.on("message", (data) => {
  const msg = JSON.parse(data);
  pending.get(msg.id)?.(msg);
  pending.delete(msg.id);
});
const send = (method, params = {}) =>
  new Promise((resolve) => {
    const id = ++next;
    pending.set(id, resolve);
    ws.send(JSON.stringify({ id, method, params }));
  });
await new Promise((resolve, reject) => ws.on("open", resolve).on("error", reject));
await send("Profiler.enable");
await send("Profiler.setSamplingInterval", { interval: 200 });
await send("Profiler.start");
await new Promise((resolve) => setTimeout(resolve, Number(secs) * 1000));
const { profile } = (await send("Profiler.stop")).result;
writeFileSync(out, JSON.stringify(profile));
ws.close();

const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const inclusive = new Map();
for (const sample of profile.samples) {
  const seen = new Set();
  for (let id = sample; id !== undefined; id = parent.get(id)) {
    const name = (byId.get(id).callFrame.functionName || "(anonymous)").replace(/::h[0-9a-f]{16}$/, "");
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + 1);
  }
}
const total = profile.samples.length;
// The isolate's busy time: each sample stands for the interval before the
// next one; "(idle)" samples are time it waited.
let busyUs = 0;
let allUs = 0;
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i + 1] ?? 0;
  allUs += us;
  if (byId.get(id).callFrame.functionName !== "(idle)") busyUs += us;
});
console.log(`busy_ms=${(busyUs / 1000).toFixed(1)} of_ms=${(allUs / 1000).toFixed(1)}`);
for (const [name, n] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${name.slice(0, 140)}`);
}
