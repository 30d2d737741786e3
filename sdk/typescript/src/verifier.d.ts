// The verifier as a module import (scripts/build-sdks.sh copies it into
// verifier/); wrangler bundles a .wasm import as a WebAssembly.Module.
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
