// The one module that draws charts, with uPlot (a small, well-kept chart
// library): loaded with import() by the pages that draw a chart, so its
// code is a chunk of its own and the rest of the dashboard never pays for
// it (docs/dashboard.md, "JavaScript budget"). It imports nothing of the
// dashboard, so the chunk holds uPlot and this glue only.
import uPlot from "uplot";

export interface SeriesSpec {
  label: string;
  values: (number | null)[];
  kind: "line" | "steps" | "bars";
  /** A marker on every value (e.g. one per verified delta). */
  points?: boolean;
  color: string;
  /** The right-hand axis instead of the left. */
  right?: boolean;
  dash?: boolean;
}

export interface ChartSpec {
  /** Unix seconds. */
  x: number[];
  series: SeriesSpec[];
  yLabel: string;
  rightLabel?: string;
  /** A log scale for the left axis (values must be > 0). */
  logY?: boolean;
  height?: number;
}

function pathsOf(kind: SeriesSpec["kind"]) {
  const p = uPlot.paths;
  if (kind === "bars" && p.bars) return p.bars({ size: [0.6, 40] });
  if (kind === "steps" && p.stepped) return p.stepped({ align: 1 });
  return undefined;
}

/** Draws `spec` into `el`, as wide as `el`, following its width; returns the undo. */
export function draw(el: HTMLElement, spec: ChartSpec): () => void {
  const width = () => Math.max(240, Math.floor(el.getBoundingClientRect().width));
  const hasRight = spec.series.some((s) => s.right);
  const opts: uPlot.Options = {
    width: width(),
    height: spec.height ?? 240,
    // Every time in the dashboard is UTC.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
    legend: { show: true },
    cursor: { points: { size: 7 } },
    scales: {
      // Room on both sides, so the first and last points (and bars) show
      // whole, and a few points close together still get an axis of minutes.
      x: {
        time: true,
        range: (_u, min, max) => {
          const pad = Math.max(30, (max - min) * 0.03);
          return [min - pad, max + pad];
        },
      },
      y: spec.logY ? { distr: 3 } : {},
      ...(hasRight ? { r: {} } : {}),
    },
    axes: [
      { stroke: "#4a4a4a", grid: { stroke: "#e3e3e3" } },
      { label: spec.yLabel, stroke: "#4a4a4a", grid: { stroke: "#e3e3e3" }, size: 70 },
      ...(hasRight ? [{ label: spec.rightLabel ?? "", scale: "r", side: 1, stroke: "#4a4a4a", grid: { show: false }, size: 70 }] : []),
    ],
    series: [
      {},
      ...spec.series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        scale: s.right ? "r" : "y",
        fill: s.kind === "bars" ? `${s.color}66` : undefined,
        paths: pathsOf(s.kind),
        dash: s.dash ? [6, 4] : undefined,
        spanGaps: false,
        points: { show: !!s.points, size: 6, fill: s.color, stroke: s.color },
      })),
    ],
  };
  const data = [spec.x, ...spec.series.map((s) => s.values)] as uPlot.AlignedData;
  const plot = new uPlot(opts, data, el);
  const observer = new ResizeObserver(() => {
    const w = width();
    if (w !== plot.width) plot.setSize({ width: w, height: opts.height });
  });
  observer.observe(el);
  return () => {
    observer.disconnect();
    plot.destroy();
  };
}
