import { deadLetterBatch, deliverBatch } from "../../../platform/delivery";
import { nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { CLEAR_BODIES_OF_BATCHES_SQL, FAIL_PENDING_OF_BATCHES_SQL, OWN_STATE_OF_BATCHES_SQL } from "./sql";
import { xapiTarget } from "./target";

/**
 * The xAPI queue: each batch claimed (so a twin message does not send it again), its pending
 * statements sent once per attempt and recorded by the delivery engine, its retry the message handed
 * back with the retry's delay.
 */
export function deliverXapiBatches(batch: MessageBatch<unknown>, ctx: ServiceContext): Promise<void> {
  return deliverBatch(ctx, xapiTarget, batch);
}

/**
 * Batches whose messages the queue gave up on: their statements still pending (and, in the same
 * write, the batches' facts cleared), then the batches, closed as failed, visibly. The statements
 * go first: if that write fails nothing is acknowledged and the dead letters come again.
 */
export async function deadLetterXapiBatches(
  batch: MessageBatch<unknown>,
  ctx: ServiceContext,
): Promise<void> {
  const ids = [
    ...new Set(
      batch.messages.flatMap((m) => {
        const parsed = xapiTarget.message.schema.safeParse(m.body);
        return parsed.success ? [parsed.data.batch_id] : [];
      }),
    ),
  ];
  if (ids.length > 0) {
    const list = JSON.stringify(ids);
    await ctx.d1.batch([
      ctx.d1.prepare(OWN_STATE_OF_BATCHES_SQL).bind(list),
      ctx.d1.prepare(FAIL_PENDING_OF_BATCHES_SQL).bind(list, xapiTarget.deadLetteredError, nowIso(ctx.now())),
      ctx.d1.prepare(CLEAR_BODIES_OF_BATCHES_SQL).bind(list),
    ]);
  }
  await deadLetterBatch(ctx, xapiTarget, batch);
}
