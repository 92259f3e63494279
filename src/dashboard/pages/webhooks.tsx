import type { Child } from "hono/jsx";
import type { z } from "zod";
import { presentWebhook } from "../../domains/webhooks/present";
import type { DeliverySchema } from "../../domains/webhooks/schemas";
import type { WebhookRow, webhookHealth } from "../../domains/webhooks/service";
import { EVENT_TYPES, SUBSCRIBABLE_TYPES } from "../../platform/events";
import { Col, ConfirmForm, CopyField, EmptyState, ListTable, Notice } from "../components";
import { field } from "../forms";
import { CodeBadges, CsrfField, ErrorSummary, When } from "../layout";
import { WEBHOOKS_PATH } from "../prefixes";
import type { DashboardSession } from "../session";

/** The webhooks section's views and form reading; routes/webhooks.tsx holds the handlers. */

export type Delivery = z.infer<typeof DeliverySchema>;
export type Health = Awaited<ReturnType<typeof webhookHealth>>;

export const DELIVERIES_PER_PAGE = 20;
export const WEBHOOKS_PER_PAGE = 25;
export const LABELS = {
  url: "URL",
  events: "Events",
  description: "Description",
  enabled: "Enabled",
  since: "Since",
};
/** How long the old secret keeps signing after a rotation (the API's `previous_secret_ttl_seconds`). */
export const ROTATION_CHOICES = [
  { value: "86400", label: "24 hours (default)" },
  { value: "3600", label: "1 hour" },
  { value: "604800", label: "7 days" },
  { value: "0", label: "Stop at once" },
] as const;
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

export interface HookForm {
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
}

export function HookFields({ form }: { form: HookForm }) {
  return (
    <>
      <label for="url">{LABELS.url}</label>
      <p class="hint" id="url-hint">
        Where we POST each event: a public <code>https</code> URL.
      </p>
      <input
        id="url"
        name="url"
        type="text"
        inputmode="url"
        required
        value={form.url}
        aria-describedby="url-hint"
      />
      <label for="description">{LABELS.description}</label>
      <input id="description" name="description" type="text" maxlength={500} value={form.description} />
      <fieldset>
        <legend>{LABELS.events}</legend>
        <label class="check">
          <input type="checkbox" name="events" value="*" checked={form.events.includes("*")} />
          <span>
            Every event (<code>*</code>)<small>Also event types added later.</small>
          </span>
        </label>
        <div class="checks">
          {SUBSCRIBABLE_TYPES.map((type) => (
            <label class="check">
              <input type="checkbox" name="events" value={type} checked={form.events.includes(type)} />
              <span>
                <code>{type}</code>
                <small>{EVENT_TYPES[type]}</small>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      <label class="check">
        <input type="checkbox" name="enabled" value="true" checked={form.enabled} />
        <span>Enabled: send events to this URL</span>
      </label>
    </>
  );
}

export function hookForm(posted: Record<string, string[]>): HookForm {
  return {
    url: field(posted, "url").trim(),
    description: field(posted, "description"),
    events: posted.events ?? [],
    enabled: field(posted, "enabled") === "true",
  };
}

export function ShownOnce({ title, secret, hookId }: { title: string; secret: string; hookId: string }) {
  return (
    <>
      <h1>{title}</h1>
      <p class="notice" role="status">
        Copy the signing secret now and store it with your receiver: it is shown only this once.
      </p>
      <div class="card">
        <CopyField id="secret" label="Signing secret" value={secret} />
        <p class="hint">
          Verify <code>X-Signature-256</code> (hex HMAC-SHA256 of the body) or the Standard Webhooks{" "}
          <code>webhook-signature</code> with it.
        </p>
      </div>
      <div class="actions">
        <a class="button" href={hookPath(hookId)}>
          Go to the webhook
        </a>
      </div>
    </>
  );
}

export function Detail({
  session,
  hook,
  health,
  form,
  errors,
  notice,
  log,
}: {
  session: DashboardSession;
  hook: WebhookRow;
  health: Health;
  form: HookForm;
  errors: string[];
  notice?: string;
  log: Child;
}) {
  const view = presentWebhook(hook, session.ctx.now());
  return (
    <>
      <h1>Webhook</h1>
      <Notice text={notice} />
      <div class="card">
        <p>
          <code>{hook.url}</code> <Status hook={hook} />
        </p>
        <p>
          <HealthLine health={health} />
        </p>
        {hook.failingSince ? (
          <p>
            Failing since <When iso={hook.failingSince} /> ({hook.consecutiveFailures} events in a row).
          </p>
        ) : null}
        {view.previous_secret_expires_at ? (
          <p>
            The previous secret signs beside the new one until <When iso={view.previous_secret_expires_at} />.
          </p>
        ) : null}
        <div class="actions">
          <form method="post" action={`${hookPath(hook.id)}/test`}>
            <CsrfField token={session.csrf} />
            <button type="submit">Send test ping</button>
          </form>
        </div>
      </div>
      {log}
      <section aria-labelledby="edit">
        <h2 id="edit">Settings</h2>
        <ErrorSummary errors={errors} />
        <form method="post" action={hookPath(hook.id)}>
          <CsrfField token={session.csrf} />
          <HookFields form={form} />
          <div class="actions">
            <button type="submit">Save</button>
          </div>
        </form>
      </section>
      <section aria-labelledby="recover-h" class="card">
        <h2 id="recover-h">Recover failed deliveries</h2>
        <form method="post" action={`${hookPath(hook.id)}/recover`}>
          <CsrfField token={session.csrf} />
          <label for="since">Redeliver every event whose delivery failed since</label>
          <p class="hint" id="since-hint">
            The start of this day (UTC), within the last 30 days. Each event is sent once more, however often
            it failed.
          </p>
          <input id="since" name="since" type="date" required aria-describedby="since-hint" />
          <div class="actions">
            <button type="submit" class="secondary">
              Recover
            </button>
          </div>
        </form>
      </section>
      <section aria-labelledby="secret-h" class="card">
        <h2 id="secret-h">Signing secret</h2>
        <form method="post" action={`${hookPath(hook.id)}/rotate`}>
          <CsrfField token={session.csrf} />
          <label for="ttl">The old secret keeps signing for</label>
          <select id="ttl" name="previous_secret_ttl_seconds">
            {ROTATION_CHOICES.map((choice) => (
              <option value={choice.value}>{choice.label}</option>
            ))}
          </select>
          <div class="actions">
            <button type="submit" class="secondary">
              Rotate secret
            </button>
          </div>
        </form>
      </section>
      <ConfirmForm
        action={`${hookPath(hook.id)}/delete`}
        csrf={session.csrf}
        summary="Delete this webhook…"
        text="Delete the webhook and its delivery log? Events stop at once. This cannot be undone."
        button="Delete webhook"
      />
    </>
  );
}

export function formOfHook(hook: WebhookRow): HookForm {
  return { url: hook.url, description: hook.description ?? "", events: hook.events, enabled: hook.enabled };
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
