import { env } from "cloudflare:test";

/**
 * A D1 binding that runs `beforeWrite()` before each batch that writes outbox events, i.e. when the
 * request that uses it has read what it changes and worked out its change, just before writing it.
 */
function interceptedWrites(real: D1Database, beforeWrite: () => Promise<void>): D1Database {
  const writesEvents = new WeakSet<D1PreparedStatement>();
  const binding: Record<string, unknown> = {
    prepare(sql: string) {
      const statement = real.prepare(sql);
      if (!/outbox_events/.test(sql)) return statement;
      return new Proxy(statement, {
        get(target, key) {
          if (key === "bind")
            return (...values: unknown[]) => {
              const bound = target.bind(...values);
              writesEvents.add(bound);
              return bound;
            };
          const value = Reflect.get(target, key);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
    async batch(statements: D1PreparedStatement[]) {
      if (statements.some((statement) => writesEvents.has(statement))) await beforeWrite();
      return real.batch(statements);
    },
    exec: (sql: string) => real.exec(sql),
    dump: () => real.dump(),
    // Its own session (local D1 has one database): every session of the request is intercepted alike.
    withSession: () => binding,
    getBookmark: () => null,
  };
  return binding as unknown as D1Database;
}

/**
 * A D1 binding whose first batch that writes outbox events waits until `release()`: the request that
 * uses it has read the member and worked out its change, and is held just before writing it, so that
 * another request can change the member in between — the race made to happen every time.
 */
export function heldBeforeItsWrite(real: D1Database) {
  let reached!: () => void;
  const held = new Promise<void>((resolve) => {
    reached = resolve;
  });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding = true;
  const binding = interceptedWrites(real, async () => {
    if (!holding) return;
    holding = false;
    reached();
    await released;
  });
  return { binding, held, release };
}

/**
 * A D1 binding before each of whose batches that write outbox events `overtake()` changes what the
 * request read (the first `times` such batches): a request that keeps losing the race.
 */
export function overtakenAtEveryWrite(real: D1Database, overtake: () => Promise<void>, times = Infinity) {
  let left = times;
  return interceptedWrites(real, async () => {
    if (left <= 0) return;
    left -= 1;
    await overtake();
  });
}

/**
 * A D1 binding before each of whose batches that write outbox events the member `userId` is renamed
 * (`${prefix} 1`, `${prefix} 2`, …) behind the request's back: a change of a field the request may or
 * may not depend on. `renames()` says how many times it was renamed.
 */
export function renamedAtEveryWrite(userId: string, prefix = "Renamed") {
  let renames = 0;
  const binding = overtakenAtEveryWrite(env.DB, async () => {
    renames += 1;
    await env.DB.prepare("UPDATE users SET name = ? WHERE id = ?").bind(`${prefix} ${renames}`, userId).run();
  });
  return { binding, renames: () => renames };
}

/**
 * Runs `request` with a D1 binding that holds it just before its write (`heldBeforeItsWrite`), runs
 * `meanwhile` (another change of what it read) while it is held, then lets it write: the race made
 * to happen every time. Answers what the request answered. Throws when the request finished without
 * reaching its write (it answered before `meanwhile` could overtake it): the race did not happen, so
 * the test would prove nothing.
 */
export async function overtakenBy<T>(
  request: (binding: D1Database) => Promise<T>,
  meanwhile: () => Promise<unknown>,
): Promise<T> {
  const held = heldBeforeItsWrite(env.DB);
  const pending = request(held.binding);
  const first = await Promise.race([
    held.held.then(() => "held" as const),
    pending.then(
      () => "finished" as const,
      () => "finished" as const,
    ),
  ]);
  if (first === "finished") {
    const answer = await pending.then(
      (value) => JSON.stringify(value, (_key, v) => (v instanceof Response ? `Response ${v.status}` : v)),
      (error) => String(error),
    );
    throw new Error(
      `overtakenBy: the request finished without reaching its write, so nothing overtook it: ${answer}`,
    );
  }
  try {
    await meanwhile();
  } finally {
    held.release();
  }
  return pending;
}
