// Signed-out pages: log in, sign up, the e-mail verification landing,
// forgotten password and reset, and the dev mailbox.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, call, type LoggedIn, type Mail, type Profile } from "../api";
import { Link, navigate } from "../router";
import { getState, signIn, takeFlash, update, useSession } from "../session";
import { Button, Empty, ErrorBox, Field, Loading, Notice, PageTitle, PasswordField, useAsync, useSubmit, when } from "../ui";

const PASSWORD_RULES = "8 to 32 characters, with an uppercase letter, a lowercase letter and a digit.";

function DevMailHint({ email }: { email?: string }) {
  const { devMode } = useSession();
  if (!devMode) return null;
  const href = email ? `/mailbox?to=${encodeURIComponent(email)}` : "/mailbox";
  return (
    <p class="hint">
      Local run (DEV_MODE): e-mails are not sent but kept in the <Link href={href}>dev mailbox</Link>.
    </p>
  );
}

export function Login() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const { busy, error, onSubmit } = useSubmit();
  const [flash] = useState(takeFlash);
  const submit = onSubmit(async () => {
    const r = await call<LoggedIn>("POST", "/dashboard/auth/login", { body: { email, password } });
    signIn(r.data);
    try {
      const p = await call<Profile>("GET", "/dashboard/auth/profile", { jwt: r.data.token });
      update({ env: p.data.preferredEnvironment });
    } catch {
      // The overview loads the profile again.
    }
    navigate("/app");
  });
  return (
    <section class="narrow">
      <PageTitle title="Log in">Log in</PageTitle>
      {flash && <Notice kind="info">{flash}</Notice>}
      <form onSubmit={submit} aria-label="Log in">
        <Field label="E-mail" name="email" type="email" autoComplete="username" required value={email} onValue={setEmail} />
        <PasswordField label="Password" name="password" current value={password} onValue={setPassword} />
        <ErrorBox error={error} />
        <Button kind="primary" type="submit" busy={busy}>
          Log in
        </Button>
      </form>
      <p>
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
      <p>
        New here? <Link href="/signup">Create an account</Link> — Sandbox is free and ready at once.
      </p>
      <DevMailHint />
    </section>
  );
}

export function Signup() {
  const [form, setForm] = useState({ firstName: "", lastName: "", companyName: "", email: "", password: "" });
  const { busy, error, onSubmit } = useSubmit();
  const [done, setDone] = useState<{ email: string; message: string } | null>(null);
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  const submit = onSubmit(async () => {
    const r = await call<{ email: string }>("POST", "/dashboard/auth/register", { body: form });
    setDone({ email: r.data.email, message: r.message ?? "Account created." });
  });
  if (done)
    return (
      <section class="narrow">
        <PageTitle title="Check your e-mail">Check your e-mail</PageTitle>
        <Notice>{done.message}</Notice>
        <p>
          We sent a link to <strong>{done.email}</strong>. Open it to activate your account, then{" "}
          <Link href="/login">log in</Link>. You can log in before that, but you cannot create keys or webhooks until the
          address is verified.
        </p>
        <DevMailHint email={done.email} />
      </section>
    );
  return (
    <section class="narrow">
      <PageTitle title="Create an account">Create an account</PageTitle>
      <p class="lede">Free plan: Sandbox is active at once, with 10 verified deltas a month. Production needs the Pilot plan.</p>
      <form onSubmit={submit} aria-label="Create an account">
        <div class="row2">
          <Field label="First name" name="firstName" autoComplete="given-name" required value={form.firstName} onValue={set("firstName")} />
          <Field label="Last name" name="lastName" autoComplete="family-name" required value={form.lastName} onValue={set("lastName")} />
        </div>
        <Field label="Company" name="companyName" autoComplete="organization" required value={form.companyName} onValue={set("companyName")} />
        <Field label="E-mail" name="email" type="email" autoComplete="email" required value={form.email} onValue={set("email")} />
        <PasswordField label="Password" name="password" value={form.password} onValue={set("password")} hint={PASSWORD_RULES} />
        <ErrorBox error={error}>
          {error instanceof ApiError && error.status === 409 ? (
            <p>
              <Link href="/login">Log in</Link> or <Link href="/forgot-password">reset the password</Link>.
            </p>
          ) : null}
        </ErrorBox>
        <Button kind="primary" type="submit" busy={busy}>
          Create account
        </Button>
      </form>
      <p>
        Already have an account? <Link href="/login">Log in</Link>.
      </p>
    </section>
  );
}

