// Cloudflare Workers entry: Workers refuse to compile WebAssembly from
// bytes at run time, so the verifier ships as a module import that wrangler
// bundles as a compiled WebAssembly.Module.
// @ts-ignore: the glue is built into verifier/ (scripts/build-sdks.sh).
import * as glue from "../verifier/bvs_verifier_wasm.js";
import verifierModule from "../verifier/bvs_verifier_wasm_bg.wasm";
import { setVerifierModule } from "./receipts.js";

setVerifierModule(verifierModule, glue);

export * from "./index.js";
