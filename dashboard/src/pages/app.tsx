// The signed-in frame (header, environment switch, navigation) and the
// overview, environments and settings pages.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import {
  ApiError,
  call,
  CONTRACT_OF,
  type Contract,
  type EnvName,
  ENV_LABEL,
  ENV_OF_CONTRACT,
  type Profile,
  type Usage as UsageReply,
} from "../api";
import { Link, navigate } from "../router";
import { DailyCharts } from "./overview-charts";
import { SearchBox } from "./search";
import { getState, jwt, signOut, update, useSession } from "../session";
import { Button, ErrorBox, Loading, Notice, PageTitle, PasswordField, Select, Table, useAction, useAsync, usePoll, useSubmit, when } from "../ui";

const NAV: [string, string][] = [
  ["/app", "Overview"],
  ["/app/environments", "Environments"],
  ["/app/keys", "API keys"],
  ["/app/webhooks", "Webhooks"],
  ["/app/customers", "Customers"],
  ["/app/logs", "Logs"],
  ["/app/events", "Events"],
  ["/app/witnesses", "Witnesses"],
  ["/app/settings", "Settings"],
];

async function setEnvironment(env: EnvName): Promise<void> {
  const before = getState().env;
  update({ env });
  try {
    await call("PATCH", "/dashboard/auth/preferences", { jwt: jwt(), body: { preferredEnvironment: env } });
  } catch (e) {
    update({ env: before });
    throw e;
  }
}

export function Shell({ path, children }: { path: string; children: ComponentChildren }) {
  const s = useSession();
  const [envError, setEnvError] = useState<unknown>(null);
  const current = NAV.filter(([href]) => path === href || (href !== "/app" && path.startsWith(`${href}/`)));
  return (
    <>
      <header class="top">
        <div class="top-row">
          <Link href="/app" class="brand">
            Balance verification
          </Link>
          <div class="env-switch">
            <label for="env-switch">Environment</label>
            <select
              id="env-switch"
              value={s.env}
              data-env={s.env}
              onChange={async (e) => {
                setEnvError(null);
                try {
                  await setEnvironment((e.currentTarget as HTMLSelectElement).value as EnvName);
                } catch (err) {
                  setEnvError(err);
                }
              }}
            >
              <option value="sandbox">Sandbox (test data)</option>
              <option value="production">Production (live data)</option>
            </select>
          </div>
          <SearchBox />
          <div class="who">
            <span class="email">{s.user?.email}</span>
            <Button
              kind="link"
              onClick={() => {
                // End the session on the server too: the token stops working
                // everywhere, not only in this tab (issue 25).
                const jwt = s.token ?? undefined;
                void call("POST", "/dashboard/auth/logout", { jwt }).catch(() => undefined);
                signOut("You are logged out.");
                navigate("/login");
              }}
            >
              Log out
            </Button>
          </div>
        </div>
        <nav aria-label="Dashboard">
          <ul>
            {NAV.map(([href, text]) => (
              <li key={href}>
                <Link href={href} aria-current={current.some(([h]) => h === href) || path === href ? "page" : undefined}>
                  {text}
                </Link>
              </li>
            ))}
            {s.devMode && (
              <li>
                <Link href="/mailbox">Dev mailbox</Link>
              </li>
            )}
          </ul>
        </nav>
        {s.env === "production" && (
          <p class="env-banner" role="note">
            You are looking at <strong>Production</strong>: live data.
          </p>
        )}
      </header>
      <main id="main">
        <ErrorBox error={envError} />
        {s.user && !s.user.isVerified && <UnverifiedBanner email={s.user.email} />}
        {children}
      </main>
    </>
  );
}