/**
 * The e-mail verification landing, /verify-email?token=...: spends the
 * token through GET /dashboard/auth/verify and says what happened. The
 * verification mail and the dev mailbox link here.
 */
export function VerifyEmail({ token }: { token: string | null }) {
  const [state, setState] = useState<{ ok: boolean; text: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const started = useRef(false);
  const [email, setEmail] = useState("");
  const [resent, setResent] = useState<string | null>(null);
  // Before the first paint, not after it: the single-use token must
  // never be visible in the address bar, the history or a screenshot.
  useLayoutEffect(() => {
    history.replaceState(null, "", location.pathname);
  }, []);
  useEffect(() => {
    if (started.current || !token) return;
    started.current = true;
    call<unknown>("GET", "/dashboard/auth/verify", { query: { token } })
      .then((r) => setState({ ok: true, text: r.message ?? "E-mail verified." }))
      .catch(setError);
  }, [token]);
  const resend = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await call<unknown>("POST", "/dashboard/auth/resend-verification-email", { body: { email } });
      setResent(r.message);
    } catch (err) {
      setError(err);
    }
  };
  const signedIn = !!getState().token;
  return (
    <section class="narrow">
      <PageTitle title="Verify your e-mail">Verify your e-mail</PageTitle>
      {!token && <ErrorBox error={new Error("This link has no token. Open the link from the e-mail again.")} />}
      {token && !state && !error && <Loading what="Checking the link" />}
      {state && (
        <div data-verified="true">
          <Notice>{state.text}</Notice>
          <p>{signedIn ? <Link href="/app">Go to the dashboard</Link> : <Link href="/login">Log in</Link>}</p>
        </div>
      )}
      {error ? (
        <>
          <ErrorBox error={error} />
          <form onSubmit={resend} aria-label="Send a new verification link">
            <Field label="Your e-mail" name="email" type="email" required value={email} onValue={setEmail} />
            <Button type="submit">Send a new link</Button>
          </form>
          {resent && <Notice kind="info">{resent}</Notice>}
        </>
      ) : null}
    </section>
  );
}

export function ForgotPassword() {
  const [email, setEmail] = useState("");
  const { busy, error, onSubmit } = useSubmit();
  const [sent, setSent] = useState<string | null>(null);
  const submit = onSubmit(async () => {
    const r = await call<unknown>("POST", "/dashboard/auth/request-password-reset", { body: { email } });
    setSent(r.message ?? "If an account exists for this e-mail, a link has been sent.");
  });
  return (
    <section class="narrow">
      <PageTitle title="Forgot your password">Forgot your password?</PageTitle>
      <p class="lede">We will e-mail you a link to choose a new one. It works for one hour.</p>
      <form onSubmit={submit} aria-label="Request a password reset">
        <Field label="E-mail" name="email" type="email" autoComplete="email" required value={email} onValue={setEmail} />
        <ErrorBox error={error} />
        <Button kind="primary" type="submit" busy={busy}>
          Send the link
        </Button>
      </form>
      {sent && <Notice>{sent}</Notice>}
      <DevMailHint email={email || undefined} />
      <p>
        <Link href="/login">Back to log in</Link>
      </p>
    </section>
  );
}

