import type { DeliveryStatus, webhooks } from "../../db/schema";
import { utf8 } from "../../platform/crypto/encoding";
import { openSealed, webhookSecretBinding } from "../../platform/crypto/sealed-values";
import { nowIso } from "../../platform/ids";
import { nextRetrySeconds, type OutboundResult, outboundFetch } from "../../platform/outbound";
import type { ServiceContext } from "../../platform/service/context";
import { deliveryBody, signDelivery } from "./signing";

type WebhookRow = typeof webhooks.$inferSelect;

export interface ClaimedDelivery {
  id: string;
  /** The number of this attempt, 1-based; the claim counted it. */
  attempt: number;
  webhook: Pick<
    WebhookRow,
    "id" | "url" | "secretSealed" | "previousSecretSealed" | "previousSecretExpiresAt" | "consecutiveFailures"
  >;
  /** `bytes` memoises the encoded body: the deliveries of one event to many webhooks share it. */
  event: {
    id: string;
    type: string;
    createdAt: string;
    payload: Record<string, unknown>;
    bytes?: Uint8Array;
  };
  /** Test pings are tried once and never touch the webhook's health. */
  isPing: boolean;
}

export type AttemptOutcome = OutboundResult;

/** Why the delivery pipeline switches a webhook off by itself. */
export type AutomaticDisable = "gone" | "target_refused";

export interface AttemptResult {
  outcome: AttemptOutcome;
  status: Exclude<DeliveryStatus, "pending">;
  startedAt: string;
  /** Seconds until the retry, when `status` is `retrying`. */
  retryInSeconds: number | null;
  nextAttemptAt: number | null;
  /** Set when this attempt switches the webhook off: the receiver answered 410, or the gate refused its URL. */
  disable: AutomaticDisable | null;
}

// A webhook signs many deliveries with one secret: unseal it once per isolate, not per delivery.
// Keyed by the webhook and the sealed text (a fresh IV per seal), so a rotation is a new entry,
// never a stale one, and a value copied into another webhook's row is opened for that row (and fails).
// Only opened values are kept, never the promise of one: a promise still pending would belong to the
// invocation that started it, and awaiting it from another is what Workers forbid.
const unsealed = new Map<string, string>();
async function unsealCached(ctx: ServiceContext, webhookId: string, sealed: string): Promise<string> {
  const cacheKey = `${webhookId} ${sealed}`;
  const known = unsealed.get(cacheKey);
  if (known !== undefined) return known;
  const plain = await openSealed(ctx.env, sealed, webhookSecretBinding(webhookId));
  if (unsealed.size >= 1000) unsealed.clear();
  unsealed.set(cacheKey, plain);
  return plain;
}

/** The secrets that sign now: the current one, and the previous one during its rotation window. */
export async function activeSecrets(
  ctx: ServiceContext,
  webhook: ClaimedDelivery["webhook"],
): Promise<string[]> {
  const secrets = [await unsealCached(ctx, webhook.id, webhook.secretSealed)];
  if (
    webhook.previousSecretSealed &&
    webhook.previousSecretExpiresAt &&
    Date.parse(webhook.previousSecretExpiresAt) > ctx.now()
  ) {
    secrets.push(await unsealCached(ctx, webhook.id, webhook.previousSecretSealed));
  }
  return secrets;
}

/**
 * Signs and sends one claimed delivery and decides what happens next; writes nothing. The retry's
 * due time is counted from `ctx.now()`. `random` (the jitter) is for tests.
 */
export async function attemptDelivery(
  ctx: ServiceContext,
  delivery: ClaimedDelivery,
  random: () => number = Math.random,
): Promise<AttemptResult> {
  const config = ctx.config.webhooks;
  const started = ctx.now();
  // Memoised on the event: the deliveries of one event to many webhooks share the encoded body.
  const body = delivery.event.bytes ?? utf8(deliveryBody(delivery.event));
  delivery.event.bytes = body;
  const signed = await signDelivery({
    secrets: await activeSecrets(ctx, delivery.webhook),
    webhookId: delivery.webhook.id,
    deliveryId: delivery.id,
    eventType: delivery.event.type,
    body,
    timestamp: Math.floor(started / 1000),
  });
  const outcome = await outboundFetch(
    ctx.env,
    delivery.webhook.url,
    { method: "POST", headers: signed.headers, body: signed.body },
    { timeoutMs: config.timeoutMs, log: { webhook_id: delivery.webhook.id, delivery_id: delivery.id } },
  );
  const base = {
    outcome,
    startedAt: nowIso(started),
    disable: null,
    retryInSeconds: null,
    nextAttemptAt: null,
  } as const;
  if (outcome.ok) return { ...base, status: "succeeded" };
  // The gate refused the stored URL (a rule changed, or its name now resolves inside): nothing was
  // sent, and nothing will be until someone changes the URL.
  if (outcome.errorCode === "target_refused") return { ...base, status: "failed", disable: "target_refused" };
  if (delivery.isPing) return { ...base, status: "failed" };
  // 410 Gone: the receiver says the endpoint no longer exists; retrying would only be noise.
  if (outcome.status === 410) return { ...base, status: "failed", disable: "gone" };
  const finished = ctx.now();
  const delay = nextRetrySeconds(
    delivery.attempt,
    config.retrySchedule,
    outcome.headers?.get("Retry-After") ?? null,
    finished,
    random,
  );
  if (delay === null) return { ...base, status: "failed" };
  return { ...base, status: "retrying", retryInSeconds: delay, nextAttemptAt: finished + delay * 1000 };
}
