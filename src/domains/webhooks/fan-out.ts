import { and, eq, isNull } from "drizzle-orm";
import { outboxEvents, webhookDeliveries } from "../../db/schema";
import { jsonArrays } from "../../platform/batch";
import { type Database, inJsonList } from "../../platform/db";
import { sendFirstAttempts } from "../../platform/delivery";
import { isInternalEvent } from "../../platform/events";
import { newId, nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import type { ClaimedDelivery } from "./attempt";
import { webhookDeliveryTarget } from "./delivery-target";
import { webhookToSign } from "./hook-row";
import {
  FAN_OUT_EVENTS_SQL,
  type FanOutEventRow,
  INSERT_DELIVERIES_SQL,
  SUBSCRIBED_HOOKS_SQL,
  type SubscribedHookRow,
} from "./sql";

/**
 * Fan-out: each outbox event becomes one delivery per enabled webhook of its institution that
 * subscribes to its type. The unique (event, webhook) index makes a repeated fan-out a no-op; the
 * event is marked only after its delivery messages are sent, so a crash in between repeats the
 * sends (harmless: a delivery is claimed before it is sent) rather than losing them.
 *
 * A healthy webhook's first attempt is made right here: its delivery row is inserted already claimed
 * (the insert counts attempt 1, exactly as the delivery consumer's claim would), sent, and logged; only
 * what fails goes to the delivery queue, as a delayed retry. A webhook that is failing, and whatever
 * the time or subrequest budget of this invocation does not reach, goes through the delivery queue.
 */
export async function fanOut(ctx: ServiceContext, eventIds: string[]): Promise<void> {
  const d1 = ctx.d1;
  const events = await readOpenEvents(d1, eventIds);
  if (events.length === 0) return;
  const config = ctx.config.webhooks;
  const now = ctx.now();
  const budgetMs = Math.min(DIRECT_SEND_BUDGET_MS, config.timeoutMs);
  const lease = now + budgetMs + config.timeoutMs + 30_000;
  const plan = planDeliveries(events, await readSubscribers(d1, events));
  if (plan.rows.length > 0) {
    const { toSend, toQueue } = await insertDeliveries(d1, ctx.db, plan, events, { lease, now });
    // Six at a time until the deadline, each recorded as soon as it is answered; the claims not
    // reached are un-claimed, then they and the retries are queued (platform/delivery). If a record
    // cannot be written the fan-out fails and the event is fanned out again: it finds its deliveries
    // claimed, so none is sent again while the claims hold (after that the sweep hands them over).
    await sendFirstAttempts(ctx, webhookDeliveryTarget, toSend, {
      deadline: now + budgetMs,
      lease,
      queue: toQueue,
    });
  }
  await markFannedOut(ctx.db, events, now);
}

/**
 * The fan-out stops starting first attempts after one attempt's time-out (at most 3 s), so slow
 * receivers hold back the others by about that much; the rest go to the delivery queue.
 */
const DIRECT_SEND_BUDGET_MS = 3_000;
/** Workers allow 10,000 subrequests per invocation (Paid); D1 and Queues calls count too. */
const DIRECT_SENDS_PER_INVOCATION = 1_000;

type OpenEvent = Omit<FanOutEventRow, "fanned_out_at">;
type HookRow = SubscribedHookRow;

interface Subscriber {
  row: HookRow;
  /** null: every type (`*`). */
  types: Set<string> | null;
  webhook: ClaimedDelivery["webhook"];
}

interface DeliveryPlan {
  /** (id, webhook, event, type, 1 when sent directly): the rows to insert. */
  rows: [string, string, string, string, 0 | 1][];
  direct: Map<string, ClaimedDelivery>;
}

/**
 * The events of the batch that still need a fan-out: pings never do (they go to one webhook), and
 * internal events (platform/events.ts) are never delivered, whatever a webhook subscribes to.
 */
async function readOpenEvents(d1: D1Database, eventIds: string[]): Promise<OpenEvent[]> {
  const { results } = await d1
    .prepare(FAN_OUT_EVENTS_SQL)
    .bind(JSON.stringify(eventIds))
    .all<FanOutEventRow>();
  return results.filter((e) => e.fanned_out_at === null && e.type !== "ping" && !isInternalEvent(e.type));
}

/** The enabled webhooks of the events' institutions, with the types each subscribes to. */
async function readSubscribers(d1: D1Database, events: OpenEvent[]): Promise<Subscriber[]> {
  const institutions = [
    ...new Set(events.map((e) => e.institution_id).filter((id): id is string => id !== null)),
  ];
  if (institutions.length === 0) return [];
  const { results } = await d1
    .prepare(SUBSCRIBED_HOOKS_SQL)
    .bind(JSON.stringify(institutions))
    .all<SubscribedHookRow>();
  return results.map((row) => {
    const types = JSON.parse(row.events) as string[];
    return { row, types: types.includes("*") ? null : new Set(types), webhook: webhookToSign(row.id, row) };
  });
}

/** One delivery per (event, subscribed webhook); a healthy webhook's is marked for a direct send. */
function planDeliveries(events: OpenEvent[], subscribers: Subscriber[]): DeliveryPlan {
  const plan: DeliveryPlan = { rows: [], direct: new Map() };
  for (const event of events) {
    let claimedEvent: ClaimedDelivery["event"] | undefined;
    for (const hook of subscribers) {
      if (hook.row.institution_id !== event.institution_id || (hook.types && !hook.types.has(event.type)))
        continue;
      const id = newId("dlv");
      // Only a webhook that answers well is worth sending to before the fan-out finishes.
      const sendNow = hook.row.consecutive_failures === 0 && plan.direct.size < DIRECT_SENDS_PER_INVOCATION;
      plan.rows.push([id, hook.row.id, event.id, event.type, sendNow ? 1 : 0]);
      if (!sendNow) continue;
      claimedEvent ??= {
        id: event.id,
        type: event.type,
        createdAt: event.created_at,
        payload: JSON.parse(event.payload) as Record<string, unknown>,
      };
      plan.direct.set(id, { id, attempt: 1, webhook: hook.webhook, event: claimedEvent, isPing: false });
    }
  }
  return plan;
}

/**
 * Inserts the planned deliveries; what this run inserted claimed is sent directly, the rest queued.
 * When an earlier run inserted some already (then stopped before marking the event), every delivery
 * of these events that nobody has tried or claimed yet is queued, whichever run wrote it.
 */
async function insertDeliveries(
  d1: D1Database,
  db: Database,
  plan: DeliveryPlan,
  events: OpenEvent[],
  at: { lease: number; now: number },
): Promise<{ toSend: ClaimedDelivery[]; toQueue: string[] }> {
  const statement = d1.prepare(INSERT_DELIVERIES_SQL);
  const results = await d1.batch<{ id: string }>(
    jsonArrays(plan.rows).map((rows) => statement.bind(rows, at.lease, at.now, nowIso(at.now))),
  );
  const inserted = results.flatMap((r) => r.results);
  const toSend: ClaimedDelivery[] = [];
  let toQueue: string[] = [];
  for (const { id } of inserted) {
    const claimed = plan.direct.get(id);
    if (claimed) toSend.push(claimed);
    else toQueue.push(id);
  }
  if (inserted.length < plan.rows.length) {
    const untried = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          inJsonList(
            webhookDeliveries.eventId,
            events.map((e) => e.id),
          ),
          isNull(webhookDeliveries.redeliveryOf),
          eq(webhookDeliveries.status, "pending"),
          eq(webhookDeliveries.attemptCount, 0),
        ),
      );
    // This run's unclaimed rows are among them (pending, never tried).
    toQueue = untried.map((d) => d.id);
  }
  return { toSend, toQueue };
}

async function markFannedOut(db: Database, events: OpenEvent[], now: number): Promise<void> {
  await db
    .update(outboxEvents)
    .set({ fannedOutAt: nowIso(now) })
    .where(
      and(
        inJsonList(
          outboxEvents.id,
          events.map((e) => e.id),
        ),
        isNull(outboxEvents.fannedOutAt),
      ),
    );
}
