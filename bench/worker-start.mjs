// The Worker's start (issue 42): what an isolate does before its first
// request — V8 compiles the Worker's wasm and instantiates it (the
// top-level `new WebAssembly.Instance` of worker/build/index.js) — timed
// in Node 22's V8, the engine workerd embeds. Imports are stubs: the start
// measured is the module's compile and instantiation, not the bindings.
// Usage: node bench/worker-start.mjs worker/build/index_bg.wasm [runs]
import { readFileSync } from "node:fs";

const [path, runsArg] = process.argv.slice(2);
const bytes = readFileSync(path);
const runs = Number(runsArg ?? 7);

function stubs(module) {
  const imports = {};
  for (const { module: from, name, kind } of WebAssembly.Module.imports(module)) {
    imports[from] ??= {};
    if (kind === "function") imports[from][name] = () => {};
    else if (kind === "tag") imports[from][name] = WebAssembly.JSTag;
    else if (kind === "table") imports[from][name] = new WebAssembly.Table({ initial: 0, element: "externref" });
    else if (kind === "memory") imports[from][name] = new WebAssembly.Memory({ initial: 1 });
    else if (kind === "global") imports[from][name] = new WebAssembly.Global({ value: "i32", mutable: true }, 0);
  }
  return imports;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const compile = [];
const instantiate = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const module = new WebAssembly.Module(bytes);
  const t1 = performance.now();
  new WebAssembly.Instance(module, stubs(module));
  const t2 = performance.now();
  compile.push(t1 - t0);
  instantiate.push(t2 - t1);
}
console.log(
  JSON.stringify({
    wasmBytes: bytes.length,
    runs,
    compileMsMedian: Number(median(compile).toFixed(1)),
    instantiateMsMedian: Number(median(instantiate).toFixed(1)),
    startMsMedian: Number(median(compile.map((c, i) => c + instantiate[i])).toFixed(1)),
  }),
);
