// Customers: the ledger list, a customer's deltas (paginated, verified or
// not, with links to their public verify page), window summaries, recording
// a delta in Sandbox, checkpoints and the receipt.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import {
  type Amount,
  ApiError,
  type BalanceHistory,
  call,
  type Checkpoint,
  type Customer,
  type Derivation,
  type EmitRecord,
  type EnvName,
  ENV_LABEL,
  type Pagination,
  type Receipt,
} from "../api";
import { Chart, seconds } from "../charts";
import { Link, navigate } from "../router";
import { useSession } from "../session";
import { Button, Empty, ErrorBox, Field, Loading, Notice, PageTitle, Select, short, Table, useAction, useAsync, usePoll, when } from "../ui";

const PAGE = 20;
const CUSTOMER_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const AMOUNT = /^-?\d{1,10}(\.\d{1,18})?$/;

function thisMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

/** The ledger pages need an API key of the environment shown. */
function KeyGate({ children }: { children: (key: string, env: EnvName) => ComponentChildren }) {
  const s = useSession();
  const key = s.keys[s.env];
  if (!key)
    return (
      <div class="box info" role="note" data-needs-key>
        <p>
          <strong>These pages need a {ENV_LABEL[s.env]} API key.</strong> Customer ledgers live behind the balance API,
          which takes an API key rather than your login.
        </p>
        <p>
          <Link href="/app/keys">Create a {ENV_LABEL[s.env]} key</Link> (this tab then uses it here), or paste one you saved on
          the same page.
        </p>
      </div>
    );
  return <>{children(key, s.env)}</>;
}

function Pager({ p, onOffset }: { p: Pagination; onOffset: (o: number) => void }) {
  if (p.total <= p.limit) return null;
  const page = Math.floor(p.offset / p.limit) + 1;
  const pages = Math.max(1, Math.ceil(p.total / p.limit));
  return (
    <nav class="pager" aria-label="Pages">
      <Button disabled={p.offset === 0} onClick={() => onOffset(Math.max(0, p.offset - p.limit))}>
        ← Newer
      </Button>
      <span>
        Page {page} of {pages} ({p.total})
      </span>
      <Button disabled={p.offset + p.limit >= p.total} onClick={() => onOffset(p.offset + p.limit)}>
        Older →
      </Button>
    </nav>
  );
}

export function Customers() {
  return (
    <section>
      <PageTitle title="Customers">Customers</PageTitle>
      <KeyGate>{(key, env) => <CustomerList apiKey={key} env={env} />}</KeyGate>
    </section>
  );
}