function UnverifiedBanner({ email }: { email: string }) {
  const [msg, setMsg] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const { devMode } = useSession();
  return (
    <div class="box warn" role="note">
      <p>
        <strong>Verify your e-mail address.</strong> Until you open the link we sent to {email}, you can look around but
        not create keys or webhooks.{" "}
        {devMode && <Link href={`/mailbox?to=${encodeURIComponent(email)}`}>Open the dev mailbox</Link>}
      </p>
      <Button
        onClick={async () => {
          setError(null);
          try {
            setMsg((await call("POST", "/dashboard/auth/resend-verification-email", { body: { email } })).message);
          } catch (e) {
            setError(e);
          }
        }}
      >
        Send the link again
      </Button>
      {msg && <p role="status">{msg}</p>}
      <ErrorBox error={error} />
      <p class="hint">
        Verified already? <Button kind="link" onClick={() => { signOut("Log in again to refresh your account."); navigate("/login"); }}>Log in again</Button>
      </p>
    </div>
  );
}

const STATUS_TEXT: Record<Contract["status"], string> = {
  not_provisioned: "Not provisioned",
  provisioning: "Provisioning…",
  active: "Active",
  error: "Error: contact support",
};

function useContracts() {
  return useAsync(async () => (await call<Contract[]>("GET", "/dashboard/contracts", { jwt: jwt() })).data, []);
}

function envRows(contracts: Contract[]): { env: EnvName; contract: Contract | null }[] {
  return (["sandbox", "production"] as EnvName[]).map((env) => ({
    env,
    contract: contracts.find((c) => c.environment === CONTRACT_OF[env]) ?? null,
  }));
}

export function Overview() {
  const s = useSession();
  const profile = useAsync(async () => {
    const p = (await call<Profile>("GET", "/dashboard/auth/profile", { jwt: jwt() })).data;
    const u = getState().user;
    if (u && (u.isVerified !== p.emailVerified || getState().env !== p.preferredEnvironment)) {
      update({ user: { ...u, isVerified: p.emailVerified }, env: p.preferredEnvironment });
    }
    return p;
  }, []);
  const contracts = useContracts();
  return (
    <section>
      <PageTitle title="Overview">
        {profile.data ? `Welcome, ${profile.data.firstName}` : "Overview"}
      </PageTitle>
      <ErrorBox error={profile.error} />
      <div class="grid">
        <div class="card">
          <h2>From sign-up to a verified receipt</h2>
          <ol>
            <li>
              <Link href="/app/keys">Create a Sandbox API key</Link> (its secret is shown once).
            </li>
            <li>
              Optional: <Link href="/app/webhooks">add a webhook</Link> to hear about verified deltas.
            </li>
            <li>
              <Link href="/app/customers">Record deltas</Link> for a customer and watch them turn verified.
            </li>
            <li>Commit a checkpoint, download the receipt and open its public verify page.</li>
          </ol>
        </div>
        <div class="card">
          <h2>Environments</h2>
          {contracts.loading && <Loading />}
          <ErrorBox error={contracts.error} />
          {contracts.data && (
            <ul class="plain">
              {envRows(contracts.data).map(({ env, contract }) => (
                <li key={env}>
                  <strong>{ENV_LABEL[env]}</strong>: {contract ? STATUS_TEXT[contract.status] : "Not provisioned"}
                  {env === s.env ? " (shown now)" : ""}
                </li>
              ))}
            </ul>
          )}
          <Link href="/app/environments">Manage environments</Link>
        </div>
        <Usage />
      </div>
      <DailyCharts env={s.env} />
    </section>
  );
}

