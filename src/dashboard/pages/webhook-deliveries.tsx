import type { DeliveryStatus } from "../../db/schema";
import { DELIVERY_STATUSES } from "../../db/schema";
import type { WebhookRow } from "../../domains/webhooks/service";
import { ActionForm, Col, EmptyState, FilterBar, ListTable, Select } from "../components";
import { When } from "../layout";
import type { DashboardSession } from "../session";
import { DELIVERIES_PER_PAGE, type Delivery, hookPath } from "./webhooks";

/** A webhook's delivery log: each delivery, its attempts (response codes, durations, the answer's first KiB). */

export function Attempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) return <span>Not tried yet</span>;
  return (
    <details>
      <summary>{`${delivery.attempts.length} attempt${delivery.attempts.length === 1 ? "" : "s"}`}</summary>
      <ol>
        {delivery.attempts.map((a) => (
          <li>
            <When iso={a.started_at} />
            {` · ${a.response_status ?? a.error_code ?? "no answer"}`}
            {a.duration_ms !== null ? ` · ${a.duration_ms} ms` : ""}
            {a.error ? <p class="hint">{a.error}</p> : null}
            {a.response_body ? (
              <pre>
                <code>{a.response_body.slice(0, 1024)}</code>
              </pre>
            ) : null}
          </li>
        ))}
      </ol>
    </details>
  );
}

export function DeliveryLog({
  session,
  hook,
  deliveries,
  total,
  pageNo,
  status,
}: {
  session: DashboardSession;
  hook: WebhookRow;
  deliveries: Delivery[];
  total: number;
  pageNo: number;
  status?: DeliveryStatus;
}) {
  const query: Record<string, string> = status ? { status } : {};
  return (
    <section aria-labelledby="log">
      <h2 id="log">Delivery log</h2>
      <FilterBar path={hookPath(hook.id)} label="Filter the deliveries" active={status !== undefined}>
        <Select
          id="status"
          label="Status"
          any="Every status"
          value={status ?? ""}
          options={DELIVERY_STATUSES.map((s) => ({ value: s, label: s }))}
        />
      </FilterBar>
      <ListTable
        label="Deliveries"
        count={deliveries.length}
        total={total}
        path={hookPath(hook.id)}
        query={query}
        page={pageNo}
        perPage={DELIVERIES_PER_PAGE}
        empty={
          <EmptyState>
            <p>
              {status
                ? `No ${status} deliveries.`
                : "No deliveries yet. Send a test ping to check your receiver; events appear here as they happen (kept 30 days)."}
            </p>
          </EmptyState>
        }
        head={
          <>
            <Col>Event</Col>
            <Col>Status</Col>
            <Col>Last response</Col>
            <Col>Created</Col>
            <Col>Attempts</Col>
            <Col hidden>Actions</Col>
          </>
        }
        rows={deliveries.map((d) => (
          <tr>
            <td>
              <code>{d.event_type}</code>
              {d.redelivery_of ? <span class="hint"> (redelivery)</span> : null}
            </td>
            <td>
              <span class={d.status === "failed" ? "badge warn" : "badge"}>{d.status}</span>
            </td>
            <td>{d.last_response_status ?? d.last_error_code ?? "—"}</td>
            <td>
              <When iso={d.created_at} />
            </td>
            <td>
              <Attempts delivery={d} />
            </td>
            <td>
              {d.status === "succeeded" || d.status === "failed" ? (
                <ActionForm
                  action={`${hookPath(hook.id)}/deliveries/${encodeURIComponent(d.id)}/redeliver`}
                  csrf={session.csrf}
                  button="Redeliver"
                  label={`Redeliver ${d.event_type} ${d.id}`}
                  secondary
                />
              ) : null}
            </td>
          </tr>
        ))}
      />
    </section>
  );
}