function CustomerList({ apiKey, env }: { apiKey: string; env: EnvName }) {
  const [offset, setOffset] = useState(0);
  const [typed, setTyped] = useState("");
  const [prefix, setPrefix] = useState("");
  const [prefixError, setPrefixError] = useState<unknown>(null);
  const list = useAsync(
    async () =>
      (
        await call<{ customers: Customer[]; pagination: Pagination }>("GET", "/api/v1/balance/customers", {
          apiKey,
          query: { limit: PAGE, offset, prefix },
        })
      ).data,
    [apiKey, offset, prefix],
  );
  const find = (e: Event) => {
    e.preventDefault();
    const p = typed.trim();
    if (p && !CUSTOMER_ID.test(p)) {
      setPrefixError(new Error("A customer id holds only letters, digits and _ . : - (up to 128)."));
      return;
    }
    setPrefixError(null);
    setOffset(0);
    setPrefix(p);
  };
  return (
    <>
      <p class="lede">
        Each customer id gets its own ledger on its first delta. {ENV_LABEL[env]} ledgers, newest activity first.
      </p>
      {env === "sandbox" && (
        <RecordDelta apiKey={apiKey} onRecorded={(r) => navigate(`/app/customers/${encodeURIComponent(r.customerId)}`)} />
      )}
      <h2>Ledgers</h2>
      <form class="inline-form" role="search" aria-label="Find customers" onSubmit={find}>
        <Field
          label="Customer id starts with"
          name="prefix"
          value={typed}
          onValue={setTyped}
          placeholder="cus_"
          maxLength={128}
        />
        <Button type="submit">Find</Button>
        {prefix && (
          <Button
            kind="link"
            onClick={() => {
              setTyped("");
              setPrefix("");
              setOffset(0);
            }}
          >
            Show all
          </Button>
        )}
      </form>
      <ErrorBox error={prefixError} />
      {list.data && prefix && (
        <p role="status" data-found={list.data.pagination.total}>
          {list.data.pagination.total} customer{list.data.pagination.total === 1 ? "" : "s"} whose id starts with{" "}
          <code>{prefix}</code>.
        </p>
      )}
      {list.loading && !list.data && <Loading what="Loading ledgers" />}
      <ErrorBox error={list.error} />
      {list.data && list.data.customers.length === 0 && prefix && <Empty>No customer id starts with {prefix}.</Empty>}
      {list.data && list.data.customers.length === 0 && !prefix && (
        <Empty>No customers yet. {env === "sandbox" ? "Record a delta above to create the first ledger." : "Record deltas with a Production key from your code."}</Empty>
      )}
      {list.data && list.data.customers.length > 0 && (
        <>
          <Table label="Ledgers" class="stack" columns={["Customer", { title: "Balance", num: true }, { title: "Deltas", num: true }, "Last activity"]}>
                {list.data.customers.map((c) => (
                  <tr key={c.customerId} data-customer={c.customerId}>
                    <th scope="row">
                      <Link href={`/app/customers/${encodeURIComponent(c.customerId)}`}>{c.customerId}</Link>
                    </th>
                    <td class="num" data-label="Balance">{c.computedBalance}</td>
                    <td class="num" data-label="Deltas">{c.totalDeltas}</td>
                    <td data-label="Last activity">{when(c.lastActivityAt)}</td>
                  </tr>
                ))}
          </Table>
          <Pager p={list.data.pagination} onOffset={setOffset} />
        </>
      )}
    </>
  );
}

/** Sandbox only: one delta through POST /api/v1/balance/delta. */
function RecordDelta({
  apiKey,
  customerId: fixed,
  onRecorded,
}: {
  apiKey: string;
  customerId?: string;
  onRecorded: (r: EmitRecord) => void;
}) {
  const [customerId, setCustomerId] = useState(fixed ?? "");
  const [delta, setDelta] = useState("");
  const [reason, setReason] = useState("");
  const [referenceId, setReferenceId] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setDone(null);
    const amount = delta.trim();
    const problems: string[] = [];
    if (!CUSTOMER_ID.test(customerId)) problems.push("customer id: 1 to 128 letters, digits, _ . : -");
    if (!AMOUNT.test(amount)) problems.push("amount: a number such as 12.50 or -3 (up to 18 decimals)");
    if (problems.length) {
      setError(new Error(`Check the ${problems.join("; ")}.`));
      return;
    }
    setBusy(true);
    try {
      // Built by hand so the amount travels as typed: an exact decimal,
      // never rounded through a JS number.
      const body = `{"customerId":${JSON.stringify(customerId)},"delta":${amount},"reason":${JSON.stringify(reason)}${
        referenceId.trim() ? `,"referenceId":${JSON.stringify(referenceId.trim())}` : ""
      }}`;
      const r = await call<EmitRecord>("POST", "/api/v1/balance/delta", { apiKey, body });
      setDone(`Recorded ${r.data.delta} for ${r.data.customerId}: ${r.data.status}. It turns verified within seconds.`);
      setDelta("");
      setReason("");
      setReferenceId("");
      onRecorded(r.data);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="record-title">
      <h2 id="record-title">Record a delta (Sandbox)</h2>
      <div class="row3">
        {!fixed && <Field label="Customer id" name="customerId" required value={customerId} onValue={setCustomerId} placeholder="cus_42" />}
        <Field
          label="Amount"
          name="delta"
          required
          inputMode="decimal"
          value={delta}
          onValue={setDelta}
          hint="Positive adds to the balance, negative takes away."
        />
        <Field label="Reason" name="reason" required value={reason} onValue={setReason} maxLength={500} placeholder="invoice 17" />
        <Field label="Reference id (optional)" name="referenceId" value={referenceId} onValue={setReferenceId} />
      </div>
      <ErrorBox error={error}>
        {error instanceof ApiError && error.status === 402 ? (
          <p>This month's quota of your plan is spent. It resets on the first day of next month (UTC).</p>
        ) : null}
      </ErrorBox>
      {done && <Notice>{done}</Notice>}
      <Button kind="primary" type="submit" busy={busy}>
        Record delta
      </Button>
    </form>
  );
}

