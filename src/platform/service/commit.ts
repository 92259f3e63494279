import { jsonArrays } from "../batch";
import { type OutboxRow, publishEvents } from "../events";
import type { ServiceContext } from "./context";
import { claimAll, type DirectoryClaim } from "./directory";

/** A drizzle query builder (insert, update, delete, select) or a D1 statement already bound. */
export type Writable = D1PreparedStatement | { toSQL(): { sql: string; params: unknown[] } };

export interface Change {
  /** The writes, in order; a `batchGuard` among them fails (and so rolls back) the whole change. */
  statements: readonly Writable[];
  /**
   * The domain events this change reports, written in the same batch, ahead of the statements (so
   * that a statement may refer to its event: a webhook delivery row does). An event born dispatched
   * (`dispatchedAt` set: the webhook test ping, which goes to one webhook only) is written but never
   * published.
   */
  events?: readonly OutboxRow[];
  /**
   * Write the events only if the last statement changed a row (SQLite's `changes()`), for a
   * conditional write whose event must not outlive a lost race; the events then follow the
   * statements. Default: always.
   */
  eventsIfLastChanged?: boolean;
  /**
   * Keys the change's rows must hold across every database (an e-mail of a new user), claimed in
   * `DB`'s directory before the batch when the invocation is in another database
   * (design/multi-database.md); a key taken throws as its unique constraint would.
   */
  claims?: readonly DirectoryClaim[];
}

export interface Committed {
  /** D1's result of each of the change's statements, in order. */
  results: D1Result[];
  /** The ids of the events written (none when `eventsIfLastChanged` found nothing changed). */
  eventIds: string[];
}

// The events travel as one JSON array per statement: any number of them, a handful of parameters.
// JSON columns travel as nested JSON and are stored as the text of that part (`->`).
const INSERT_EVENTS = `INSERT INTO outbox_events (id, type, institution_id, user_id, payload, created_at, fanned_out_at, dispatched_at)
  SELECT value->>'id', value->>'type', value->>'institution_id', value->>'user_id', value->'payload', value->>'created_at',
    value->>'fanned_out_at', value->>'dispatched_at'
  FROM json_each(?1)`;

function bound(ctx: ServiceContext, statement: Writable): D1PreparedStatement {
  if (!("toSQL" in statement)) return statement;
  const { sql, params } = statement.toSQL();
  return ctx.d1.prepare(sql).bind(...params);
}

/**
 * The one way to change state: the statements and their outbox events in one D1 batch (one
 * transaction: all or nothing), then the events handed to the events queue without holding up the
 * caller. Publishing never fails the change: an event whose send failed is picked up by the
 * scheduled sweep (platform/outbox-sweep.ts). No domain writes `outbox_events` or sends to the
 * events queue any other way.
 */
export async function commit(ctx: ServiceContext, change: Change): Promise<Committed> {
  // A key whose batch then fails is kept: it leads to no row, and the next claim of it by another
  // institution takes it over (a batch that failed on the wire may have been written after all).
  if (change.claims && change.claims.length > 0) await claimAll(ctx, change.claims);
  const events = change.events ?? [];
  const statements = change.statements.map((statement) => bound(ctx, statement));
  const eventRows = events.map((event) => ({
    id: event.id,
    type: event.type,
    institution_id: event.institutionId ?? null,
    user_id: event.userId ?? null,
    payload: event.payload,
    created_at: event.createdAt,
    fanned_out_at: event.fannedOutAt ?? null,
    dispatched_at: event.dispatchedAt ?? null,
  }));
  const condition = change.eventsIfLastChanged ? " WHERE changes() > 0" : "";
  // Only one statement may test `changes()`: it reads the statement just before it.
  const eventStatements = (condition ? [JSON.stringify(eventRows)] : jsonArrays(eventRows)).map((json) =>
    ctx.d1.prepare(INSERT_EVENTS + condition).bind(json),
  );
  const eventsFirst = !condition;
  const written = events.length > 0 ? eventStatements : [];
  const all = eventsFirst ? [...written, ...statements] : [...statements, ...written];
  if (all.length === 0) return { results: [], eventIds: [] };
  const results = await ctx.d1.batch(all);
  const ownResults = eventsFirst ? results.slice(written.length) : results.slice(0, statements.length);
  const eventResults = eventsFirst ? results.slice(0, written.length) : results.slice(statements.length);
  const anyWritten = eventResults.some((result) => (result.meta.changes ?? 0) > 0);
  const eventIds = anyWritten ? events.map((event) => event.id) : [];
  const toPublish = anyWritten ? events.filter((event) => !event.dispatchedAt).map((event) => event.id) : [];
  if (toPublish.length > 0) ctx.waitUntil(publishEvents(ctx, toPublish));
  return { results: ownResults, eventIds };
}
