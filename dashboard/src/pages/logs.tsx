// The request log: every authenticated API request of the tenant, newest
// first, filtered by family, status class, path, key and time; a request's
// page with its (masked) bodies; and a box that goes straight to a
// Request-Id.
import { useState } from "preact/hooks";
import { type ApiKey, call, ENV_LABEL, type LoggedRequest, type LoggedRequestDetail, type RequestPage } from "../api";
import { Link, navigate } from "../router";
import { jwt, useSession } from "../session";
import { Button, CursorPager, Empty, ErrorBox, Field, Loading, PageTitle, prettyJson, Select, StatusBadge, Table, useAsync, when } from "../ui";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const SINCE: [string, string][] = [
  ["", "Any time"],
  ["1", "Last hour"],
  ["24", "Last 24 hours"],
  ["168", "Last 7 days"],
];

function sinceIso(hours: string): string | undefined {
  return hours ? new Date(Date.now() - Number(hours) * 3_600_000).toISOString() : undefined;
}

/** Where a logged request came from, in words. */
function sourceText(r: LoggedRequest): string {
  if (r.source === "dashboard") return "Dashboard";
  return r.keyName ?? (r.keyId ? `key ${r.keyId}` : ENV_LABEL[r.source]);
}

/** A Request-Id to go to: from an error message, a support ticket, a log line. */
export function RequestIdBox() {
  const [id, setId] = useState("");
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="inline-form"
      role="search"
      aria-label="Go to a Request-Id"
      onSubmit={(e) => {
        e.preventDefault();
        const v = id.trim();
        if (!REQUEST_ID.test(v)) {
          setError(new Error("A Request-Id is 1 to 64 letters, digits, '.', '_', ':' or '-' (it is in every answer's Request-Id header and in error bodies as requestId)."));
          return;
        }
        setError(null);
        navigate(`/app/logs/${encodeURIComponent(v)}`);
      }}
    >
      <Field label="Go to a Request-Id" name="requestId" value={id} onValue={setId} placeholder="req_…" />
      <Button type="submit">Go</Button>
      <ErrorBox error={error} />
    </form>
  );
}

