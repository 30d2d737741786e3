// A small history-API router: the dashboard's pages are real paths
// (/login, /app/keys, ...), served index.html by Workers assets' SPA
// fallback on reload.
import type { AnchorHTMLAttributes, ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

const EVENT = "bvs:navigate";

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  window.dispatchEvent(new Event(EVENT));
}

export interface Location {
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  return { path: location.pathname.replace(/\/+$/, "") || "/", query: new URLSearchParams(location.search) };
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const on = () => setLoc(current());
    window.addEventListener("popstate", on);
    window.addEventListener(EVENT, on);
    return () => {
      window.removeEventListener("popstate", on);
      window.removeEventListener(EVENT, on);
    };
  }, []);
  return loc;
}

/** Matches `/app/customers/:id` style patterns; params are decoded. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/");
  const have = path.split("/");
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? "";
    const h = have[i] ?? "";
    if (w.startsWith(":")) {
      if (!h) return null;
      try {
        params[w.slice(1)] = decodeURIComponent(h);
      } catch {
        return null;
      }
    } else if (w !== h) return null;
  }
  return params;
}

type AnchorProps = AnchorHTMLAttributes<HTMLAnchorElement> & { href: string; children?: ComponentChildren };

/** An in-app link: a real <a href> (open in a new tab works), routed here. */
export function Link({ href, children, ...rest }: AnchorProps) {
  return (
    <a
      {...rest}
      href={href}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
