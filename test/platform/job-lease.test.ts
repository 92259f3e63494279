import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { beforeAll, describe, expect, it } from "vitest";
import { database } from "../../src/platform/db";
import {
  awaitingMessage,
  claimable,
  dueLapsedBefore,
  expired,
  heldBy,
  isHeld,
  LEASE_MS,
  MESSAGE_GRACE_MS,
  renewed,
  taken,
} from "../../src/platform/jobs/lease";

// A job table of the test's own, with the two lease columns every job table has.
const probes = sqliteTable("lease_probes", {
  id: text("id").primaryKey(),
  leaseId: text("lease_id"),
  leaseUntil: integer("lease_until"),
});
const LEASE = { leaseId: probes.leaseId, leaseUntil: probes.leaseUntil };
const db = () => database(env.DB);
const NOW = 1_000_000_000;

beforeAll(async () => {
  await env.DB.exec(
    "CREATE TABLE IF NOT EXISTS lease_probes (id TEXT PRIMARY KEY, lease_id TEXT, lease_until INTEGER)",
  );
});

async function probe(id: string, values: { leaseId: string | null; leaseUntil: number | null }) {
  await db()
    .insert(probes)
    .values({ id, ...values })
    .run();
  return id;
}

async function matching(where: ReturnType<typeof claimable>, ids: string[]) {
  const rows = await db().select({ id: probes.id }).from(probes).where(where);
  return rows
    .map((r) => r.id)
    .filter((id) => ids.includes(id))
    .sort();
}

describe("job leases", () => {
  it("values: taken for LEASE_MS, renewed from now, awaiting a message until its due time plus the grace", () => {
    expect(taken("lse_a", NOW)).toEqual({ leaseId: "lse_a", leaseUntil: NOW + LEASE_MS });
    expect(renewed(NOW + 5)).toEqual({ leaseUntil: NOW + 5 + LEASE_MS });
    expect(awaitingMessage(NOW)).toEqual({ leaseId: null, leaseUntil: NOW + MESSAGE_GRACE_MS });
    expect(awaitingMessage(NOW, 3_600_000)).toEqual({
      leaseId: null,
      leaseUntil: NOW + 3_600_000 + MESSAGE_GRACE_MS,
    });
    expect(awaitingMessage(NOW, -5).leaseUntil).toBe(NOW + MESSAGE_GRACE_MS);
    expect(dueLapsedBefore(NOW)).toBe(NOW - MESSAGE_GRACE_MS);
    expect(LEASE_MS).toBeLessThanOrEqual(90_000);
    expect(LEASE_MS + MESSAGE_GRACE_MS).toBeLessThanOrEqual(150_000);
  });

  it("isHeld: a holder with a live lease; not a job awaiting a message, nor a holder whose lease ran out", () => {
    expect(isHeld({ leaseId: "lse_a", leaseUntil: NOW }, NOW)).toBe(true);
    expect(isHeld({ leaseId: "lse_a", leaseUntil: NOW - 1 }, NOW)).toBe(false);
    expect(isHeld({ leaseId: null, leaseUntil: NOW + 60_000 }, NOW)).toBe(false);
    expect(isHeld({ leaseId: "lse_a", leaseUntil: null }, NOW)).toBe(false);
  });

  it("claimable, expired and heldBy, as SQL over the lease columns", async () => {
    const tag = crypto.randomUUID();
    const ids = [
      await probe(`${tag}-held`, taken("lse_live", NOW)),
      await probe(`${tag}-dead`, { leaseId: "lse_dead", leaseUntil: NOW - 1 }),
      await probe(`${tag}-waiting`, awaitingMessage(NOW, 3_600_000)),
      await probe(`${tag}-overdue`, { leaseId: null, leaseUntil: NOW - 1 }),
      await probe(`${tag}-never`, { leaseId: null, leaseUntil: null }),
    ];
    // A message may take any job nobody holds, or whose holder's lease ran out.
    expect(await matching(claimable(LEASE, NOW), ids)).toEqual(
      [`${tag}-dead`, `${tag}-never`, `${tag}-overdue`, `${tag}-waiting`].sort(),
    );
    // The sweep resumes only what nobody accounts for: not the held job, not the one whose message
    // waits out an hour's delay.
    expect(await matching(expired(LEASE, NOW), ids)).toEqual(
      [`${tag}-dead`, `${tag}-never`, `${tag}-overdue`].sort(),
    );
    // An hour and a minute later, the waiting job's message is overdue too; the holder's lease ran out.
    expect(await matching(expired(LEASE, NOW + 3_600_000 + MESSAGE_GRACE_MS + 1), ids)).toEqual(
      [...ids].sort(),
    );
    expect(await matching(heldBy(LEASE, "lse_live"), ids)).toEqual([`${tag}-held`]);
  });

  it("a conditional take over an expired lease succeeds once: two sweeps at the same time re-send once", async () => {
    const id = await probe(crypto.randomUUID(), { leaseId: "lse_dead", leaseUntil: NOW - 1 });
    const take = () =>
      db()
        .update(probes)
        .set(awaitingMessage(NOW))
        .where(and(eq(probes.id, id), expired(LEASE, NOW)))
        .run();
    const results = await Promise.all([take(), take()]);
    expect(results.map((r) => r.meta.changes).sort()).toEqual([0, 1]);
    // The holder presumed dead lost its lease: its writes, conditional on heldBy, change nothing.
    const late = await db()
      .update(probes)
      .set(renewed(NOW))
      .where(and(eq(probes.id, id), heldBy(LEASE, "lse_dead")))
      .run();
    expect(late.meta.changes).toBe(0);
  });
});
