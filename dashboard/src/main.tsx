// The vendor dashboard: one page application on the service's own API.
// Routes: `/` and the signed-out pages, `/app/...` once signed in. Workers
// assets answer every unknown path with index.html, so each of these
// addresses works on reload.
import "./style.css";
import { render } from "preact";
import { useEffect } from "preact/hooks";
import { call } from "./api";
import { AppPages } from "./pages/index";
import { ForgotPassword, Login, Mailbox, ResetPassword, Signup, VerifyEmail } from "./pages/auth";
import { Link, navigate, useLocation } from "./router";
import { getState, update, useSession } from "./session";
import { PageTitle } from "./ui";

/** DEV_MODE is on when the dev mailbox answers (404 otherwise). */
async function probeDevMode(): Promise<void> {
  try {
    await call("GET", "/dev/mail", { query: { to: "probe@example.com" } });
    update({ devMode: true });
  } catch {
    update({ devMode: false });
  }
}

function Home() {
  return (
    <section class="narrow home">
      <PageTitle title="Welcome">Balance verification service</PageTitle>
      <p class="lede">
        Record signed adjustments to your customers' balances; we verify each one into a signed, append-only log, so you,
        your customer and any auditor can check every balance without trusting us.
      </p>
      <div class="actions">
        <Link class="btn primary" href="/signup">
          Create an account
        </Link>
        <Link class="btn secondary" href="/login">
          Log in
        </Link>
      </div>
      <p class="hint">
        Anyone can check a proof at <code>/verify/&lt;proof root&gt;</code>. The API is described at{" "}
        <a href="/openapi.json">/openapi.json</a>.
      </p>
    </section>
  );
}

function NotFound() {
  return (
    <section class="narrow">
      <PageTitle title="Page not found">Page not found</PageTitle>
      <p>
        There is no page at <code>{location.pathname}</code>. <Link href="/">Go to the start page</Link>.
      </p>
    </section>
  );
}

function PublicFrame({ children }: { children: preact.ComponentChildren }) {
  const { devMode, token } = useSession();
  return (
    <>
      <header class="top">
        <div class="top-row">
          <Link href={token ? "/app" : "/"} class="brand">
            Balance verification
          </Link>
          <nav aria-label="Account">
            <ul>
              {token ? (
                <li>
                  <Link href="/app">Dashboard</Link>
                </li>
              ) : (
                <>
                  <li>
                    <Link href="/login">Log in</Link>
                  </li>
                  <li>
                    <Link href="/signup">Sign up</Link>
                  </li>
                </>
              )}
              {devMode && (
                <li>
                  <Link href="/mailbox">Dev mailbox</Link>
                </li>
              )}
            </ul>
          </nav>
        </div>
      </header>
      <main id="main">{children}</main>
    </>
  );
}

function App() {
  const { path, query } = useLocation();
  const { token } = useSession();
  useEffect(() => {
    void probeDevMode();
  }, []);
  const signedInOnly = path === "/app" || path.startsWith("/app/");
  useEffect(() => {
    if (signedInOnly && !token) {
      if (!getState().flash) update({ flash: "Log in to open the dashboard." });
      navigate("/login", true);
    } else if (token && (path === "/" || path === "/login" || path === "/signup")) {
      navigate("/app", true);
    }
  }, [signedInOnly, token, path]);
  if (signedInOnly) return token ? <AppPages path={path} /> : null;
  let page;
  switch (path) {
    case "/":
      page = <Home />;
      break;
    case "/login":
      page = <Login />;
      break;
    case "/signup":
      page = <Signup />;
      break;
    case "/forgot-password":
      page = <ForgotPassword />;
      break;
    case "/reset-password":
      page = <ResetPassword token={query.get("token")} />;
      break;
    // The e-mail verification landing. The mail itself links to the API
    // route GET /dashboard/auth/verify (worker/src/mail.rs), which answers
    // JSON; the dev mailbox offers this page for it.
    case "/verify-email":
      page = <VerifyEmail token={query.get("token")} />;
      break;
    case "/mailbox":
      page = <Mailbox to={query.get("to")} />;
      break;
    default:
      page = <NotFound />;
  }
  return <PublicFrame>{page}</PublicFrame>;
}

const root = document.getElementById("root");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
