// Webhooks: create (secret shown once), list, toggle, test, delete, and
// each webhook's deliveries with their attempts.
import { useState } from "preact/hooks";
import { call, type CreatedWebhook, type Delivery, type RotatedWebhookSecret, type Webhook, type WebhookTest } from "../api";
import { Link } from "../router";
import { Button, ConfirmButton, Empty, ErrorBox, Field, Loading, Notice, PageTitle, SecretOnce, short, Table, useAction, useAsync, usePoll, when } from "../ui";
import { jwt } from "../session";

const EVENTS: [string, string][] = [
  ["delta.verified", "a delta is verified"],
  ["checkpoint.verified", "a checkpoint is committed"],
  ["verification.completed", "verification completed"],
  ["verification.failed", "verification failed"],
  ["test", "test events"],
];

export function Webhooks() {
  const hooks = useAsync(async () => (await call<Webhook[]>("GET", "/dashboard/webhooks", { jwt: jwt() })).data, []);
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [events, setEvents] = useState<string[]>(["delta.verified", "checkpoint.verified"]);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const [rotated, setRotated] = useState<Record<string, RotatedWebhookSecret>>({});
  const [tested, setTested] = useState<Record<string, WebhookTest>>({});
  const creating = useAction(hooks.reload);
  const row = useAction(hooks.reload);
  const create = (e: Event) => {
    e.preventDefault();
    setCreated(null);
    return creating.run(async () => {
      const r = await call<CreatedWebhook>("POST", "/dashboard/webhooks", { jwt: jwt(), body: { url, events, description } });
      setCreated(r.data);
      setUrl("");
      setDescription("");
    }, true);
  };
  const act = (f: () => Promise<unknown>) => row.run(async () => void (await f()), true);
  return (
    <section>
      <PageTitle title="Webhooks">Webhooks</PageTitle>
      <p class="lede">
        The service POSTs events to your URL, signed in <code>webhook-signature</code> (Standard Webhooks): <code>v1,</code> with the
        webhook's secret and <code>v1a,</code> with the webhook's own public key, shown on its card. Pin that key for this webhook
        only: it verifies no other webhook's deliveries.
      </p>
      <form class="card" onSubmit={create} aria-labelledby="new-hook">
        <h2 id="new-hook">Add a webhook</h2>
        <Field label="URL" name="url" type="url" required value={url} onValue={setUrl} placeholder="https://example.com/hooks/bvs" />
        <Field label="Description (optional)" name="description" value={description} onValue={setDescription} maxLength={500} />
        <fieldset>
          <legend>Events</legend>
          {EVENTS.map(([name, text]) => (
            <label class="check" key={name}>
              <input
                type="checkbox"
                name="events"
                value={name}
                checked={events.includes(name)}
                onChange={(e) =>
                  setEvents((e.currentTarget as HTMLInputElement).checked ? [...events, name] : events.filter((x) => x !== name))
                }
              />{" "}
              <code>{name}</code>: {text}
            </label>
          ))}
        </fieldset>
        <ErrorBox error={creating.error} />
        <Button kind="primary" type="submit" busy={creating.busy !== null}>
          Add webhook
        </Button>
      </form>
      {created && <SecretOnce label={`Signing secret of the webhook to ${created.url}`} value={created.secret} />}
      <h2>Your webhooks</h2>
      {hooks.loading && !hooks.data && <Loading />}
      <ErrorBox error={hooks.error} />
      <ErrorBox error={row.error} />
      {hooks.data && hooks.data.length === 0 && <Empty>No webhooks yet.</Empty>}
      {hooks.data && hooks.data.length > 0 && (
        <ul class="cards">
          {hooks.data.map((h) => (
            <li key={h.id} class="card" data-webhook-id={h.id}>
              <h3 class="url">{h.url}</h3>
              <p>
                {h.description && <>{h.description} · </>}
                Events: {h.events.map((e) => <code key={e}>{e} </code>)}· <span data-active={String(h.active)}>{h.active ? "Active" : "Paused"}</span> · created{" "}
                {when(h.createdAt)}
              </p>
              <p class="hint" data-public-key={h.publicKey}>
                Public key (<code>v1a</code>): <code>{h.publicKey}</code>
                {h.previousPublicKey && (
                  <>
                    {" "}· previous key <code>{h.previousPublicKey}</code> also signs until {when(h.previousPublicKeyExpiresAt)}
                  </>
                )}
              </p>
              <div class="actions">
                <Button
                  onClick={() =>
                    act(async () => {
                      const r = await call<WebhookTest>("POST", `/dashboard/webhooks/${encodeURIComponent(h.id)}/test`, { jwt: jwt() });
                      setTested({ ...tested, [h.id]: r.data });
                    })
                  }
                >
                  Send a test event
                </Button>
                <Button onClick={() => act(() => call("POST", `/dashboard/webhooks/${encodeURIComponent(h.id)}/toggle`, { jwt: jwt() }))}>
                  {h.active ? "Pause" : "Resume"}
                </Button>
                <Link class="btn secondary" href={`/app/webhooks/${encodeURIComponent(h.id)}`}>
                  Deliveries
                </Link>
                <ConfirmButton
                  label="Rotate secret"
                  question="Make a new signing secret and public key? The current ones also sign for 24 hours."
                  confirmLabel="Rotate secret"
                  onConfirm={() =>
                    act(async () => {
                      const path = `/dashboard/webhooks/${encodeURIComponent(h.id)}/rotate-secret`;
                      const r = await call<RotatedWebhookSecret>("POST", path, { jwt: jwt() });
                      setRotated({ ...rotated, [h.id]: r.data });
                    })
                  }
                />
                <ConfirmButton
                  label="Delete"
                  question="Delete this webhook? No more events are sent to it."
                  confirmLabel="Delete webhook"
                  onConfirm={() => act(() => call("DELETE", `/dashboard/webhooks/${encodeURIComponent(h.id)}`, { jwt: jwt() }))}
                />
              </div>
              {rotated[h.id] && (
                <SecretOnce label={`New signing secret of the webhook to ${h.url}`} value={rotated[h.id]?.secret ?? ""}>
                  <p data-new-public-key={rotated[h.id]?.publicKey}>
                    New public key (<code>v1a</code>): <code>{rotated[h.id]?.publicKey}</code>
                  </p>
                  {rotated[h.id]?.previousSecretExpiresAt && (
                    <p data-previous-until>The previous secret and key also sign until {when(rotated[h.id]?.previousSecretExpiresAt)}.</p>
                  )}
                </SecretOnce>
              )}
              {tested[h.id] && (
                <p class={`box ${tested[h.id]?.success ? "ok" : "warn"}`} role="status" data-test-status={tested[h.id]?.httpStatus}>
                  Test event: {tested[h.id]?.httpStatus ? `your endpoint answered HTTP ${tested[h.id]?.httpStatus}` : "no answer"}.{" "}
                  {tested[h.id]?.message}
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function WebhookDetail({ id }: { id: string }) {
  const hook = useAsync(async () => (await call<Webhook>("GET", `/dashboard/webhooks/${encodeURIComponent(id)}`, { jwt: jwt() })).data, [id]);
  const deliveries = useAsync(
    async () => (await call<Delivery[]>("GET", `/dashboard/webhooks/${encodeURIComponent(id)}/deliveries`, { jwt: jwt() })).data,
    [id],
  );
  const open = !!deliveries.data?.some((d) => !d.completedAt);
  usePoll(open, 3000, 40, () => void deliveries.reload());
  return (
    <section>
      <p>
        <Link href="/app/webhooks">← Webhooks</Link>
      </p>
      <PageTitle title="Webhook deliveries">Deliveries</PageTitle>
      <ErrorBox error={hook.error} />
      {hook.data && (
        <dl class="facts">
          <dt>URL</dt>
          <dd class="url">{hook.data.url}</dd>
          <dt>Events</dt>
          <dd>{hook.data.events.join(", ")}</dd>
          <dt>State</dt>
          <dd>{hook.data.active ? "Active" : "Paused"}</dd>
          <dt>Last triggered</dt>
          <dd>{when(hook.data.lastTriggeredAt)}</dd>
          <dt>Public key (v1a)</dt>
          <dd>
            <code>{hook.data.publicKey}</code>
          </dd>
        </dl>
      )}
      <div class="actions">
        <Button onClick={() => void deliveries.reload()} busy={deliveries.loading}>
          Refresh
        </Button>
      </div>
      <ErrorBox error={deliveries.error} />
      {deliveries.loading && !deliveries.data && <Loading />}
      {deliveries.data && deliveries.data.length === 0 && (
        <Empty>No deliveries yet. Send a test event from the webhook list, or record a delta.</Empty>
      )}
      {deliveries.data && deliveries.data.length > 0 && (
        <ol class="cards">
          {deliveries.data.map((d) => (
            <li key={d.id} class="card delivery" data-status={d.status} data-event={d.event}>
              <h2>
                <code>{d.event}</code> · {d.status}
              </h2>
              <p class="hint">
                {d.environment ? `${d.environment} · ` : ""}created {when(d.createdAt)}
                {d.completedAt ? ` · completed ${when(d.completedAt)}` : ""}
                {d.nextAttemptAt ? ` · next attempt ${when(d.nextAttemptAt)}` : ""} · id <code>{short(d.id, 16)}</code>
                {d.dataPurged ? " · payload removed by retention" : ""}
              </p>
              {d.attempts.length === 0 ? (
                <Empty>Not attempted yet.</Empty>
              ) : (
                <Table label={`Attempts of delivery ${d.id}`} class="compact" columns={["Attempt", "Started", "HTTP status", "Outcome", "Time", "Error"]}>
                      {d.attempts.map((a) => (
                        <tr key={a.attempt}>
                          <td>{a.attempt}</td>
                          <td>{when(a.startedAt)}</td>
                          <td data-http-status={a.httpStatus ?? ""}>{a.httpStatus ?? "no answer"}</td>
                          <td>{a.outcome}</td>
                          <td>{a.durationMs} ms</td>
                          <td>{a.error ?? "—"}</td>
                        </tr>
                      ))}
                </Table>
              )}
            </li>
          ))}
        </ol>
      )}
      {open && <Notice kind="info">Some deliveries are still open; this list refreshes by itself.</Notice>}
    </section>
  );
}