export function CustomerPage({ id }: { id: string }) {
  return (
    <section>
      <p>
        <Link href="/app/customers">← Customers</Link>
      </p>
      <PageTitle title={`Customer ${id}`}>
        Customer <code>{id}</code>
      </PageTitle>
      <KeyGate>{(key, env) => <CustomerBody id={id} apiKey={key} env={env} />}</KeyGate>
    </section>
  );
}

function CustomerBody({ id, apiKey, env }: { id: string; apiKey: string; env: EnvName }) {
  const path = encodeURIComponent(id);
  const [offset, setOffset] = useState(0);
  const detail = useAsync(async () => (await call<Customer>("GET", `/api/v1/balance/customers/${path}`, { apiKey })).data, [apiKey, id]);
  const derive = useAsync(
    async () => (await call<Derivation>("GET", `/api/v1/balance/derive/${path}`, { apiKey, query: { limit: PAGE, offset } })).data,
    [apiKey, id, offset],
  );
  const checkpoints = useAsync(
    async () =>
      (await call<{ checkpoints: Checkpoint[] }>("GET", "/api/v1/balance/checkpoints", { apiKey, query: { customerId: id, limit: 20 } }))
        .data.checkpoints,
    [apiKey, id],
  );
  const pending = (detail.data?.pendingDeltas ?? 0) > 0;
  const queuedCheckpoint = !!checkpoints.data?.some((c) => c.status === "QUEUED");
  // Verification takes seconds: refresh while something is pending, for at
  // most two minutes.
  usePoll(pending, 2000, 60, () => {
    void detail.reload();
    void derive.reload();
  });
  usePoll(queuedCheckpoint, 2000, 60, () => void checkpoints.reload());
  const refreshAll = () => {
    void detail.reload();
    void derive.reload();
    void checkpoints.reload();
  };
  const notFound = detail.error instanceof ApiError && detail.error.status === 404;
  return (
    <>
      {detail.loading && !detail.data && <Loading what="Loading the ledger" />}
      {notFound ? (
        <Empty>
          No ledger for this customer id in {ENV_LABEL[env]} yet.{" "}
          {env === "sandbox" ? "Record a delta below to create it." : ""}
        </Empty>
      ) : (
        <ErrorBox error={detail.error} />
      )}
      {detail.data && (
        <dl class="facts big" data-balance={detail.data.computedBalance}>
          <dt>Balance (verified deltas)</dt>
          <dd class="balance">{detail.data.computedBalance}</dd>
          <dt>Verified deltas</dt>
          <dd>{detail.data.totalDeltas}</dd>
          <dt>Waiting for verification</dt>
          <dd data-pending={detail.data.pendingDeltas ?? 0}>
            {detail.data.pendingDeltas ?? 0}
            {pending && <span class="hint"> (refreshing…)</span>}
          </dd>
          <dt>First / last activity</dt>
          <dd>
            {when(detail.data.firstActivityAt)} / {when(detail.data.lastActivityAt)}
          </dd>
        </dl>
      )}
      {detail.data && detail.data.totalDeltas > 0 && (
        <BalanceChart apiKey={apiKey} id={id} verified={detail.data.totalDeltas} />
      )}
      {env === "sandbox" && <RecordDelta apiKey={apiKey} customerId={id} onRecorded={refreshAll} />}
      <h2>Deltas</h2>
      <ErrorBox error={notFound ? null : derive.error} />
      {derive.loading && !derive.data && <Loading what="Loading deltas" />}
      {derive.data && derive.data.deltas.length === 0 && <Empty>No verified deltas yet.</Empty>}
      {derive.data && derive.data.deltas.length > 0 && (
        <>
          <Table label="Deltas" id="deltas" class="stack" columns={[{ title: "Amount", num: true }, "Reason", "Status", "Window", "Verified at", "Proof"]}>
                {derive.data.deltas.map((d) => (
                  <tr key={d.anchorId} data-anchor={d.anchorId} data-verified={String(d.verified)}>
                    <td class="num" data-label="Amount">{d.delta}</td>
                    <td data-label="Reason">{d.dataPurged ? <span class="hint">removed by retention</span> : d.reason}</td>
                    <td data-label="Status">{d.verified ? <span class="badge pass">✔ Verified</span> : <span class="badge wait">… Queued</span>}</td>
                    <td data-label="Window">{d.window ?? "—"}</td>
                    <td data-label="Verified at">{when(d.blockTimestamp)}</td>
                    <td data-label="Proof">
                      <a href={`/verify/${d.receiptId}`} target="_blank" rel="noopener">
                        Verify <span class="sr-only">delta {d.anchorId}</span>
                        <code>{short(d.receiptId, 8)}</code>
                      </a>
                    </td>
                  </tr>
                ))}
          </Table>
          <Pager p={derive.data.pagination} onOffset={setOffset} />
        </>
      )}
      {derive.data && derive.data.windowSummaries.length > 0 && (
        <>
          <h2>Monthly windows</h2>
          <Table label="Monthly windows" class="compact" columns={["Window", { title: "Deltas", num: true }, { title: "Net", num: true }, "First verified", "Last verified"]}>
                {derive.data.windowSummaries.map((w) => (
                  <tr key={w.window}>
                    <th scope="row">{w.window}</th>
                    <td class="num">{w.deltasCount}</td>
                    <td class="num">{w.netDelta}</td>
                    <td>{when(w.firstBlockTimestamp)}</td>
                    <td>{when(w.lastBlockTimestamp)}</td>
                  </tr>
                ))}
          </Table>
        </>
      )}
      <Checkpoints
        apiKey={apiKey}
        id={id}
        list={checkpoints}
        periods={derive.data?.windowSummaries.map((w) => w.window) ?? []}
      />
      <ReceiptPanel apiKey={apiKey} id={id} periods={derive.data?.windowSummaries.map((w) => w.window) ?? []} />
    </>
  );
}

