import type { XapiActorFormat } from "../../../db/schema";
import { chunk, jsonArrays } from "../../../platform/batch";
import { newId, nowIso } from "../../../platform/ids";
import { commit } from "../../../platform/service/commit";
import type { ServiceContext } from "../../../platform/service/context";
import { buildStatements, type Fact } from "../statements";
import { INSERT_BATCH_SQL, INSERT_STATEMENTS_SQL, UNSENT_BATCHES_SQL } from "./sql";
import { BATCH_SIZE, enqueueBatches } from "./target";

/** Facts per commit: at most 20 batches' statements in one D1 batch. */
const FACTS_PER_COMMIT = 20 * BATCH_SIZE;

/** What an offer needs of its endpoint. */
export interface OfferTarget {
  id: string;
  actorFormat: XapiActorFormat;
}

/**
 * Offers facts to one endpoint (the outbox subscriber, and the back-fill): their statements are
 * built, then stored and grouped into batches of at most 50 in one commit (the statements as rows of
 * the forwarding log, their bodies as one JSON value per batch), and the batches queued.
 * A statement's id is derived from the endpoint and the fact, and an id stored before is skipped
 * (`ON CONFLICT DO NOTHING`): offering a fact twice — a redelivered event, two twin messages at
 * once, a back-fill over forwarded days — never makes a second statement. Untried batches of an
 * earlier offer of the same facts (one that stopped before queueing them) are queued again; the
 * engine's claim makes a second message for a batch harmless. Returns how many statements were new.
 */
export async function offerFacts(
  ctx: ServiceContext,
  endpoint: OfferTarget,
  facts: readonly Fact[],
): Promise<{ statements: number; batches: number }> {
  let statements = 0;
  let batches = 0;
  for (const part of chunk([...facts], FACTS_PER_COMMIT)) {
    const built = await buildStatements(ctx, { id: endpoint.id, actorFormat: endpoint.actorFormat }, part);
    const unique = [...new Map(built.map((b) => [b.id, b])).values()];
    if (unique.length === 0) continue;
    const now = nowIso(ctx.now());
    const groups = chunk(unique, BATCH_SIZE).map((group) => ({ id: newId("xbt"), group }));
    const rows = groups.flatMap(({ id, group }) =>
      group.map((s) => [s.id, id, s.verb, s.activityId, s.userId, s.occurredAt]),
    );
    const insert = ctx.d1.prepare(INSERT_STATEMENTS_SQL);
    const inserts = jsonArrays(rows).map((json) => insert.bind(json, endpoint.id, now));
    // The statements' bodies travel with their batch, one JSON text each (never a row per body).
    const insertBatch = ctx.d1.prepare(INSERT_BATCH_SQL);
    const { results } = await commit(ctx, {
      statements: [
        ...inserts,
        ...groups.map(({ id, group }) =>
          insertBatch.bind(id, endpoint.id, now, JSON.stringify(group.map((s) => s.statement))),
        ),
        ctx.d1.prepare(UNSENT_BATCHES_SQL).bind(JSON.stringify(unique.map((s) => s.id))),
      ],
    });
    statements += inserts.reduce((sum, _, i) => sum + (results[i]?.meta.changes ?? 0), 0);
    const queued = ((results.at(-1)?.results ?? []) as { id: string }[]).map((r) => r.id);
    batches += queued.length;
    if (queued.length > 0) await enqueueBatches(ctx, queued);
  }
  return { statements, batches };
}
