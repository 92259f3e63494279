import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import type { z } from "zod";
import { DELIVERY_STATUSES, type DeliveryStatus } from "../../db/schema";
import { listDeliveries, redeliver, sendTestPing } from "../../domains/webhooks/delivery-service";
import { webhookScope } from "../../domains/webhooks/policy";
import { presentWebhook } from "../../domains/webhooks/present";
import { limitTestPings } from "../../domains/webhooks/routes/test-webhook";
import {
  CreateWebhookBody,
  type DeliverySchema,
  RotateSecretBody,
  UpdateWebhookBody,
} from "../../domains/webhooks/schemas";
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listWebhooks,
  rotateSecret,
  updateWebhook,
  type WebhookRow,
  webhookHealth,
} from "../../domains/webhooks/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { ApiError } from "../../platform/errors";
import { EVENT_TYPES, SUBSCRIBABLE_TYPES } from "../../platform/events";
import { field, fieldMessages, formOf, issuesOf, pageNumber } from "../forms";
import { html } from "../http";
import { CsrfField, ErrorSummary, Layout, When } from "../layout";
import { Pager } from "../pager";
import { WEBHOOKS_PATH } from "../prefixes";
import { checkCsrf, type DashboardSession, signedIn } from "../session";

type Delivery = z.infer<typeof DeliverySchema>;
type Health = Awaited<ReturnType<typeof webhookHealth>>;

const PER_PAGE = 25;
const DELIVERIES_PER_PAGE = 20;
const SECTION = "webhooks";
const LABELS = { url: "URL", events: "Events", description: "Description", enabled: "Enabled" };
/** How long the old secret keeps signing after a rotation (the API's `previous_secret_ttl_seconds`). */
const ROTATION_CHOICES = [
  { value: "86400", label: "24 hours (default)" },
  { value: "3600", label: "1 hour" },
  { value: "604800", label: "7 days" },
  { value: "0", label: "Stop at once" },
] as const;
const NOTICES: Record<string, string> = {
  saved: "The webhook was saved.",
  deleted: "The webhook and its delivery log were deleted.",
  redelivered: "The event is queued for delivery again; it appears at the top of the log.",
};

const hookPath = (id: string) => `${WEBHOOKS_PATH}/${encodeURIComponent(id)}`;

function page(c: Context<AppEnv>, title: string, children: Child, status = 200) {
  return html(
    c,
    <Layout title={title} nonce={c.var.nonce} session={c.var.dashboard} current={SECTION}>
      <p class="crumbs">Settings → Integrations</p>
      {children}
    </Layout>,
    status,
  );
}

function Notice({ text }: { text?: string }) {
  return text ? (
    <p class="notice" role="status">
      {text}
    </p>
  ) : null;
}

function Status({ hook }: { hook: WebhookRow }) {
  if (!hook.enabled)
    return (
      <span class="badge warn">{`Disabled (${(hook.disabledReason ?? "manual").replace(/_/g, " ")})`}</span>
    );
  if (hook.failingSince) return <span class="badge warn">Failing</span>;
  return <span class="badge">Enabled</span>;
}