/** Usage this month, live from `GET /dashboard/usage`, per environment. */
function Usage() {
  const usage = useAsync(async () => (await call<UsageReply>("GET", "/dashboard/usage", { jwt: jwt() })).data, []);
  const count = (n: number | null) => (n === null ? "unlimited" : n.toLocaleString("en-US"));
  return (
    <div class="card" data-usage>
      <h2>Usage this month</h2>
      {usage.loading && <Loading />}
      <ErrorBox error={usage.error} />
      {usage.data && (
        <>
          <p>
            Plan <strong data-plan>{usage.data.plan}</strong>. Quotas count verified deltas per environment per calendar
            month (UTC); the count starts again on {usage.data.resetsAt.slice(0, 10)}.
          </p>
          <table class="compact stack">
            <caption class="sr-only">Verified deltas this month, by environment</caption>
            <thead>
              <tr>
                <th scope="col">Environment</th>
                <th scope="col">Used</th>
                <th scope="col">Quota</th>
                <th scope="col">Left</th>
                <th scope="col">Awaiting verification</th>
              </tr>
            </thead>
            <tbody>
              {usage.data.environments.map((e) => (
                <tr key={e.environment} data-usage-env={e.environment}>
                  <th scope="row">{ENV_LABEL[e.environment]}</th>
                  <td data-label="Used" data-used>
                    {count(e.used)}
                  </td>
                  <td data-label="Quota">{e.quota === 0 ? "not included" : count(e.quota)}</td>
                  <td data-label="Left">{e.quota === 0 ? "—" : count(e.remaining)}</td>
                  <td data-label="Awaiting verification" data-backlog title={`Emits answer 429 past ${count(e.backlogMax)}`}>
                    {count(e.backlog)} of {count(e.backlogMax)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}

/** What a 403 on provisioning Production means, in words. */
function provisionError(e: unknown): unknown {
  if (e instanceof ApiError && e.status === 403) {
    return new ApiError(
      403,
      `Production is not included in your plan. New accounts are on the Free plan, which covers Sandbox only; ` +
        `Production (live data) needs the Pilot plan or above. Ask us to upgrade your account, then provision ` +
        `Production here. The service said: “${e.message}”`,
    );
  }
  return e;
}

export function Environments() {
  const contracts = useContracts();
  const [msg, setMsg] = useState<string | null>(null);
  const pending = !!contracts.data?.some((c) => c.status === "provisioning");
  usePoll(pending, 2000, 30, () => void contracts.reload());
  // Only Production's refusal is explained.
  const provisioning = useAction<EnvName>(contracts.reload, (e, env) => (env === "production" ? provisionError(e) : e));
  const { busy, error } = provisioning;
  const provision = (env: EnvName) => {
    setMsg(null);
    return provisioning.run(async () => {
      const r = await call<{ message: string }>("POST", "/dashboard/contracts/provision", {
        jwt: jwt(),
        body: { environment: CONTRACT_OF[env] },
      });
      setMsg(r.data.message ?? r.message);
    }, env);
  };
  return (
    <section>
      <PageTitle title="Environments">Environments</PageTitle>
      <p class="lede">
        Sandbox is for development: free, active from sign-up, test keys (<code>pk_test_</code>). Production holds live
        data, runs on separate infrastructure and takes live keys (<code>pk_live_</code>); it needs the Pilot plan or above.
      </p>
      {contracts.loading && !contracts.data && <Loading />}
      <ErrorBox error={contracts.error} />
      {contracts.data && (
        <Table label="Environments" columns={["Environment", "Status", "Provisioned", { title: "Actions", hidden: true }]}>
              {envRows(contracts.data).map(({ env, contract }) => (
                <tr key={env} data-env={env}>
                  <th scope="row">
                    {ENV_LABEL[env]} <span class="hint">({CONTRACT_OF[env]})</span>
                  </th>
                  <td data-status={contract?.status ?? "not_provisioned"}>
                    {STATUS_TEXT[contract?.status ?? "not_provisioned"]}
                  </td>
                  <td>{when(contract?.provisionedAt)}</td>
                  <td>
                    {contract?.status !== "active" && contract?.status !== "provisioning" && (
                      <Button kind="primary" busy={busy === env} onClick={() => provision(env)}>
                        Provision {ENV_LABEL[env]}
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
        </Table>
      )}
      <ErrorBox error={error} />
      {msg && <Notice>{msg}</Notice>}
      <p class="hint">
        Contract ids (for the <code>X-Credit-Pool-Id</code> header):{" "}
        {contracts.data?.map((c) => `${ENV_LABEL[ENV_OF_CONTRACT[c.environment]]} ${c.id}`).join(", ") || "—"}
      </p>
    </section>
  );
}

export function Settings() {
  const profile = useAsync(async () => (await call<Profile>("GET", "/dashboard/auth/profile", { jwt: jwt() })).data, []);
  const p = profile.data;
  return (
    <section>
      <PageTitle title="Settings">Settings</PageTitle>
      <div class="grid">
        <div class="card">
          <h2>Profile</h2>
          {profile.loading && <Loading />}
          <ErrorBox error={profile.error} />
          {p && (
            <dl class="facts">
              <dt>Name</dt>
              <dd>
                {p.firstName} {p.lastName}
              </dd>
              <dt>E-mail</dt>
              <dd>
                {p.email} {p.emailVerified ? "(verified)" : "(not verified yet)"}
              </dd>
              <dt>Role</dt>
              <dd>{p.role}</dd>
              <dt>Tenant id</dt>
              <dd>
                <code>{p.tenantId}</code>
              </dd>
              <dt>Member since</dt>
              <dd>{when(p.createdAt)}</dd>
              <dt>Preferred environment</dt>
              <dd>{ENV_LABEL[p.preferredEnvironment]} (change it with the switch at the top)</dd>
            </dl>
          )}
        </div>
        <ChangePassword />
        <Retention />
      </div>
    </section>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const { busy, error, onSubmit } = useSubmit();
  const submit = onSubmit(async () => {
    const r = await call("POST", "/dashboard/auth/change-password", {
      jwt: jwt(),
      body: { currentPassword: current, newPassword: next },
    });
    // The change revokes every session, this one included.
    signOut(r.message ?? "Password changed: log in again.");
    navigate("/login");
  });
  return (
    <form class="card" onSubmit={submit} aria-labelledby="pw-title">
      <h2 id="pw-title">Change password</h2>
      <PasswordField label="Current password" name="currentPassword" current value={current} onValue={setCurrent} />
      <PasswordField label="New password" name="newPassword" value={next} onValue={setNext} hint="8 to 32 characters, with an uppercase letter, a lowercase letter and a digit. Every session is logged out afterwards." />
      <ErrorBox error={error} />
      <Button kind="primary" type="submit" busy={busy}>
        Change password
      </Button>
    </form>
  );
}

function Retention() {
  const [days, setDays] = useState("null");
  const { busy, error, onSubmit } = useSubmit();
  const [saved, setSaved] = useState<string | null>(null);
  const submit = onSubmit(async () => {
    setSaved(null);
    const r = await call<{ dataRetentionDays: number | null }>("PATCH", "/dashboard/tenant/retention", {
      jwt: jwt(),
      body: { dataRetentionDays: days === "null" ? null : Number(days) },
    });
    const d = r.data.dataRetentionDays;
    setSaved(d === null ? "Saved: raw data is kept forever." : `Saved: raw data is removed ${d} days after verification.`);
  });
  return (
    <form class="card" onSubmit={submit} aria-labelledby="ret-title">
      <h2 id="ret-title">Data retention</h2>
      <p>
        How long raw business context (reasons, reference ids, metadata, webhook payloads) is kept after verification.
        Amounts, hashes, proofs and timestamps are kept forever either way.
      </p>
      <Select
        label="Keep raw data"
        name="dataRetentionDays"
        value={days}
        onValue={setDays}
        options={[
          ["null", "Forever (default)"],
          ["90", "90 days"],
          ["30", "30 days"],
          ["7", "7 days"],
        ]}
        hint="The API does not report the current setting; saving shows the value stored."
      />
      <ErrorBox error={error} />
      {saved && <Notice>{saved}</Notice>}
      <Button kind="primary" type="submit" busy={busy}>
        Save retention
      </Button>
    </form>
  );
}