export function RequestLog() {
  const s = useSession();
  const [family, setFamily] = useState("all");
  const [status, setStatus] = useState("");
  const [path, setPath] = useState("");
  const [keyId, setKeyId] = useState("");
  const [since, setSince] = useState("");
  // The cursors of the pages before this one (← Newer), and this one's.
  const [cursors, setCursors] = useState<string[]>([]);
  const [applied, setApplied] = useState({ family, status, path, keyId, since });
  const before = cursors[cursors.length - 1];
  const keys = useAsync(async () => (await call<ApiKey[]>("GET", "/dashboard/api-keys", { jwt: jwt() })).data, []);
  const page = useAsync(
    async () =>
      (
        await call<RequestPage>("GET", "/dashboard/logs/requests", {
          jwt: jwt(),
          query: {
            environment: s.env,
            family: applied.family,
            status: applied.status,
            path: applied.path.trim(),
            keyId: applied.keyId,
            since: sinceIso(applied.since),
            before,
            limit: 50,
          },
        })
      ).data,
    [s.env, applied, before],
  );
  const apply = (e: Event) => {
    e.preventDefault();
    setCursors([]);
    setApplied({ family, status, path, keyId, since });
  };
  const envKeys = (keys.data ?? []).filter((k) => (k.environment === "test") === (s.env === "sandbox"));
  return (
    <section>
      <PageTitle title="Request log">Request log</PageTitle>
      <p class="lede">
        Every authenticated request of your account in {ENV_LABEL[s.env]} and the dashboard's own, newest first, with
        the bodies sent and answered (secrets masked). A request shows here a moment after its answer.
      </p>
      <RequestIdBox />
      <form class="card filters" onSubmit={apply} aria-label="Filters">
        <div class="row3">
          <Select
            label="Requests"
            name="family"
            value={family}
            onValue={setFamily}
            options={[
              ["all", "Balance API and dashboard"],
              ["api", "Balance API only"],
              ["dashboard", "Dashboard only"],
            ]}
          />
          <Select
            label="Status"
            name="status"
            value={status}
            onValue={setStatus}
            options={[
              ["", "Any status"],
              ["2xx", "2xx: succeeded"],
              ["errors", "4xx and 5xx: failed"],
              ["4xx", "4xx: refused"],
              ["5xx", "5xx: server errors"],
            ]}
          />
          <Field label="Path contains" name="path" value={path} onValue={setPath} placeholder="/balance/delta" maxLength={200} />
          <Select
            label="API key"
            name="keyId"
            value={keyId}
            onValue={setKeyId}
            options={[["", "Any key"], ...envKeys.map((k): [string, string] => [k.id, `${k.name ?? k.prefix} (${k.id})`])]}
          />
          <Select label="Time" name="since" value={since} onValue={setSince} options={SINCE} />
        </div>
        <Button kind="primary" type="submit">
          Show requests
        </Button>
      </form>
      <ErrorBox error={page.error} />
      {page.loading && !page.data && <Loading what="Loading requests" />}
      {page.data && page.data.requests.length === 0 && <Empty>No requests match. Requests are kept for your plan's log time.</Empty>}
      {page.data && page.data.requests.length > 0 && (
        <Table label="Requests" class="stack" id="requests" columns={["Request", "Status", "Error code", "Made with", { title: "Time taken", num: true }, "When"]}>
              {page.data.requests.map((r) => (
                <tr key={r.requestId} data-request-id={r.requestId} data-status={r.status}>
                  <th scope="row">
                    <Link href={`/app/logs/${encodeURIComponent(r.requestId)}`}>
                      <code>
                        {r.method} {r.path}
                      </code>
                    </Link>
                  </th>
                  <td data-label="Status">
                    <StatusBadge status={r.status} />
                  </td>
                  <td data-label="Error code">{r.code ?? "—"}</td>
                  <td data-label="Made with">{sourceText(r)}</td>
                  <td class="num" data-label="Time taken">
                    {r.durationMs} ms
                  </td>
                  <td data-label="When">{when(r.createdAt)}</td>
                </tr>
              ))}
        </Table>
      )}
      <CursorPager cursors={cursors} onCursors={setCursors} next={page.data?.nextCursor}>
        <Button kind="link" onClick={() => void page.reload()}>
          Refresh
        </Button>
      </CursorPager>
    </section>
  );
}

function Body({ title, text }: { title: string; text: string | null }) {
  return (
    <div class="card">
      <h2>{title}</h2>
      {text ? <pre class="body-text" tabIndex={0}>{prettyJson(text)}</pre> : <Empty>No body.</Empty>}
    </div>
  );
}

export function RequestDetail({ id }: { id: string }) {
  const r = useAsync(
    async () => (await call<LoggedRequestDetail>("GET", `/dashboard/logs/requests/${encodeURIComponent(id)}`, { jwt: jwt() })).data,
    [id],
  );
  const d = r.data;
  return (
    <section>
      <p>
        <Link href="/app/logs">← Request log</Link>
      </p>
      <PageTitle title={`Request ${id}`}>
        Request <code>{id}</code>
      </PageTitle>
      <RequestIdBox />
      {r.loading && !d && <Loading what="Looking the request up" />}
      <ErrorBox error={r.error}>
        <p>
          The log keeps the requests of your account whose key or login checked out, for your plan's log time; a request
          shows a moment after its answer.{" "}
          <Button kind="link" onClick={() => void r.reload()}>
            Look again
          </Button>
        </p>
      </ErrorBox>
      {d && (
        <>
          <dl class="facts big" data-request={d.requestId} data-status={d.status}>
            <dt>Request</dt>
            <dd>
              <code>
                {d.method} {d.path}
              </code>
            </dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={d.status} /> {d.code ? <code>{d.code}</code> : null}
            </dd>
            <dt>Made with</dt>
            <dd>
              {sourceText(d)}
              {d.source !== "dashboard" ? ` (${ENV_LABEL[d.source]})` : ""}
            </dd>
            <dt>Route</dt>
            <dd>
              <code>{d.route}</code>
            </dd>
            <dt>Time taken</dt>
            <dd>{d.durationMs} ms</dd>
            <dt>When</dt>
            <dd>{when(d.createdAt)}</dd>
          </dl>
          <div class="grid">
            <Body title="Request body" text={d.requestBody} />
            <Body title="Response body" text={d.responseBody} />
          </div>
        </>
      )}
    </section>
  );
}