function HealthLine({ health }: { health: Health }) {
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

function EventsList({ events }: { events: readonly string[] }) {
  if (events.includes("*")) return <span class="badge">Every event (*)</span>;
  return (
    <>
      {events.map((e) => (
        <span class="badge">
          <code>{e}</code>
        </span>
      ))}
    </>
  );
}

interface HookForm {
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
}

function HookFields({ form }: { form: HookForm }) {
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

function hookForm(posted: Record<string, string[]>): HookForm {
  return {
    url: field(posted, "url").trim(),
    description: field(posted, "description"),
    events: posted.events ?? [],
    enabled: field(posted, "enabled") === "true",
  };
}

function ShownOnce({ title, secret, hookId }: { title: string; secret: string; hookId: string }) {
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

function Attempts({ delivery }: { delivery: Delivery }) {
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

function DeliveryLog({
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

function Detail({
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

function formOfHook(hook: WebhookRow): HookForm {
  return { url: hook.url, description: hook.description ?? "", events: hook.events, enabled: hook.enabled };
}

async function renderDetail(
  c: Context<AppEnv>,
  hook: WebhookRow,
  options: { form?: HookForm; errors?: string[]; status?: number } = {},
) {
  const session = c.var.dashboard;
  const pageNo = pageNumber(c.req.query("page"));
  const statusQuery = c.req.query("status");
  const status = DELIVERY_STATUSES.find((s) => s === statusQuery);
  const [health, { total, data }] = await Promise.all([
    webhookHealth(session.ctx, hook.id),
    listDeliveries(session.ctx, {
      webhookId: hook.id,
      page: { page: pageNo, per_page: DELIVERIES_PER_PAGE },
      filters: status ? { status } : {},
    }),
  ]);
  return page(
    c,
    "Webhook",
    <Detail
      session={session}
      hook={hook}
      health={health}
      form={options.form ?? formOfHook(hook)}
      errors={options.errors ?? []}
      notice={NOTICES[c.req.query("notice") ?? ""]}
      log={
        <DeliveryLog
          session={session}
          hook={hook}
          deliveries={data}
          total={total}
          pageNo={pageNo}
          status={status}
        />
      }
    />,
    options.status,
  );
}

/** The institution's webhook of the URL, or the service's 404; the API's tenancy rule (`webhookScope`). */
function hookOf(c: Context<AppEnv>) {
  const { ctx, principal } = c.var.dashboard;
  return findWebhook(ctx, { ...webhookScope(principal), id: c.req.param("id") ?? "" });
}

/** A service's refusal of a form, as the form's messages (5xx is left to the error page). */
function refusalMessages(error: unknown): { messages: string[]; status: number } | null {
  if (!(error instanceof ApiError) || error.status >= 500) return null;
  return {
    messages: error.errors ? fieldMessages(error.errors, LABELS) : [error.message],
    status: error.status,
  };
}

/**
 * Settings → Integrations → Webhooks: the webhooks domain's services behind the abilities of
 * `/api/integrations/webhooks` — list with health, create (secret shown once), edit, rotate the
 * secret, send a test ping, the delivery log with each attempt, redeliver, delete.
 */
export function registerWebhooks(app: Hono<AppEnv>) {
  app.get(WEBHOOKS_PATH, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:read"));
    const scope = webhookScope(session.principal);
    const pageNo = pageNumber(c.req.query("page"));
    const { rows, total } = await listWebhooks(session.ctx, {
      ...scope,
      page: { page: pageNo, per_page: PER_PAGE },
    });
    const healths = await Promise.all(rows.map((r) => webhookHealth(session.ctx, r.id)));
    return page(
      c,
      "Webhooks",
      <>
        <h1>Webhooks</h1>
        <Notice text={NOTICES[c.req.query("notice") ?? ""]} />
        <p>Webhooks tell your systems within seconds when something happens: a signed POST per event.</p>
        <div class="actions">
          <a class="button" href={`${WEBHOOKS_PATH}/new`}>
            Add webhook
          </a>
        </div>
        {total === 0 ? (
          <div class="card empty">
            <h2>No webhooks yet</h2>
            <p>Add one with your receiver's URL and the events it wants, then send it a test ping.</p>
          </div>
        ) : (
          <section class="table-wrap" aria-label="Webhooks" tabindex={0}>
            <table>
              <caption>{`Webhooks (${total})`}</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col">Health</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((hook, i) => (
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
              </tbody>
            </table>
            <Pager path={WEBHOOKS_PATH} query={{}} page={pageNo} perPage={PER_PAGE} total={total} />
          </section>
        )}
      </>,
    );
  });

  const newForm = (c: Context<AppEnv>, form: HookForm, errors: string[], status = 200) =>
    page(
      c,
      "Add a webhook",
      <>
        <h1>Add a webhook</h1>
        <ErrorSummary errors={errors} />
        <form method="post" action={WEBHOOKS_PATH}>
          <CsrfField token={c.var.dashboard.csrf} />
          <HookFields form={form} />
          <div class="actions">
            <button type="submit">Add webhook</button>
            <a class="button secondary" href={WEBHOOKS_PATH}>
              Cancel
            </a>
          </div>
        </form>
      </>,
      status,
    );

  app.get(`${WEBHOOKS_PATH}/new`, signedIn, (c) => {
    enforce(holdsAbility(c.var.dashboard.principal, "webhooks:write"));
    webhookScope(c.var.dashboard.principal);
    return newForm(c, { url: "", description: "", events: [], enabled: true }, []);
  });

  app.post(WEBHOOKS_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:write"));
    const form = hookForm(await formOf(c));
    const parsed = CreateWebhookBody.safeParse({
      url: form.url,
      events: form.events,
      description: form.description || null,
      enabled: form.enabled,
    });
    if (!parsed.success) return newForm(c, form, fieldMessages(issuesOf(parsed.error.issues), LABELS), 422);
    try {
      const { row, secret } = await createWebhook(session.ctx, {
        owner: { ...webhookScope(session.principal), userId: session.principal.user.id },
        input: parsed.data,
      });
      return page(
        c,
        "Webhook added",
        <ShownOnce title="Webhook added" secret={secret} hookId={row.id} />,
        201,
      );
    } catch (error) {
      const refusal = refusalMessages(error);
      if (!refusal) throw error;
      return newForm(c, form, refusal.messages, refusal.status);
    }
  });

  app.get(`${WEBHOOKS_PATH}/:id`, signedIn, async (c) => {
    enforce(holdsAbility(c.var.dashboard.principal, "webhooks:read"));
    return renderDetail(c, await hookOf(c));
  });

  app.post(`${WEBHOOKS_PATH}/:id`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:write"));
    const hook = await hookOf(c);
    const form = hookForm(await formOf(c));
    const parsed = UpdateWebhookBody.safeParse({
      url: form.url,
      events: form.events,
      description: form.description || null,
      enabled: form.enabled,
    });
    if (!parsed.success)
      return renderDetail(c, hook, {
        form,
        errors: fieldMessages(issuesOf(parsed.error.issues), LABELS),
        status: 422,
      });
    try {
      await updateWebhook(session.ctx, {
        ...webhookScope(session.principal),
        id: hook.id,
        input: parsed.data,
      });
    } catch (error) {
      const refusal = refusalMessages(error);
      if (!refusal) throw error;
      return renderDetail(c, hook, { form, errors: refusal.messages, status: refusal.status });
    }
    return c.redirect(`${hookPath(hook.id)}?notice=saved`, 303);
  });

  app.post(`${WEBHOOKS_PATH}/:id/test`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:write"));
    const hook = await hookOf(c);
    await limitTestPings(session.ctx, hook.id);
    const ping = await sendTestPing(session.ctx, hook);
    const attempt = ping.attempts[0];
    return page(
      c,
      "Test ping",
      <>
        <h1>Test ping</h1>
        <p class={ping.status === "succeeded" ? "notice" : "error-summary"} role="status">
          {ping.status === "succeeded"
            ? `Your receiver answered ${ping.last_response_status}: the ping succeeded.`
            : `The ping failed: ${ping.last_error ?? ping.last_error_code ?? "no answer"}.`}
        </p>
        <div class="card">
          <p>
            <code>{hook.url}</code>
          </p>
          {attempt ? (
            <p>{`Response: ${attempt.response_status ?? attempt.error_code ?? "none"}${attempt.duration_ms !== null ? ` in ${attempt.duration_ms} ms` : ""}`}</p>
          ) : null}
          {attempt?.response_body ? (
            <pre>
              <code>{attempt.response_body.slice(0, 1024)}</code>
            </pre>
          ) : null}
        </div>
        <div class="actions">
          <a class="button" href={hookPath(hook.id)}>
            Back to the webhook
          </a>
        </div>
      </>,
    );
  });

  app.post(`${WEBHOOKS_PATH}/:id/rotate`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:write"));
    const hook = await hookOf(c);
    const ttl = Number(field(await formOf(c), "previous_secret_ttl_seconds") || "86400");
    const parsed = RotateSecretBody.safeParse({ previous_secret_ttl_seconds: ttl });
    if (!parsed.success)
      return renderDetail(c, hook, {
        errors: fieldMessages(issuesOf(parsed.error.issues), { previous_secret_ttl_seconds: "Old secret" }),
        status: 422,
      });
    const { secret } = await rotateSecret(session.ctx, {
      ...webhookScope(session.principal),
      id: hook.id,
      previousTtlSeconds: parsed.data.previous_secret_ttl_seconds,
    });
    return page(c, "Secret rotated", <ShownOnce title="Secret rotated" secret={secret} hookId={hook.id} />);
  });

  app.post(`${WEBHOOKS_PATH}/:id/deliveries/:delivery/redeliver`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:write"));
    const hook = await hookOf(c);
    const deliveryId = c.req.param("delivery");
    await redeliver(session.ctx, { webhook: hook, deliveryId });
    return c.redirect(`${hookPath(hook.id)}?notice=redelivered`, 303);
  });

  app.post(`${WEBHOOKS_PATH}/:id/delete`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:write"));
    await deleteWebhook(session.ctx, { ...webhookScope(session.principal), id: c.req.param("id") });
    return c.redirect(`${WEBHOOKS_PATH}?notice=deleted`, 303);
  });
}
