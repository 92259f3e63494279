import type { z } from "zod";
import type { DeliverySchema } from "../../domains/webhooks/schemas";
import type { WebhookRow, webhookHealth } from "../../domains/webhooks/service";
import { Col, EmptyState, ListTable, Notice } from "../components";
import { CodeBadges } from "../layout";
import { WEBHOOKS_PATH } from "../prefixes";

/**
 * The webhooks section's list and what its pages share; webhook-form.tsx holds the form,
 * webhook-detail.tsx a webhook's page, routes/webhooks.tsx the handlers.
 */

export type Delivery = z.infer<typeof DeliverySchema>;
export type Health = Awaited<ReturnType<typeof webhookHealth>>;

export const DELIVERIES_PER_PAGE = 20;
export const WEBHOOKS_PER_PAGE = 25;
export const NOTICES: Record<string, string> = {
  saved: "The webhook was saved.",
  deleted: "The webhook and its delivery log were deleted.",
  redelivered: "The event is queued for delivery again; it appears at the top of the log.",
};

export const hookPath = (id: string) => `${WEBHOOKS_PATH}/${encodeURIComponent(id)}`;

export function Status({ hook }: { hook: WebhookRow }) {
  if (!hook.enabled)
    return (
      <span class="badge warn">{`Disabled (${(hook.disabledReason ?? "manual").replace(/_/g, " ")})`}</span>
    );
  if (hook.failingSince) return <span class="badge warn">Failing</span>;
  return <span class="badge">Enabled</span>;
}

export function HealthLine({ health }: { health: Health }) {
  const rate =
    health.success_rate === null
      ? "no finished deliveries"
      : `${Math.round(health.success_rate * 100)} % succeeded`;
  return (
    <span>
      {`Last ${health.window_hours} h: ${health.succeeded} succeeded, ${health.failed} failed, ${health.pending} pending (${rate})`}
    </span>
  );
}

export function EventsList({ events }: { events: readonly string[] }) {
  return <CodeBadges names={events} everything="Every event" />;
}

export function WebhookList({
  rows,
  healths,
  total,
  page,
  notice,
}: {
  rows: WebhookRow[];
  healths: Health[];
  total: number;
  page: number;
  notice?: string;
}) {
  return (
    <>
      <h1>Webhooks</h1>
      <Notice text={notice} />
      <p>Webhooks tell your systems within seconds when something happens: a signed POST per event.</p>
      <div class="actions">
        <a class="button" href={`${WEBHOOKS_PATH}/new`}>
          Add webhook
        </a>
      </div>
      <ListTable
        label="Webhooks"
        count={rows.length}
        total={total}
        path={WEBHOOKS_PATH}
        page={page}
        perPage={WEBHOOKS_PER_PAGE}
        empty={
          <EmptyState title="No webhooks yet">
            <p>Add one with your receiver's URL and the events it wants, then send it a test ping.</p>
          </EmptyState>
        }
        head={
          <>
            <Col>URL</Col>
            <Col>Events</Col>
            <Col>Status</Col>
            <Col>Health</Col>
          </>
        }
        rows={rows.map((hook, i) => (
          <tr>
            <th scope="row">
              <a href={hookPath(hook.id)}>{hook.url}</a>
              {hook.description ? <span class="hint"> {hook.description}</span> : null}
            </th>
            <td>
              <EventsList events={hook.events} />
            </td>
            <td>
              <Status hook={hook} />
            </td>
            <td>{healths[i] ? <HealthLine health={healths[i]} /> : null}</td>
          </tr>
        ))}
      />
    </>
  );
}
