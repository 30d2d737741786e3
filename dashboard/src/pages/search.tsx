// Search by id: the header's box lands here. Every object of the account
// with that id, in both environments, each linked to its page; a
// Request-Id found alone goes straight to its request.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { call, type EnvName, ENV_LABEL, type SearchHit } from "../api";
import { Link, navigate, useLocation } from "../router";
import { getState, jwt, update } from "../session";
import { Button, Empty, ErrorBox, Loading, PageTitle, useAsync } from "../ui";

const KIND_TEXT: Record<SearchHit["kind"], string> = {
  delta: "Delta (anchorId)",
  submission: "Delta of a submission (proof root)",
  receipt: "Receipt (proof root)",
  checkpoint: "Checkpoint",
  customer: "Customer",
  event: "Event",
  request: "Request (Request-Id)",
  fact: "Fact (content hash)",
  delivery: "Webhook delivery",
};

/** The header's search box. */
export function SearchBox() {
  const [q, setQ] = useState("");
  return (
    <form
      class="search-box"
      role="search"
      aria-label="Search by id"
      onSubmit={(e) => {
        e.preventDefault();
        if (q.trim()) navigate(`/app/search?q=${encodeURIComponent(q.trim())}`);
      }}
    >
      <label for="search-q" class="sr-only">
        Search by id
      </label>
      <input
        id="search-q"
        name="q"
        type="search"
        value={q}
        placeholder="anchorId, proof root, Request-Id…"
        maxLength={128}
        onInput={(e) => setQ((e.currentTarget as HTMLInputElement).value)}
      />
      <Button type="submit">Search</Button>
    </form>
  );
}

/** A link into the dashboard that first shows the hit's environment. */
function EnvLink({ env, href, children }: { env: EnvName | null; href: string; children: ComponentChildren }) {
  return (
    <Link
      href={href}
      onClick={() => {
        if (env && getState().env !== env) update({ env });
      }}
    >
      {children}
    </Link>
  );
}

function Where({ h }: { h: SearchHit }) {
  const customer = h.customerId ? `/app/customers/${encodeURIComponent(h.customerId)}` : null;
  const verify = h.proofRoot ? `/verify/${h.proofRoot}` : null;
  const parts = [];
  if (h.kind === "request") parts.push(<EnvLink env={null} href={`/app/logs/${encodeURIComponent(h.id)}`}>Open the request</EnvLink>);
  if (h.kind === "event") parts.push(<EnvLink env={null} href={`/app/events/${encodeURIComponent(h.id)}`}>Open the event</EnvLink>);
  if (h.kind === "delivery" && h.eventId)
    parts.push(<EnvLink env={null} href={`/app/events/${encodeURIComponent(h.eventId)}`}>Open its event</EnvLink>);
  if (customer) parts.push(<EnvLink env={h.environment} href={customer}>Customer {h.customerId}</EnvLink>);
  if (verify && h.kind !== "customer")
    parts.push(
      <a href={verify} target="_blank" rel="noopener">
        Verify page of the proof root
      </a>,
    );
  return (
    <>
      {parts.map((p, i) => (
        <span key={i}>
          {i > 0 && " · "}
          {p}
        </span>
      ))}
    </>
  );
}

export function SearchPage() {
  // Every submitted search runs, the same id again included (the log is
  // written a moment after a request's answer): each navigation is a new
  // location object.
  const loc = useLocation();
  const q = loc.query.get("q") ?? "";
  const found = useAsync(
    async () => (q ? (await call<{ results: SearchHit[] }>("GET", "/dashboard/search", { jwt: jwt(), query: { q } })).data.results : []),
    [loc],
  );
  // A Request-Id found alone goes straight to its request.
  const only = found.data?.length === 1 ? found.data[0] : undefined;
  useEffect(() => {
    if (only?.kind === "request") navigate(`/app/logs/${encodeURIComponent(only.id)}`, true);
  }, [only]);
  return (
    <section>
      <PageTitle title="Search">Search</PageTitle>
      <p class="lede">
        Results for <code>{q || "—"}</code> in Sandbox and Production: anchorIds, proof roots (of a submission, a receipt or
        a checkpoint), checkpoint ids, customer ids, event ids, Request-Ids, delivery ids and fact content hashes.
      </p>
      <ErrorBox error={found.error} />
      {found.loading && <Loading what="Searching" />}
      {found.data && found.data.length === 0 && !found.loading && (
        <Empty>
          Nothing of your account has this id. Ids are matched whole (customers by their exact id; to find customers by the
          start of their id, use the Customers page). A request shows in the log a moment after its answer: search again.
        </Empty>
      )}
      {found.data && found.data.length > 0 && (
        <ul class="cards" id="search-results">
          {found.data.map((h, i) => (
            <li key={`${h.kind}-${h.id}-${i}`} class="card" data-kind={h.kind} data-id={h.id}>
              <h2>{KIND_TEXT[h.kind]}</h2>
              <p>
                <code>{h.id}</code>
                {h.environment ? ` · ${ENV_LABEL[h.environment]}` : ""}
                {h.state ? ` · ${h.kind === "request" ? "HTTP " : ""}${h.state}` : ""}
              </p>
              <p>
                <Where h={h} />
              </p>
            </li>
          ))}
        </ul>
      )}
      {q && (
        <Button kind="link" onClick={() => void found.reload()}>
          Search again
        </Button>
      )}
    </section>
  );
}
