import type { Child } from "hono/jsx";
import { presentWebhook } from "../../domains/webhooks/present";
import type { WebhookRow } from "../../domains/webhooks/service";
import { ConfirmForm, CopyField, Notice } from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import type { DashboardSession } from "../session";
import { HookFields, type HookForm } from "./webhook-form";
import { type Health, HealthLine, hookPath, Status } from "./webhooks";

/** A webhook's page (its health, settings and actions), and the secret shown once after creation or rotation. */

/** How long the old secret keeps signing after a rotation (the API's `previous_secret_ttl_seconds`). */
export const ROTATION_CHOICES = [
  { value: "86400", label: "24 hours (default)" },
  { value: "3600", label: "1 hour" },
  { value: "604800", label: "7 days" },
  { value: "0", label: "Stop at once" },
] as const;

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
