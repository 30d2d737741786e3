// Witness status (issue 28): for each log of the environment shown, the
// independent witnesses that cosign its tree heads, with the size and time
// each last cosigned, its state in words and its last error. A view of
// the public route `GET /api/v1/logs/witnesses`; the dashboard adds none.
import { call, ENV_LABEL, type WitnessLog, type WitnessState } from "../api";
import { useSession } from "../session";
import { Button, Empty, ErrorBox, Loading, PageTitle, Table, useAsync, when } from "../ui";

/** A witness's last attempt in words (colour only repeats them). */
const STATE: Record<string, [string, "pass" | "wait" | "fail"]> = {
  cosigned: ["Cosigned", "pass"],
  pending: ["Not asked yet", "wait"],
  unavailable: ["Unreachable: retrying", "wait"],
  refused: ["Refused a head that does not extend its last (a fork)", "fail"],
  conflict: ["Has cosigned a larger tree than the log's", "fail"],
  config: ["Does not accept this log (configuration)", "fail"],
  misbehaved: ["Answered with a cosignature that does not verify", "fail"],
};

function Row({ w }: { w: WitnessState }) {
  const [text, kind] = STATE[w.status] ?? [w.status, "fail"];
  return (
    <tr data-witness={w.name} data-status={w.status}>
      <th scope="row" title={w.vkey}>
        {w.name}
      </th>
      <td data-label="Last attempt">
        <span class={`badge ${kind}`}>{text}</span>
      </td>
      <td class="num" data-label="Last cosigned size">
        {w.cosignedSize ?? "—"}
      </td>
      <td data-label="Last cosigned">{when(w.cosignedAt)}</td>
      <td data-label="Last error" class="wrap">
        {w.lastError ? `${w.lastError} (${when(w.lastErrorAt)})` : "—"}
      </td>
    </tr>
  );
}

export function Witnesses() {
  const s = useSession();
  const logs = useAsync(
    async () =>
      ((await call<{ logs: WitnessLog[] }>("GET", "/api/v1/logs/witnesses")).data?.logs ?? []).filter(
        (l) => l.environment === s.env,
      ),
    [s.env],
  );
  return (
    <section>
      <PageTitle title="Witnesses">Witnesses</PageTitle>
      <p class="lede">
        Independent witnesses cosign the tree heads of each {ENV_LABEL[s.env]} log, each only if the head extends the
        last one it cosigned, so the log cannot show anyone another history. A head is <strong>witnessed</strong> once
        the log's quorum has cosigned it.
      </p>
      <Button onClick={() => void logs.reload()} busy={logs.loading}>
        Refresh
      </Button>
      {logs.loading && !logs.data && <Loading />}
      <ErrorBox error={logs.error} />
      {logs.data && logs.data.length === 0 && <Empty>No log of this environment is listed.</Empty>}
      {logs.data?.map((log) => (
        <div class="card" key={log.name} data-log={log.name}>
          <h2>
            Log <code>{log.name}</code>
          </h2>
          <p data-witnessed-size={log.witnessedSize ?? ""}>
            Latest tree size {log.treeSize};{" "}
            {log.witnesses.length === 0
              ? "witnesses: none configured (heads are signed by the log's key only)."
              : log.witnessedSize === null
                ? "no head witnessed yet."
                : log.witnessedSize === log.treeSize
                  ? "witnessed."
                  : `newest witnessed head: size ${log.witnessedSize} (not yet witnessed beyond it).`}{" "}
            Quorum: {log.quorum}.
          </p>
          {log.witnesses.length > 0 && (
            <Table label={`Witnesses of ${log.name}`} class="stack" columns={["Witness", "Last attempt", { title: "Last cosigned size", num: true }, "Last cosigned", "Last error"]}>
                  {log.witnesses.map((w) => (
                    <Row key={w.name} w={w} />
                  ))}
            </Table>
          )}
        </div>
      ))}
    </section>
  );
}
