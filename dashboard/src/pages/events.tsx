// The event log: every event of the environment (delta.verified,
// checkpoint.verified, ...), newest first, with its deliveries to each
// webhook; an event's page with its payload, every attempt and a resend.
import { useState } from "preact/hooks";
import { call, ENV_LABEL, type EventDelivery, type EventPage, type LoggedEvent, type Resent } from "../api";
import { Link } from "../router";
import { jwt, useSession } from "../session";
import { Button, CursorPager, Empty, ErrorBox, Loading, Notice, PageTitle, prettyJson, Select, short, Table, useAsync, usePoll, when } from "../ui";

const TYPES: [string, string][] = [
  ["", "Every event"],
  ["delta.verified", "delta.verified"],
  ["checkpoint.verified", "checkpoint.verified"],
  ["verification.completed", "verification.completed"],
  ["verification.failed", "verification.failed"],
  ["checkpoint.cosigned", "checkpoint.cosigned"],
  ["checkpoint.disputed", "checkpoint.disputed"],
];

/** "2 of 2 delivered", in words. */
function deliveredText(e: LoggedEvent): string {
  const n = e.deliveries.length;
  if (n === 0) return "No webhook subscribed";
  const ok = e.deliveries.filter((d) => d.status === "succeeded").length;
  const open = e.deliveries.filter((d) => d.status === "pending" || d.status === "delivering").length;
  return `${ok} of ${n} delivered${open ? `, ${open} retrying` : ""}`;
}

function About({ e }: { e: LoggedEvent }) {
  const s = e.summary;
  return (
    <>
      {s.customerId && (
        <>
          customer <Link href={`/app/customers/${encodeURIComponent(s.customerId)}`}>{s.customerId}</Link>{" "}
        </>
      )}
      {s.anchorId && <code title={s.anchorId}>{short(s.anchorId, 16)} </code>}
      {s.checkpointId && <code>{s.checkpointId} </code>}
      {s.period && <>period {s.period} </>}
      {s.submissionId && <code>{short(s.submissionId, 16)}</code>}
    </>
  );
}

export function Events() {
  const s = useSession();
  const [type, setType] = useState("");
  const [cursors, setCursors] = useState<string[]>([]);
  const before = cursors[cursors.length - 1];
  const page = useAsync(
    async () =>
      (await call<EventPage>("GET", "/dashboard/events", { jwt: jwt(), query: { environment: s.env, type, before, limit: 25 } })).data,
    [s.env, type, before],
  );
  return (
    <section>
      <PageTitle title="Events">Events</PageTitle>
      <p class="lede">
        Every event of {ENV_LABEL[s.env]}, newest first, with its deliveries to your webhooks. Open one to see its payload,
        every attempt and what your endpoint answered, and to send it again.
      </p>
      <div class="inline-form">
        <Select
          label="Type"
          name="eventType"
          value={type}
          onValue={(v) => {
            setCursors([]);
            setType(v);
          }}
          options={TYPES}
        />
        <Button onClick={() => void page.reload()} busy={page.loading}>
          Refresh
        </Button>
      </div>
      <ErrorBox error={page.error} />
      {page.loading && !page.data && <Loading what="Loading events" />}
      {page.data && page.data.events.length === 0 && <Empty>No events yet. Record a delta: its delta.verified event shows here.</Empty>}
      {page.data && page.data.events.length > 0 && (
        <Table label="Events" class="stack" id="events" columns={["Event", "About", "Deliveries", "When"]}>
              {page.data.events.map((e) => (
                <tr key={e.id} data-event-id={e.id} data-type={e.type}>
                  <th scope="row">
                    <Link href={`/app/events/${encodeURIComponent(e.id ?? "")}`}>
                      <code>{e.type}</code>
                    </Link>
                  </th>
                  <td data-label="About">
                    <About e={e} />
                  </td>
                  <td data-label="Deliveries">{deliveredText(e)}</td>
                  <td data-label="When">{when(e.createdAt)}</td>
                </tr>
              ))}
        </Table>
      )}
      <CursorPager cursors={cursors} onCursors={setCursors} next={page.data?.nextCursor} />
    </section>
  );
}