/** The reset e-mail links to /reset-password?token=... */
export function ResetPassword({ token: fromUrl }: { token: string | null }) {
  const [token] = useState(fromUrl ?? "");
  const [password, setPassword] = useState("");
  const { busy, error, onSubmit } = useSubmit();
  const [done, setDone] = useState<string | null>(null);
  // The token stays in this page's memory, not in the address bar. A
  // layout effect runs in the same task as the render that shows the
  // heading, so nobody sees the page with the token still in the URL (a
  // plain effect ran after the paint, and the browser journey caught it).
  useLayoutEffect(() => {
    history.replaceState(null, "", location.pathname);
  }, []);
  const submit = onSubmit(async () => {
    const r = await call<unknown>("POST", "/dashboard/auth/reset-password", { body: { token, newPassword: password } });
    setDone(r.message ?? "Password reset.");
  });
  return (
    <section class="narrow">
      <PageTitle title="Choose a new password">Choose a new password</PageTitle>
      {!token && (
        <ErrorBox error={new Error("This page needs the link from the reset e-mail.")}>
          <p>
            <Link href="/forgot-password">Ask for a new link</Link>
          </p>
        </ErrorBox>
      )}
      {done ? (
        <>
          <Notice>{done}</Notice>
          <p>
            <Link href="/login">Log in</Link>
          </p>
        </>
      ) : (
        token && (
          <form onSubmit={submit} aria-label="Choose a new password">
            <PasswordField label="New password" name="newPassword" value={password} onValue={setPassword} hint={PASSWORD_RULES} />
            <ErrorBox error={error}>
              {error instanceof ApiError && /token/.test(error.message) ? (
                <p>
                  <Link href="/forgot-password">Ask for a new link</Link>
                </p>
              ) : null}
            </ErrorBox>
            <Button kind="primary" type="submit" busy={busy}>
              Save the new password
            </Button>
          </form>
        )
      )}
    </section>
  );
}

/** DEV_MODE only: the outbox of GET /dev/mail?to=, links clickable. */
export function Mailbox({ to: initial }: { to: string | null }) {
  const session = useSession();
  const [to, setTo] = useState(initial ?? session.user?.email ?? "");
  const [shown, setShown] = useState(initial ?? session.user?.email ?? "");
  const mails = useAsync(
    async () => (shown ? (await call<Mail[]>("GET", "/dev/mail", { query: { to: shown } })).data : []),
    [shown],
  );
  return (
    <section>
      <PageTitle title="Dev mailbox">Dev mailbox</PageTitle>
      <p class="lede">
        Local runs (DEV_MODE) send no e-mail: every message is kept here. A deployed service sends real e-mail and has no
        such page.
      </p>
      <form
        class="inline-form"
        aria-label="Show mail for an address"
        onSubmit={(e) => {
          e.preventDefault();
          setShown(to);
          history.replaceState(null, "", `/mailbox?to=${encodeURIComponent(to)}`);
        }}
      >
        <Field label="Address" name="to" type="email" required value={to} onValue={setTo} />
        <Button type="submit" kind="primary">
          Show mail
        </Button>
      </form>
      {mails.loading && shown ? <Loading what="Reading the mailbox" /> : null}
      <ErrorBox error={mails.error} />
      {mails.data && shown && mails.data.length === 0 && <Empty>No mail for {shown} yet.</Empty>}
      {mails.data && mails.data.length > 0 && (
        <ol class="mails">
          {mails.data.map((m) => (
            <li key={m.id} class="card mail" data-kind={m.kind}>
              <h2>{m.subject}</h2>
              <p class="hint">
                To {m.to}, {when(m.createdAt)}
              </p>
              {m.kind === "verify_email" && m.token && (
                <p>
                  <a class="btn primary" href={`/verify-email?token=${encodeURIComponent(m.token)}`}>
                    Verify in the dashboard
                  </a>
                </p>
              )}
              <MailBody text={m.body} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function MailBody({ text }: { text: string }) {
  // Links in the body (absolute, or relative in local runs) become anchors.
  const parts = text.split(/(\s+)/);
  return (
    <p class="mail-body">
      {parts.map((p, i) =>
        /^(https?:\/\/\S+|\/(dashboard|reset-password|verify-email)\S*)$/.test(p) ? (
          <a key={i} href={p}>
            {p.replace(/token=([A-Za-z0-9]{6})[A-Za-z0-9]+/, "token=$1…")}
          </a>
        ) : (
          p
        ),
      )}
    </p>
  );
}