function periodOptions(periods: string[]): [string, string][] {
  const all = Array.from(new Set([thisMonth(), ...periods])).sort().reverse();
  return all.map((p) => [p, p]);
}

function Checkpoints({
  apiKey,
  id,
  list,
  periods,
}: {
  apiKey: string;
  id: string;
  list: { data: Checkpoint[] | null; error: unknown; loading: boolean; reload: () => Promise<void> };
  periods: string[];
}) {
  const [period, setPeriod] = useState(thisMonth());
  const [msg, setMsg] = useState<string | null>(null);
  const committing = useAction(list.reload);
  const { error } = committing;
  const busy = committing.busy !== null;
  const commit = () => {
    setMsg(null);
    return committing.run(async () => {
      const r = await call<Checkpoint>("POST", "/api/v1/balance/checkpoint", { apiKey, body: { customerId: id, period } });
      setMsg(r.data.message ?? `Checkpoint ${r.data.checkpointId} queued.`);
    }, true);
  };
  return (
    <div class="card">
      <h2>Checkpoints</h2>
      <p>A checkpoint locks a proof root over the verified deltas of one month.</p>
      <div class="inline-form">
        <Select label="Period" name="checkpointPeriod" value={period} onValue={setPeriod} options={periodOptions(periods)} />
        <Button kind="primary" busy={busy} onClick={commit}>
          Commit checkpoint
        </Button>
      </div>
      <ErrorBox error={error} />
      {msg && <Notice>{msg}</Notice>}
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && list.data.length === 0 && <Empty>No checkpoints for this customer yet.</Empty>}
      {list.data && list.data.length > 0 && (
        <Table label="Checkpoints" class="compact stack" id="checkpoints" columns={["Period", "Status", { title: "Deltas", num: true }, "Proof root", "Committed"]}>
              {list.data.map((c) => (
                <tr key={c.checkpointId} data-status={c.status}>
                  <th scope="row">{c.period}</th>
                  <td data-label="Status">{c.status === "COMMITTED" ? <span class="badge pass">✔ Committed</span> : <span class="badge wait">… Queued</span>}</td>
                  <td class="num" data-label="Deltas">{c.deltaCount}</td>
                  <td data-label="Proof root">
                    <a href={`/verify/${c.merkleRoot}`} target="_blank" rel="noopener">
                      <code>{short(c.merkleRoot)}</code>
                    </a>
                  </td>
                  <td data-label="Committed">{when(c.committedAt)}</td>
                </tr>
              ))}
        </Table>
      )}
    </div>
  );
}

