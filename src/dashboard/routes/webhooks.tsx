import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { DELIVERY_STATUSES } from "../../db/schema";
import { listDeliveries } from "../../domains/webhooks/delivery-service";
import { webhookScope } from "../../domains/webhooks/policy";
import { CreateWebhookBody, UpdateWebhookBody } from "../../domains/webhooks/schemas";
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listWebhooks,
  updateWebhook,
  type WebhookRow,
  webhookHealth,
} from "../../domains/webhooks/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { sectionPage } from "../components";
import { fieldMessages, formOf, formRefusal, issuesOf, pageNumber } from "../forms";
import { CsrfField, ErrorSummary } from "../layout";
import { DeliveryLog } from "../pages/webhook-deliveries";
import { Detail, ShownOnce } from "../pages/webhook-detail";
import { formOfHook, HookFields, type HookForm, hookForm, LABELS } from "../pages/webhook-form";
import { DELIVERIES_PER_PAGE, hookPath, NOTICES, WEBHOOKS_PER_PAGE, WebhookList } from "../pages/webhooks";
import { WEBHOOKS_PATH } from "../prefixes";
import { checkCsrf, signedIn } from "../session";

const SECTION = "webhooks";

export function page(c: Context<AppEnv>, title: string, children: Child, status = 200) {
  return sectionPage(c, { title, section: SECTION, crumbs: "Settings → Integrations", status }, children);
}

export async function renderDetail(
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
export function hookOf(c: Context<AppEnv>) {
  const { ctx, principal } = c.var.dashboard;
  return findWebhook(ctx, { ...webhookScope(principal), id: c.req.param("id") ?? "" });
}

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
      page: { page: pageNo, per_page: WEBHOOKS_PER_PAGE },
    });
    const healths = await Promise.all(rows.map((r) => webhookHealth(session.ctx, r.id)));
    return page(
      c,
      "Webhooks",
      <WebhookList
        rows={rows}
        healths={healths}
        total={total}
        page={pageNo}
        notice={NOTICES[c.req.query("notice") ?? ""]}
      />,
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
      const refusal = formRefusal(error, LABELS);
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
      const refusal = formRefusal(error, LABELS);
      if (!refusal) throw error;
      return renderDetail(c, hook, { form, errors: refusal.messages, status: refusal.status });
    }
    return c.redirect(`${hookPath(hook.id)}?notice=saved`, 303);
  });

  app.post(`${WEBHOOKS_PATH}/:id/delete`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "webhooks:write"));
    await deleteWebhook(session.ctx, { ...webhookScope(session.principal), id: c.req.param("id") });
    return c.redirect(`${WEBHOOKS_PATH}?notice=deleted`, 303);
  });
}
