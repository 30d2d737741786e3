// A chart with its table: the drawing comes from ./chart-draw (uPlot),
// loaded only when a page shows a chart; the same numbers are always in a
// table, read by screen readers and shown on request.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { ChartSpec } from "./chart-draw";
import { ErrorBox } from "./ui";

let cssAdded = false;
/** uPlot's own stylesheet, copied next to the chunk by the build. */
function addCss(): void {
  if (cssAdded) return;
  cssAdded = true;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = "/assets/uplot.css";
  document.head.append(link);
}

let nextId = 0;

export interface TableSpec {
  caption: string;
  columns: string[];
  rows: (string | number)[][];
  /** Columns aligned right (numbers). */
  numeric?: number[];
}

/** Unix seconds of an ISO time (or a YYYY-MM-DD day, at 00:00 UTC). */
export function seconds(iso: string): number {
  return Date.parse(iso.length === 10 ? `${iso}T00:00:00Z` : iso) / 1000;
}

export function Chart({
  name,
  title,
  children,
  spec,
  table,
}: {
  name: string;
  title: string;
  /** What the chart shows, in words (the figure's caption). */
  children: ComponentChildren;
  spec: ChartSpec;
  table: TableSpec;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [drawn, setDrawn] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState(false);
  const id = useRef(`chart-table-${++nextId}`).current;
  const key = JSON.stringify(spec);
  useEffect(() => {
    let undo: (() => void) | null = null;
    let alive = true;
    addCss();
    import("./chart-draw")
      .then((m) => {
        if (!alive || !ref.current) return;
        ref.current.textContent = "";
        undo = m.draw(ref.current, spec);
        setDrawn(true);
      })
      .catch((e) => setError(new Error(`The chart could not be drawn (${String(e)}); the table below has its numbers.`)));
    return () => {
      alive = false;
      undo?.();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  return (
    <figure class="chart" data-chart={name} data-points={spec.x.length} data-drawn={String(drawn)}>
      <figcaption>
        <strong>{title}</strong> {children}
      </figcaption>
      <div class="chart-canvas" ref={ref} aria-hidden="true" />
      <ErrorBox error={error} />
      <button type="button" class="btn link" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        {open ? "Hide the table" : "Show as a table"}
      </button>
      <div id={id} class={open ? "table-wrap" : "sr-only"} role="region" aria-label={table.caption} tabIndex={open ? 0 : -1}>
        <table class="compact" data-chart-table={name}>
          <caption class="sr-only">{table.caption}</caption>
          <thead>
            <tr>
              {table.columns.map((c, i) => (
                <th scope="col" key={c} class={table.numeric?.includes(i) ? "num" : undefined}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {table.rows.map((r, i) => (
              <tr key={i}>
                {r.map((v, j) => (
                  <td key={j} class={table.numeric?.includes(j) ? "num" : undefined}>
                    {v}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