function ReceiptPanel({ apiKey, id, periods }: { apiKey: string; id: string; periods: string[] }) {
  const [period, setPeriod] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [receipt, setReceipt] = useState<{ data: Receipt; raw: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const fetchReceipt = async () => {
    setBusy(true);
    setError(null);
    setReceipt(null);
    try {
      const r = await call<Receipt>("GET", `/api/v1/balance/receipt/${encodeURIComponent(id)}`, { apiKey, query: { period } });
      setReceipt({ data: r.data, raw: r.raw });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const download = () => {
    if (!receipt) return;
    // The bytes as the API sent them: amounts and hashes untouched.
    const url = URL.createObjectURL(new Blob([receipt.raw], { type: "application/json" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `receipt-${id}${period ? `-${period}` : ""}.json`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  const options: [string, string][] = [["", "All verified deltas"], ...periodOptions(periods)];
  return (
    <div class="card">
      <h2>Receipt</h2>
      <p>
        A receipt lists verified deltas with their proofs. Anyone can check it on its public verify page, or offline with{" "}
        <code>bvs-verify</code>. Fetch it after the period's checkpoint is committed.
      </p>
      <div class="inline-form">
        <Select label="Period" name="receiptPeriod" value={period} onValue={setPeriod} options={options} />
        <Button kind="primary" busy={busy} onClick={fetchReceipt}>
          Get receipt
        </Button>
      </div>
      <ErrorBox error={error} />
      {receipt && (
        <div class="box ok" data-receipt={receipt.data.receiptId}>
          <dl class="facts">
            <dt>Receipt id</dt>
            <dd>
              <code>{receipt.data.receiptId}</code>
            </dd>
            <dt>Deltas</dt>
            <dd>{receipt.data.deltasCount}</dd>
            <dt>Final balance</dt>
            <dd>{receipt.data.finalBalance as Amount}</dd>
          </dl>
          <div class="actions">
            <Button kind="primary" onClick={download}>
              Download JSON
            </Button>
            <a class="btn secondary" href={`/verify/${receipt.data.receiptId}`} target="_blank" rel="noopener">
              Open the verify page
            </a>
          </div>
        </div>
      )}
    </div>
  );
}

/** The balance after each verified delta, one marker per delta (sampled past 2,000). */
function BalanceChart({ apiKey, id, verified }: { apiKey: string; id: string; verified: number }) {
  const h = useAsync(
    async () => (await call<BalanceHistory>("GET", `/api/v1/balance/customers/${encodeURIComponent(id)}/history`, { apiKey })).data,
    [apiKey, id, verified],
  );
  if (!h.data) return <ErrorBox error={h.error} />;
  const d = h.data;
  return (
    <div class="card">
      <Chart
        name="balance"
        title="Balance over time"
        spec={{
          x: d.points.map((p) => seconds(p.verifiedAt)),
          yLabel: "balance",
          series: [
            {
              label: "Balance",
              // Chart positions only: the table and the ledger keep the exact amounts.
              values: d.points.map((p) => Number(p.balanceAfter)),
              kind: "steps",
              points: true,
              color: "#1a4fd6",
            },
          ],
        }}
        table={{
          caption: `Balance of ${id} after each verified delta`,
          columns: ["#", "Verified at", "Delta", "Balance after"],
          numeric: [0, 2, 3],
          rows: d.points.map((p) => [p.ledgerSeq, when(p.verifiedAt), p.delta, p.balanceAfter]),
        }}
      >
        after each verified delta (a marker each){d.step > 1 ? `: every ${d.step}th of ${d.totalDeltas}, with the first and the last` : ""}.
      </Chart>
    </div>
  );
}
