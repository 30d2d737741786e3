// Runs the SDK inside a Worker: a receipt fetched and verified with the
// service's WebAssembly verifier (shipped as a module import by
// "@bvs/sdk/workers"), and a webhook delivery verified on WebCrypto.
import { Client, verifyWebhook } from "../../dist/workers.js";

async function outcome(p) {
  try {
    await p;
    return true;
  } catch (e) {
    return e.reason ?? String(e);
  }
}

export default {
  async fetch(request) {
    try {
      return await handle(request);
    } catch (e) {
      return Response.json({ error: String(e), stack: e.stack }, { status: 500 });
    }
  },
};

async function handle(request) {
    const url = new URL(request.url);
    const q = url.searchParams;
    if (url.pathname === "/health") return new Response("ok");
    if (url.pathname === "/receipt") {
      const client = new Client({ baseUrl: q.get("base"), apiKey: q.get("apiKey") });
      const receipt = await client.receipts.get(q.get("customer"), { period: q.get("period") });
      const report = await client.receipts.verify(receipt, { key: q.get("key") });
      const forged = JSON.stringify(receipt).replace('"finalBalance":95.75', '"finalBalance":96.75');
      const forgedReport = await client.receipts.verify(forged, { key: q.get("key") });
      return Response.json({ ...report, forgedOk: forgedReport.ok });
    }
    if (url.pathname === "/webhook") {
      const body = await request.text();
      return Response.json({
        v1: await outcome(verifyWebhook(body, request.headers, { secret: q.get("secret") })),
        v1a: await outcome(verifyWebhook(body, request.headers, { publicKey: q.get("publicKey") })),
      });
    }
    return new Response("not found", { status: 404 });
}
