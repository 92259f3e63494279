import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { DELIVERY_STATUSES } from "../../db/schema";
import { listDeliveries, recover, redeliver, sendTestPing } from "../../domains/webhooks/delivery-service";
import { webhookScope } from "../../domains/webhooks/policy";
import { limitTestPings } from "../../domains/webhooks/routes/test-webhook";
import { CreateWebhookBody, RotateSecretBody, UpdateWebhookBody } from "../../domains/webhooks/schemas";
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
import { dayProblem } from "../../platform/dates";
import { ApiError } from "../../platform/errors";
import { field, fieldMessages, formOf, issuesOf, pageNumber } from "../forms";
import { html } from "../http";
import { CsrfField, ErrorSummary, Layout } from "../layout";
import { Pager } from "../pager";
import {
  DELIVERIES_PER_PAGE,
  DeliveryLog,
  Detail,
  EventsList,
  formOfHook,
  HealthLine,
  HookFields,
  type HookForm,
  hookForm,
  hookPath,
  LABELS,
  NOTICES,
  Notice,
  ShownOnce,
  Status,
} from "../pages/webhooks";
import { WEBHOOKS_PATH } from "../prefixes";
import { checkCsrf, signedIn } from "../session";

const PER_PAGE = 25;
const SECTION = "webhooks";

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
      notice={noticeOf(c)}
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
/** The notice a redirect asked for (`?notice=`), with the count a recovery passes along. */
function noticeOf(c: Context<AppEnv>): string | undefined {
  const notice = c.req.query("notice") ?? "";
  if (notice !== "recovered") return NOTICES[notice];
  const parsed = Number(c.req.query("count"));
  const count = Number.isSafeInteger(parsed) && parsed >= 0 ? parsed : 0;
  return count === 1
    ? "1 failed event is queued for delivery again."
    : `${count} failed events are queued for delivery again.`;
}

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

  app.post(`${WEBHOOKS_PATH}/:id/recover`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:write"));
    const hook = await hookOf(c);
    const day = field(await formOf(c), "since");
    const problem = dayProblem(day);
    if (problem) return renderDetail(c, hook, { errors: [`Since: ${problem}`], status: 422 });
    let result: Awaited<ReturnType<typeof recover>>;
    try {
      result = await recover(session.ctx, { webhook: hook, since: `${day}T00:00:00Z` });
    } catch (error) {
      const refusal = refusalMessages(error);
      if (!refusal) throw error;
      return renderDetail(c, hook, { errors: refusal.messages, status: refusal.status });
    }
    return c.redirect(`${hookPath(hook.id)}?notice=recovered&count=${result.redelivered}`, 303);
  });

  app.post(`${WEBHOOKS_PATH}/:id/delete`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:write"));
    await deleteWebhook(session.ctx, { ...webhookScope(session.principal), id: c.req.param("id") });
    return c.redirect(`${WEBHOOKS_PATH}?notice=deleted`, 303);
  });
}
