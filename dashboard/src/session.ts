// The signed-in state. The JWT lives in sessionStorage (see
// docs/dashboard.md, "The web dashboard"): it survives a reload of the tab,
// so deep links work, and it is gone when the tab closes. It never enters a
// URL. The API keys the ledger views use are kept the same way, one per
// environment, and only when the user chose to.
import { useEffect, useState } from "preact/hooks";
import { type EnvName, type LoggedIn, setUnauthorizedHandler } from "./api";

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  tenantId: string;
  isVerified: boolean;
}

export interface State {
  token: string | null;
  user: SessionUser | null;
  env: EnvName;
  /** The API key the ledger views of each environment use. */
  keys: Partial<Record<EnvName, string>>;
  /** A notice for the next page (e.g. "your session ended"). */
  flash: string | null;
  /** DEV_MODE: the dev mailbox answers. null = not known yet. */
  devMode: boolean | null;
}

const STORE_KEY = "bvs.session";

function load(): State {
  const empty: State = { token: null, user: null, env: "sandbox", keys: {}, flash: null, devMode: null };
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORE_KEY) ?? "null") as Partial<State> | null;
    return saved ? { ...empty, ...saved, flash: null, devMode: null } : empty;
  } catch {
    return empty;
  }
}

let state: State = load();
const listeners = new Set<() => void>();

export function getState(): State {
  return state;
}

/** The signed-in user's dashboard JWT, for an API call. */
export function jwt(): string | null {
  return getState().token;
}

export function update(patch: Partial<State>): void {
  state = { ...state, ...patch };
  const { token, user, env, keys } = state;
  try {
    if (token) sessionStorage.setItem(STORE_KEY, JSON.stringify({ token, user, env, keys }));
    else sessionStorage.removeItem(STORE_KEY);
  } catch {
    // Storage refused (private mode): the session lives in memory only.
  }
  for (const l of listeners) l();
}

export function useSession(): State {
  const [, force] = useState(0);
  useEffect(() => {
    const l = () => force((n) => n + 1);
    listeners.add(l);
    return () => {
      listeners.delete(l);
    };
  }, []);
  return state;
}

export function signIn(u: LoggedIn): void {
  update({
    token: u.token,
    user: { id: u.id, email: u.email, name: u.name, tenantId: u.tenantId, isVerified: u.isVerified },
    keys: {},
  });
}

export function signOut(flash: string | null = null): void {
  update({ token: null, user: null, keys: {}, flash });
}

export function takeFlash(): string | null {
  const f = state.flash;
  if (f) state = { ...state, flash: null };
  return f;
}

setUnauthorizedHandler((message) => {
  if (state.token) signOut(`Your session ended (${message}). Log in again.`);
});
