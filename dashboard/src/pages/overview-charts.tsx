// The overview's charts (GET /dashboard/usage/daily): verified deltas per
// day against the plan's monthly quota, and the verification lag per day
// at p50 and p99. Each has its table.
import { call, type DailyUsage, type EnvName, ENV_LABEL } from "../api";
import { Chart, seconds } from "../charts";
import { ErrorBox, Loading, useAsync } from "../ui";
import { jwt } from "../session";

const count = (n: number) => n.toLocaleString("en-US");

function ms(v: number | null): string {
  if (v === null) return "—";
  return v < 1000 ? `≤ ${v} ms` : `≤ ${(v / 1000).toFixed(v < 10_000 ? 1 : 0)} s`;
}

export function DailyCharts({ env }: { env: EnvName }) {
  const daily = useAsync(
    async () => (await call<DailyUsage>("GET", "/dashboard/usage/daily", { jwt: jwt(), query: { environment: env, days: 30 } })).data,
    [env],
  );
  const d = daily.data;
  if (!d) {
    return (
      <>
        {daily.loading && <Loading what="Loading the charts" />}
        <ErrorBox error={daily.error} />
      </>
    );
  }
  const x = d.days.map((day) => seconds(day.day));
  // This month's running total, against the monthly quota.
  let total = 0;
  const running = d.days.map((day) => {
    if (!day.day.startsWith(d.period)) return null;
    total += day.verified;
    return total;
  });
  return (
    <div class="grid charts">
      <div class="card">
        <Chart
          name="deltas-per-day"
          title="Verified deltas per day"
          spec={{
            x,
            yLabel: "deltas per day",
            rightLabel: "this month",
            series: [
              { label: "Verified that day", values: d.days.map((day) => day.verified), kind: "bars", color: "#1a4fd6" },
              { label: "This month so far", values: running, kind: "line", color: "#0b6b2e", right: true },
              { label: `Monthly quota (${d.plan})`, values: d.days.map(() => d.quota), kind: "line", color: "#a3161a", right: true, dash: true },
            ],
          }}
          table={{
            caption: `Verified deltas per day in ${ENV_LABEL[env]}, last 30 days (UTC)`,
            columns: ["Day", "Verified", "This month so far"],
            numeric: [1, 2],
            rows: d.days.map((day, i) => [day.day, count(day.verified), running[i] === null ? "—" : count(running[i] ?? 0)]),
          }}
        >
          in {ENV_LABEL[env]}, last 30 days (UTC), against the {d.plan} plan's quota of {count(d.quota)} a month:{" "}
          {count(d.used)} counted this month ({d.quota ? ((100 * d.used) / d.quota).toFixed(d.used * 1000 < d.quota ? 2 : 0) : "—"}%).
        </Chart>
      </div>
      <div class="card">
        {d.days.every((day) => day.lagP50Ms === null) ? (
          <>
            <h2>Verification lag per day</h2>
            <p class="empty">No delta verified in {ENV_LABEL[env]} in the last 30 days.</p>
          </>
        ) : (
        <Chart
          name="verification-lag"
          title="Verification lag per day"
          spec={{
            x,
            yLabel: "ms (log scale)",
            logY: true,
            series: [
              { label: "p50", values: d.days.map((day) => day.lagP50Ms), kind: "line", points: true, color: "#1a4fd6" },
              { label: "p99", values: d.days.map((day) => day.lagP99Ms), kind: "line", points: true, color: "#a3161a" },
            ],
          }}
          table={{
            caption: `Verification lag per day in ${ENV_LABEL[env]} (received to verified)`,
            columns: ["Day", "Deltas", "p50", "p99"],
            numeric: [1, 2, 3],
            rows: d.days.filter((day) => day.verified > 0).map((day) => [day.day, count(day.verified), ms(day.lagP50Ms), ms(day.lagP99Ms)]),
          }}
        >
          from a delta's receipt to its verification, at the median and the 99th percentile (each an upper bound within
          19%).
        </Chart>
        )}
      </div>
    </div>
  );
}
