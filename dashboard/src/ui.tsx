// Shared pieces: form fields with labels, error and status boxes, loading
// and empty states, a secret shown once with a copy button, an inline
// confirmation.
import type { ButtonHTMLAttributes, ComponentChildren, InputHTMLAttributes, PartialInputHTMLAttributes } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api";
import { Link } from "./router";
import { getState } from "./session";

let nextId = 0;
function useId(prefix: string): string {
  const ref = useRef<string | null>(null);
  if (ref.current === null) ref.current = `${prefix}-${++nextId}`;
  return ref.current;
}

type InputProps = Omit<PartialInputHTMLAttributes<HTMLInputElement>, "onInput" | "value" | "label" | "type" | "name" | "role"> & {
  label: string;
  value: string;
  onValue: (v: string) => void;
  hint?: ComponentChildren;
  name: string;
  type?: "text" | "email" | "password" | "url";
};

export function Field({ label, value, onValue, hint, name, type = "text", ...rest }: InputProps) {
  const id = useId(name);
  // Preact's input types tie `role` to `type`; the union is one cast here.
  const attrs = {
    ...rest,
    id,
    name,
    type,
    value,
    "aria-describedby": hint ? `${id}-hint` : undefined,
    onInput: (e: Event) => onValue((e.currentTarget as HTMLInputElement).value),
  } as InputHTMLAttributes<HTMLInputElement>;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input {...attrs} />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

type SelectProps = {
  label: string;
  name: string;
  value: string;
  onValue: (v: string) => void;
  options: [string, string][];
  hint?: ComponentChildren;
  disabled?: boolean;
};

export function Select({ label, name, value, onValue, options, hint, disabled }: SelectProps) {
  const id = useId(name);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        name={name}
        value={value}
        disabled={disabled}
        aria-describedby={hint ? `${id}-hint` : undefined}
        onChange={(e) => onValue((e.currentTarget as HTMLSelectElement).value)}
      >
        {options.map(([v, text]) => (
          <option value={v} key={v}>
            {text}
          </option>
        ))}
      </select>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

/** The API's own words for an error; moves focus to itself when shown. */
export function ErrorBox({ error, children }: { error: unknown; children?: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (error) ref.current?.focus();
  }, [error]);
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const status = error instanceof ApiError && error.status ? ` (HTTP ${error.status})` : "";
  return (
    <div class="box error" role="alert" tabIndex={-1} ref={ref} data-status={error instanceof ApiError ? error.status : ""}>
      <strong>Error{status}:</strong> {message}
      {error instanceof ApiError && error.retryAfter ? <> Try again in {error.retryAfter} s.</> : null}
      {error instanceof ApiError && error.requestId && error.status !== 401 && getState().token ? (
        <p class="hint" data-request-id={error.requestId}>
          Request-Id <code>{error.requestId}</code>:{" "}
          <Link href={`/app/logs/${encodeURIComponent(error.requestId)}`}>see the request in the log</Link>
        </p>
      ) : null}
      {children}
    </div>
  );
}

export function Notice({ children, kind = "ok" }: { children: ComponentChildren; kind?: "ok" | "info" | "warn" }) {
  return (
    <div class={`box ${kind}`} role="status">
      {children}
    </div>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" /> {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** Newer/Older buttons of a list read newest first with cursors:
 * `cursors` are those of the pages before the one shown (its own is the
 * last), `next` the shown page's `nextCursor`; `children` join the bar. */
export function CursorPager({ cursors, onCursors, next, children }: { cursors: string[]; onCursors: (c: string[]) => void; next: string | null | undefined; children?: ComponentChildren }) {
  return (
    <nav class="pager" aria-label="Pages">
      <Button disabled={cursors.length === 0} onClick={() => onCursors(cursors.slice(0, -1))}>
        ← Newer
      </Button>
      <Button disabled={!next} onClick={() => next && onCursors([...cursors, next])}>
        Older →
      </Button>
      {children}
    </nav>
  );
}

/** A column of a `Table`: its title; `num` right-aligns numbers, `hidden`
 *  keeps the title for screen readers only (an actions column). */
export type Column = string | { title: string; num?: true; hidden?: true };

/** A data table in a labelled region that scrolls sideways on its own (the
 *  page never does, at 390 px too): `class` "stack" lays rows out as cards
 *  on a phone, "compact" tightens cells. The rows are the children. */
export function Table({ label, columns, class: kind, id, children }: { label: string; columns: Column[]; class?: string; id?: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table class={kind} id={id}>
        <thead>
          <tr>
            {columns.map((c) => {
              const col = typeof c === "string" ? { title: c } : c;
              return (
                <th scope="col" key={col.title} class={"num" in col && col.num ? "num" : undefined}>
                  {"hidden" in col && col.hidden ? <span class="sr-only">{col.title}</span> : col.title}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A required password field: the account's own (`current`) or a new one,
 * so password managers fill or suggest. */
export function PasswordField({ current, ...rest }: { label: string; name: string; current?: boolean; value: string; onValue: (v: string) => void; hint?: ComponentChildren }) {
  return <Field {...rest} type="password" autoComplete={current ? "current-password" : "new-password"} required />;
}

type ButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, "type" | "disabled"> & {
  busy?: boolean;
  kind?: "primary" | "secondary" | "danger" | "link";
  type?: "button" | "submit";
  disabled?: boolean;
};

export function Button({ busy, kind = "secondary", children, disabled, type = "button", ...rest }: ButtonProps) {
  return (
    <button {...rest} type={type} class={`btn ${kind}`} disabled={disabled || busy} aria-busy={busy ? "true" : undefined}>
      {children}
      {busy ? "…" : ""}
    </button>
  );
}

/** A secret the API shows once: copy button and a warning. */
export function SecretOnce({ label, value, children }: { label: string; value: string; children?: ComponentChildren }) {
  const [copied, setCopied] = useState<string | null>(null);
  const ref = useRef<HTMLElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("Copied to the clipboard.");
    } catch {
      const range = document.createRange();
      if (ref.current) range.selectNodeContents(ref.current);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      setCopied("Selected: press Ctrl+C (or ⌘C) to copy.");
    }
  };
  return (
    <div class="box secret" role="region" aria-label={label}>
      <p>
        <strong>{label}</strong>
      </p>
      <p class="warn-text">
        Copy it now and store it somewhere safe: it is shown <strong>only this once</strong>. The service keeps only a
        hash of it and cannot show it again.
      </p>
      <div class="secret-row">
        <code class="secret-value" ref={ref} data-secret>
          {value}
        </code>
        <Button kind="primary" onClick={copy}>
          Copy
        </Button>
      </div>
      <p class="hint" role="status">
        {copied ?? ""}
      </p>
      {children}
    </div>
  );
}

/** A button that asks once more, inline, before a destructive action. */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yes.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <Button kind="danger" onClick={() => setAsking(true)}>
        {label}
      </Button>
    );
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        ref={yes}
        type="button"
        class="btn danger"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            await onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        {confirmLabel}
      </button>
      <Button onClick={() => setAsking(false)}>Cancel</Button>
    </span>
  );
}

export interface Async<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Runs `load` now and whenever `deps` change; `reload` runs it again. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const run = useCallback(async () => {
    const mine = ++seq.current;
    setLoading(true);
    try {
      const d = await load();
      if (mine === seq.current) {
        setData(d);
        setError(null);
      }
    } catch (e) {
      if (mine === seq.current) setError(e);
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void run();
  }, [run]);
  return { data, error, loading, reload: run };
}

/** A page's action (create, toggle, commit...): `run(task, key)` marks `key`
 * busy, clears the error, runs `task`, then reloads what the page lists
 * (`reload`); a failure of either is kept as `error` (through `mapError`,
 * which is told the key). */
export interface Action<K> {
  busy: K | null;
  error: unknown;
  run: (task: () => Promise<void>, key: K) => Promise<void>;
}

export function useAction<K = true>(
  reload?: () => Promise<unknown>,
  mapError: (e: unknown, key: K) => unknown = (e) => e,
): Action<K> {
  const [busy, setBusy] = useState<K | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = async (task: () => Promise<void>, key: K) => {
    setBusy(key);
    setError(null);
    try {
      await task();
      if (reload) await reload();
    } catch (e) {
      setError(mapError(e, key));
    } finally {
      setBusy(null);
    }
  };
  return { busy, error, run };
}

/** A form's one action: `onSubmit(task)` is the form's submit handler (it
 * stops the browser's own submit and runs `task`); `busy` while it runs, its
 * failure kept as `error`. */
export function useSubmit() {
  const action = useAction();
  const onSubmit = (task: () => Promise<void>) => (e: Event) => {
    e.preventDefault();
    return action.run(task, true);
  };
  return { busy: action.busy !== null, error: action.error, onSubmit };
}

/** Calls `tick` every `ms` while `on`, at most `maxTicks` times. */
export function usePoll(on: boolean, ms: number, maxTicks: number, tick: () => void): void {
  const fn = useRef(tick);
  fn.current = tick;
  useEffect(() => {
    if (!on) return;
    let n = 0;
    const t = setInterval(() => {
      n += 1;
      if (n > maxTicks) clearInterval(t);
      else fn.current();
    }, ms);
    return () => clearInterval(t);
  }, [on, ms, maxTicks]);
}

/** `2026-11-23 11:05 UTC`: one unambiguous form everywhere. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export function short(hash: string, n = 12): string {
  return hash.length > n ? `${hash.slice(0, n)}…` : hash;
}

/** The page's title and its <h1>, which takes focus on navigation. */
export function PageTitle({ children, title }: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Balance verification`;
    ref.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

/** A status in words and colour: 2xx passed, 4xx and 5xx failed. */
export function StatusBadge({ status }: { status: number }) {
  const kind = status < 400 ? "pass" : "fail";
  return (
    <span class={`badge ${kind}`} data-http-status={status}>
      {status}
    </span>
  );
}

/**
 * JSON text laid out on lines, without parsing it: numbers (exact
 * amounts) stay as written. Anything that is not balanced JSON comes back
 * as it was.
 */
export function prettyJson(text: string): string {
  let out = "";
  let depth = 0;
  let inString = false;
  let escaped = false;
  const newline = () => `\n${"  ".repeat(Math.max(0, depth))}`;
  for (const c of text) {
    if (inString) {
      out += c;
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
    } else if (c === "{" || c === "[") {
      depth += 1;
      out += c + newline();
    } else if (c === "}" || c === "]") {
      depth -= 1;
      out += newline() + c;
    } else if (c === ",") out += c + newline();
    else if (c === ":") out += ": ";
    else if (!/\s/.test(c)) out += c;
  }
  if (depth !== 0 || inString) return text;
  // Empty objects and arrays stay on one line.
  return out.replace(/([{[])\n\s*([}\]])/g, "$1$2");
}