function DeliveryCard({ d, onResent }: { d: EventDelivery; onResent: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [resent, setResent] = useState<Resent | null>(null);
  const resend = async () => {
    setBusy(true);
    setError(null);
    setResent(null);
    try {
      setResent((await call<Resent>("POST", `/dashboard/deliveries/${encodeURIComponent(d.id)}/resend`, { jwt: jwt() })).data);
      await onResent();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="card delivery" data-delivery-id={d.id} data-status={d.status}>
      <h3 class="url">{d.url ?? "(url removed by retention)"}</h3>
      <p class="hint">
        {d.status} · created {when(d.createdAt)}
        {d.completedAt ? ` · completed ${when(d.completedAt)}` : ""}
        {d.nextAttemptAt ? ` · next attempt ${when(d.nextAttemptAt)}` : ""} · delivery <code>{d.id}</code> ·{" "}
        <Link href={`/app/webhooks/${encodeURIComponent(d.webhookId)}`}>webhook</Link>
      </p>
      {d.attempts.length === 0 ? (
        <Empty>Not attempted yet.</Empty>
      ) : (
        <Table label={`Attempts of delivery ${d.id}`} class="compact" columns={["Attempt", "Started", "Answer", "Outcome", "Time", "Error"]}>
              {d.attempts.map((a) => (
                <tr key={a.attempt} data-attempt={a.attempt}>
                  <td>{a.attempt}</td>
                  <td>{when(a.startedAt)}</td>
                  <td data-http-status={a.httpStatus ?? ""}>{a.httpStatus ? `HTTP ${a.httpStatus}` : "no answer"}</td>
                  <td>{a.outcome}</td>
                  <td>{a.durationMs} ms</td>
                  <td>{a.error ?? "—"}</td>
                </tr>
              ))}
        </Table>
      )}
      <div class="actions">
        <Button kind="primary" busy={busy} disabled={d.dataPurged || d.status === "delivering"} onClick={resend}>
          Resend <span class="sr-only">to {d.url}</span>
        </Button>
      </div>
      <ErrorBox error={error} />
      {resent && (
        <Notice kind={resent.success ? "ok" : "warn"}>
          Sent again: {resent.httpStatus ? `your endpoint answered HTTP ${resent.httpStatus}` : "no answer"}. {resent.message}
        </Notice>
      )}
    </li>
  );
}

/**
 * The JSON text of the first `"name":` member's value in `raw`, as the API
 * wrote it (amounts exact), or null.
 */
function memberText(raw: string, name: string): string | null {
  const at = raw.indexOf(`"${name}":`);
  if (at < 0) return null;
  let i = at + name.length + 3;
  const start = i;
  let depth = 0;
  let inString = false;
  for (; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (depth === 0) break;
      depth--;
    } else if (c === "," && depth === 0) break;
  }
  return raw.slice(start, i);
}

export function EventDetail({ id }: { id: string }) {
  const e = useAsync(async () => {
    const r = await call<LoggedEvent>("GET", `/dashboard/events/${encodeURIComponent(id)}`, { jwt: jwt() });
    return { ...r.data, payloadText: memberText(r.raw, "payload") };
  }, [id]);
  const open = !!e.data?.deliveries.some((d) => d.status === "pending" || d.status === "delivering");
  usePoll(open, 3000, 40, () => void e.reload());
  const d = e.data;
  return (
    <section>
      <p>
        <Link href="/app/events">← Events</Link>
      </p>
      <PageTitle title={`Event ${id}`}>
        Event <code>{d?.type ?? id}</code>
      </PageTitle>
      <ErrorBox error={e.error} />
      {e.loading && !d && <Loading what="Loading the event" />}
      {d && (
        <>
          <dl class="facts big" data-event={d.id}>
            <dt>Event id</dt>
            <dd>
              <code>{d.id}</code>
            </dd>
            <dt>Environment</dt>
            <dd>{d.environment ? ENV_LABEL[d.environment] : "—"}</dd>
            <dt>About</dt>
            <dd>
              <About e={d} />
            </dd>
            <dt>Created</dt>
            <dd>{when(d.createdAt)}</dd>
          </dl>
          <h2>Deliveries</h2>
          {d.deliveries.length === 0 ? (
            <Empty>No webhook was subscribed to this event when it happened.</Empty>
          ) : (
            <ul class="cards">
              {d.deliveries.map((x) => (
                <DeliveryCard key={x.id} d={x} onResent={e.reload} />
              ))}
            </ul>
          )}
          <h2>Payload</h2>
          {!d.payloadText || d.payloadText === "null" ? (
            <Empty>The payload is no longer kept (retention), or this was a test event.</Empty>
          ) : (
            <pre class="body-text card" tabIndex={0}>
              {prettyJson(d.payloadText)}
            </pre>
          )}
        </>
      )}
    </section>
  );
}
