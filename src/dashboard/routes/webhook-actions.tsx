import type { Hono } from "hono";
import { recover, redeliver, sendTestPing } from "../../domains/webhooks/delivery-service";
import { webhookScope } from "../../domains/webhooks/policy";
import { limitTestPings } from "../../domains/webhooks/routes/test-webhook";
import { RotateSecretBody } from "../../domains/webhooks/schemas";
import { rotateSecret } from "../../domains/webhooks/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { dayProblem } from "../../platform/dates";
import { field, fieldMessages, formOf, formRefusal, issuesOf } from "../forms";
import { ShownOnce } from "../pages/webhook-detail";
import { LABELS } from "../pages/webhook-form";
import { hookPath } from "../pages/webhooks";
import { WEBHOOKS_PATH } from "../prefixes";
import { checkCsrf, signedIn } from "../session";
import { hookOf, page, renderDetail } from "./webhooks";

/**
 * A webhook's actions beside its settings: send a test ping, rotate the secret, redeliver one
 * delivery, recover the failed ones since a day — each the webhooks domain's service behind
 * `webhooks:write`, as `/api/integrations/webhooks/{id}/…` does.
 */
export function registerWebhookActions(app: Hono<AppEnv>) {
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
      const refusal = formRefusal(error, LABELS);
      if (!refusal) throw error;
      return renderDetail(c, hook, { errors: refusal.messages, status: refusal.status });
    }
    return c.redirect(`${hookPath(hook.id)}?notice=recovered&count=${result.redelivered}`, 303);
  });
}
