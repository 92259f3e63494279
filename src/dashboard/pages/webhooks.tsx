import type { Child } from "hono/jsx";
import type { z } from "zod";
import { DELIVERY_STATUSES, type DeliveryStatus } from "../../db/schema";
import { presentWebhook } from "../../domains/webhooks/present";
import type { DeliverySchema } from "../../domains/webhooks/schemas";
import type { WebhookRow, webhookHealth } from "../../domains/webhooks/service";
import { EVENT_TYPES, SUBSCRIBABLE_TYPES } from "../../platform/events";
import { field } from "../forms";
import { CodeBadges, CsrfField, ErrorSummary, When } from "../layout";
import { Pager } from "../pager";
import { WEBHOOKS_PATH } from "../prefixes";
import type { DashboardSession } from "../session";

/** The webhooks section's views and form reading; routes/webhooks.tsx holds the handlers. */

export type Delivery = z.infer<typeof DeliverySchema>;
export type Health = Awaited<ReturnType<typeof webhookHealth>>;

export const DELIVERIES_PER_PAGE = 20;
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

export function Notice({ text }: { text?: string }) {
  return text ? (
    <p class="notice" role="status">
      {text}
    </p>
  ) : null;
}

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
        <label for="secret">Signing secret</label>
        <div class="secret">
          <input id="secret" type="text" readonly value={secret} autocomplete="off" spellcheck={false} />
          <button type="button" class="secondary" data-copy="secret" hidden>
            Copy
          </button>
        </div>
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
  return (
    <section aria-labelledby="log">
      <h2 id="log">Delivery log</h2>
      <form method="get" action={hookPath(hook.id)} class="actions">
        <label for="status" class="visually-hidden">
          Status
        </label>
        <select id="status" name="status">
          <option value="">Every status</option>
          {DELIVERY_STATUSES.map((s) => (
            <option value={s} selected={status === s}>
              {s}
            </option>
          ))}
        </select>
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      {deliveries.length === 0 ? (
        <div class="card empty">
          <p>
            {status
              ? `No ${status} deliveries.`
              : "No deliveries yet. Send a test ping to check your receiver; events appear here as they happen (kept 30 days)."}
          </p>
        </div>
      ) : (
        <section class="table-wrap" aria-label="Deliveries" tabindex={0}>
          <table>
            <caption>{`Deliveries (${total})`}</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Last response</th>
                <th scope="col">Created</th>
                <th scope="col">Attempts</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
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
                      <form
                        method="post"
                        action={`${hookPath(hook.id)}/deliveries/${encodeURIComponent(d.id)}/redeliver`}
                      >
                        <CsrfField token={session.csrf} />
                        <button
                          type="submit"
                          class="secondary"
                          aria-label={`Redeliver ${d.event_type} ${d.id}`}
                        >
                          Redeliver
                        </button>
                      </form>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager
            path={hookPath(hook.id)}
            query={status ? { status } : {}}
            page={pageNo}
            perPage={DELIVERIES_PER_PAGE}
            total={total}
          />
        </section>
      )}
    </section>
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
      <details class="confirm">
        <summary>Delete this webhook…</summary>
        <form method="post" action={`${hookPath(hook.id)}/delete`}>
          <CsrfField token={session.csrf} />
          <p>Delete the webhook and its delivery log? Events stop at once. This cannot be undone.</p>
          <button type="submit" class="danger">
            Delete webhook
          </button>
        </form>
      </details>
    </>
  );
}

export function formOfHook(hook: WebhookRow): HookForm {
  return { url: hook.url, description: hook.description ?? "", events: hook.events, enabled: hook.enabled };
}
