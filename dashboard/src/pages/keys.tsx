// API keys: create (secret shown once), list, disable/enable, delete.
import { useState } from "preact/hooks";
import { type ApiKey, call, type CreatedApiKey, type EnvName, ENV_LABEL, ENV_OF_KEY, KEY_ENV_OF } from "../api";
import { Link } from "../router";
import { getState, jwt, update, useSession } from "../session";
import { Button, ConfirmButton, Empty, ErrorBox, Field, Loading, Notice, PageTitle, SecretOnce, Select, Table, useAction, useAsync, when } from "../ui";

/** Keeps `key` (this tab only) as the one the ledger views of `env` use. */
export function keepKeyForLedgers(env: EnvName, key: string | null): void {
  update({ keys: { ...getState().keys, [env]: key ?? undefined } });
}

export function Keys() {
  const s = useSession();
  const keys = useAsync(async () => (await call<ApiKey[]>("GET", "/dashboard/api-keys", { jwt: jwt() })).data, []);
  const [name, setName] = useState("");
  const [env, setEnv] = useState<EnvName>(s.env);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const creating = useAction(keys.reload);
  const row = useAction(keys.reload);
  const create = (e: Event) => {
    e.preventDefault();
    setCreated(null);
    return creating.run(async () => {
      const r = await call<CreatedApiKey>("POST", "/dashboard/api-keys", {
        jwt: jwt(),
        body: { environment: KEY_ENV_OF[env], ...(name.trim() ? { name: name.trim() } : {}) },
      });
      setCreated(r.data);
      // The first key of an environment also opens its ledgers here.
      if (!getState().keys[env]) keepKeyForLedgers(env, r.data.key);
      setName("");
    }, true);
  };
  const act = (f: () => Promise<unknown>) => row.run(async () => void (await f()), true);
  return (
    <section>
      <PageTitle title="API keys">API keys</PageTitle>
      <p class="lede">
        Your code sends a key in the <code>X-Api-Key</code> header. A Sandbox key (<code>pk_test_</code>) reaches only
        Sandbox, a Production key (<code>pk_live_</code>) only Production.
      </p>
      <form class="card" onSubmit={create} aria-labelledby="new-key">
        <h2 id="new-key">Create a key</h2>
        <div class="row2">
          <Field label="Name (optional)" name="keyName" value={name} onValue={setName} maxLength={100} placeholder="e.g. billing-service" />
          <Select
            label="Environment of the key"
            name="keyEnvironment"
            value={env}
            onValue={(v) => setEnv(v as EnvName)}
            options={[
              ["sandbox", "Sandbox (pk_test_)"],
              ["production", "Production (pk_live_)"],
            ]}
          />
        </div>
        <ErrorBox error={creating.error} />
        <Button kind="primary" type="submit" busy={creating.busy !== null}>
          Create key
        </Button>
      </form>
      {created && (
        <SecretOnce label={`Your new ${ENV_LABEL[ENV_OF_KEY[created.environment]]} key`} value={created.key}>
          {s.keys[ENV_OF_KEY[created.environment]] === created.key ? (
            <p>
              This tab also uses it to show your <Link href="/app/customers">customers</Link>; closing the tab forgets it.
            </p>
          ) : (
            <Button onClick={() => keepKeyForLedgers(ENV_OF_KEY[created.environment], created.key)}>
              Use this key for the customer pages in this tab
            </Button>
          )}
        </SecretOnce>
      )}
      <h2>Your keys</h2>
      {keys.loading && !keys.data && <Loading />}
      <ErrorBox error={keys.error} />
      <ErrorBox error={row.error} />
      {keys.data && keys.data.length === 0 && <Empty>No keys yet: create one above.</Empty>}
      {keys.data && keys.data.length > 0 && (
        <Table label="Your keys" class="stack" columns={["Name", "Key (prefix)", "Environment", "State", "Created", "Last used", { title: "Actions", hidden: true }]}>
              {keys.data.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <td data-label="Name">{k.name ?? <span class="hint">unnamed</span>}</td>
                  <td data-label="Key">
                    <code>{k.prefix}</code>
                  </td>
                  <td data-label="Environment">{ENV_LABEL[ENV_OF_KEY[k.environment]]}</td>
                  <td data-label="State" data-active={String(k.active)}>{k.active ? "Enabled" : "Disabled"}</td>
                  <td data-label="Created">{when(k.createdAt)}</td>
                  <td data-label="Last used">{when(k.lastUsedAt)}</td>
                  <td class="actions">
                    <Button onClick={() => act(() => call("POST", `/dashboard/api-keys/${encodeURIComponent(k.id)}/toggle`, { jwt: jwt() }))}>
                      {k.active ? "Disable" : "Enable"}
                    </Button>
                    <ConfirmButton
                      label="Delete"
                      question={`Delete ${k.prefix}? Requests with it fail at once; this cannot be undone.`}
                      confirmLabel="Delete key"
                      onConfirm={() => act(() => call("DELETE", `/dashboard/api-keys/${encodeURIComponent(k.id)}`, { jwt: jwt() }))}
                    />
                  </td>
                </tr>
              ))}
        </Table>
      )}
      <LedgerKeys />
    </section>
  );
}

/** The keys this tab uses for the customer pages, one per environment. */
function LedgerKeys() {
  const s = useSession();
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  return (
    <div class="card">
      <h2>Key used by the customer pages</h2>
      <p>
        The ledger pages call the balance API, which takes an API key, not your login. This tab keeps one key per
        environment (in session storage, gone when the tab closes). Secrets cannot be shown again, so paste one you saved.
      </p>
      <ul class="plain">
        {(["sandbox", "production"] as EnvName[]).map((env) => (
          <li key={env}>
            <strong>{ENV_LABEL[env]}</strong>:{" "}
            {s.keys[env] ? (
              <>
                <code>{s.keys[env]?.split(".")[0]}</code>{" "}
                <Button kind="link" onClick={() => keepKeyForLedgers(env, null)}>
                  Forget it
                </Button>
              </>
            ) : (
              "none"
            )}
          </li>
        ))}
      </ul>
      <form
        class="inline-form"
        aria-label="Use a saved key"
        onSubmit={(e) => {
          e.preventDefault();
          const m = /^pk_(test|live)_[A-Za-z0-9]+\.[A-Za-z0-9]+$/.exec(text.trim());
          if (!m) {
            setError("That is not an API key: it looks like pk_test_<id>.<secret> or pk_live_<id>.<secret>.");
            return;
          }
          setError(null);
          keepKeyForLedgers(ENV_OF_KEY[m[1] as "test" | "live"], text.trim());
          setText("");
        }}
      >
        <Field label="Saved key" name="savedKey" type="password" autoComplete="off" value={text} onValue={setText} />
        <Button type="submit">Use it</Button>
      </form>
      {error && <ErrorBox error={new Error(error)} />}
      {s.keys.sandbox || s.keys.production ? <Notice kind="info">Keys kept in this tab are forgotten when you log out.</Notice> : null}
    </div>
  );
}
