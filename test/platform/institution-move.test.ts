import { env } from "cloudflare:test";
import { eq, inArray, is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { beforeAll, describe, expect, it } from "vitest";
import { INSTITUTION_TABLES, movedTables } from "../../src/db/institution-tables";
import * as schema from "../../src/db/schema";
import { attempts, institutionDatabases, institutionMoves } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { sweepMoves } from "../../src/platform/move/consumer";
import { claimMove } from "../../src/platform/move/jobs";
import { runMove } from "../../src/platform/move/run";
import {
  FREEZE,
  type MovedKey,
  pageOfKeys,
  SWITCH,
  THAW,
  WRITE_KEYS,
  writeKeys,
} from "../../src/platform/move/sql";
import { backgroundContext } from "../../src/platform/service/context";
import { HeldQueue } from "../exports/support";
import { call, callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { receiverEndpoint } from "../helpers/receiver";
import {
  createPlatformAdmin,
  createTenant,
  PASSWORD,
  signIn,
  type Tenant,
  type TestUser,
} from "../helpers/tenants";
import { createWebhook, runQueue } from "../webhooks/support";

/**
 * Moving an institution to another D1 database online (docs/design/multi-database.md#moving-an-institution-online):
 * every table classified, the refusals, a move under a loop of writes and reads, a crash mid-copy.
 */
type Db = "DB" | "DB_1";
const inDb = (name: Db) => database(env[name]);

let staff: TestUser;
beforeAll(async () => {
  staff = await createPlatformAdmin();
});

/** Every key of the institution's rows in one database, by table (the move's own selection). */
async function keysIn(name: Db, institutionId: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of movedTables()) {
    const { sql } = pageOfKeys(table, null, 1_000_000);
    const { results } = await env[name].prepare(sql).bind(institutionId).all<{ k: string }>();
    if (results.length > 0) out[table.name] = results.map((row) => row.k);
  }
  return out;
}

const start = (
  institutionId: string,
  body: unknown,
  token = staff.token,
  bindings?: Partial<Cloudflare.Env>,
) =>
  callJson(`/api/institutions/${institutionId}/move`, {
    token,
    body,
    ...(bindings ? { env: bindings } : {}),
  });

async function moveAndWait(institutionId: string, target: Db, timeoutMs = 60_000) {
  const { res, body } = await start(institutionId, { database: target });
  expect(res.status, JSON.stringify(body)).toBe(202);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body: now } = await callJson(`/api/institutions/${institutionId}/move`, { token: staff.token });
    if (now.move.id === body.id && ["completed", "failed"].includes(now.move.state)) return now;
    if (Date.now() > deadline) throw new Error(`move not done: ${JSON.stringify(now)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const attempt = (itemId: string) => ({
  id: crypto.randomUUID(),
  training_item_id: itemId,
  score: 1,
  correct: true,
  duration_seconds: 20,
  occurred_at: new Date(Date.now() - 60_000).toISOString(),
});

describe("which rows are an institution's", () => {
  it("classifies every table of the schema, parents before children", () => {
    const tables = (Object.values(schema) as unknown[]).filter((value): value is SQLiteTable =>
      is(value, SQLiteTable),
    );
    const classified = new Set(INSTITUTION_TABLES.map((entry) => entry.table));
    const missing = tables
      .filter((table) => !classified.has(table))
      .map((table) => getTableConfig(table).name);
    expect(missing, "add them to src/db/institution-tables.ts").toEqual([]);
    expect(INSTITUTION_TABLES).toHaveLength(tables.length);
    // A moved row's parent (its foreign key's table) is copied before it and deleted after it.
    const order = INSTITUTION_TABLES.map((entry) => getTableConfig(entry.table).name);
    const moved = new Set(movedTables().map((table) => table.name));
    const wrong: string[] = [];
    for (const entry of INSTITUTION_TABLES) {
      const config = getTableConfig(entry.table);
      if (!moved.has(config.name)) continue;
      for (const fk of config.foreignKeys) {
        const parent = getTableConfig(fk.reference().foreignTable).name;
        if (moved.has(parent) && order.indexOf(parent) > order.indexOf(config.name))
          wrong.push(`${config.name} before its parent ${parent}`);
      }
    }
    expect(wrong).toEqual([]);
  });
  it("writes every kind of directory key with the rows it finds (a moved table's columns)", async () => {
    const moved = new Map(movedTables().map((table) => [table.name, table]));
    const covered = new Set(Object.values(WRITE_KEYS).flatMap((keys) => keys.map((key) => key.kind)));
    expect([...covered].sort()).toEqual([...schema.directoryKeys.kind.enumValues].sort());
    for (const [name, keys] of Object.entries(WRITE_KEYS))
      for (const key of keys)
        for (const column of key.columns) expect(moved.get(name)?.columns, name).toContain(column);
    // The statements themselves, on a page of rows as the copy reads them.
    const db = env.DB;
    const page = (rows: Record<string, unknown>[]) => JSON.stringify(rows);
    const run = (key: MovedKey, rows: Record<string, unknown>[], institution: string) =>
      db.prepare(writeKeys(key)).bind(page(rows), institution).run();
    const [client] = WRITE_KEYS.lti_consumers?.filter((key) => key.kind === "lti_client") ?? [];
    const [domain] = WRITE_KEYS.sso_domains ?? [];
    if (!client || !domain) throw new Error("lti_client and sso_domain keys expected");
    await run(client, [{ issuer: "https://lms.test", client_id: "c-1" }], "ins_move_keys_a");
    await run(client, [{ issuer: "https://lms.test", client_id: "c-1" }], "ins_move_keys_b");
    await run(
      domain,
      [
        { domain: "verified.move.test", status: "verified" },
        { domain: "pending.move.test", status: "pending" },
      ],
      "ins_move_keys_a",
    );
    const keys = await db
      .prepare(
        "SELECT kind, key, institution_id FROM directory_keys WHERE institution_id LIKE 'ins_move_keys_%'",
      )
      .all();
    expect(keys.results).toEqual(
      expect.arrayContaining([
        // The first holder of a platform's pair keeps it; a verified domain only.
        { kind: "lti_client", key: "https://lms.test c-1", institution_id: "ins_move_keys_a" },
        { kind: "sso_domain", key: "verified.move.test", institution_id: "ins_move_keys_a" },
      ]),
    );
    expect(keys.results).toHaveLength(2);
  });
});

describe("the directory's statements", () => {
  it("freeze only where the directory places it, switch only a frozen row (epoch + 1), thaw it back", async () => {
    const id = `ins_dir_${crypto.randomUUID()}`;
    const home = env.DB;
    const row = () =>
      inDb("DB").select().from(institutionDatabases).where(eq(institutionDatabases.institutionId, id)).get();
    const now = new Date().toISOString();
    // No row: it lives in DB; the freeze inserts one there.
    expect((await home.prepare(FREEZE).bind(id, "DB", now).run()).meta.changes).toBe(1);
    expect(await row()).toMatchObject({ binding: "DB", epoch: 0, state: "moving" });
    expect((await home.prepare(THAW).bind(id, now).run()).meta.changes).toBe(1);
    expect(await row()).toMatchObject({ binding: "DB", state: "active" });
    // Not frozen: no switch.
    expect((await home.prepare(SWITCH).bind(id, "DB_1", now).run()).meta.changes).toBe(0);
    // A freeze naming another source than the directory's changes nothing.
    expect((await home.prepare(FREEZE).bind(id, "DB_1", now).run()).meta.changes).toBe(0);
    expect(await row()).toMatchObject({ binding: "DB", state: "active" });
    await home.prepare(FREEZE).bind(id, "DB", now).run();
    expect((await home.prepare(SWITCH).bind(id, "DB_1", now).run()).meta.changes).toBe(1);
    expect(await row()).toMatchObject({ binding: "DB_1", epoch: 1, state: "active" });
  });
});

describe("starting a move", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
  });

  it("is platform staff's: a member of the institution is refused, another institution is not found", async () => {
    // Moving needs `institutions:write`, which only staff's tokens hold.
    const own = await start(tenant.institution.id, { database: "DB_1" }, tenant.admin.token);
    expect(own.res.status).toBe(403);
    expect(own.body).toMatchObject({ code: "missing_ability" });
    // Reading where it lives: the policy's answer, 403 for its own admin, 404 for another's.
    const path = `/api/institutions/${tenant.institution.id}/move`;
    const mine = await callJson(path, { token: tenant.admin.token });
    expect(mine.res.status).toBe(403);
    expect(mine.body.detail).toMatch(/Only platform staff/);
    const other = await createTenant();
    expect((await callJson(path, { token: other.admin.token })).res.status).toBe(404);
    const missing = await start("ins_nobody", { database: "DB_1" });
    expect(missing.res.status).toBe(404);
  });

  it("refuses a database the deployment does not have (422) and the one it lives in (409); nothing is queued", async () => {
    const queue = new HeldQueue();
    const bindings = { INSTITUTION_MOVE_QUEUE: queue as unknown as Queue };
    for (const database of ["DB_7", "users", ""]) {
      const { res, body } = await start(tenant.institution.id, { database }, staff.token, bindings);
      expect(res.status, database).toBe(422);
      expect(body).toMatchObject({ code: "validation_failed", errors: [{ path: "database" }] });
    }
    const there = await start(tenant.institution.id, { database: "DB" }, staff.token, bindings);
    expect(there.res.status).toBe(409);
    expect(there.body).toMatchObject({ code: "institution_already_there" });
    expect(queue.messages).toEqual([]);
    const { body } = await callJson(`/api/institutions/${tenant.institution.id}/move`, {
      token: staff.token,
    });
    expect(body).toEqual({ database: "DB", move: null });
  });

  it("runs one move at a time: a second, even concurrent, is 409 naming the first", async () => {
    const other = await createTenant();
    const queue = new HeldQueue();
    const bindings = { INSTITUTION_MOVE_QUEUE: queue as unknown as Queue };
    const both = await Promise.all([
      start(other.institution.id, { database: "DB_1" }, staff.token, bindings),
      start(other.institution.id, { database: "DB_1" }, staff.token, bindings),
    ]);
    expect(both.map((r) => r.res.status).sort()).toEqual([202, 409]);
    const first = both.find((r) => r.res.status === 202)!.body;
    expect(first).toMatchObject({ state: "queued", source: "DB", target: "DB_1" });
    expect(both.find((r) => r.res.status === 409)!.body).toMatchObject({
      code: "institution_move_in_progress",
      move_id: first.id,
    });
    expect(queue.messages).toEqual([{ move_id: first.id, generation: 0 }]);
    // Run it to the end through the held queue.
    while (queue.messages.length > 0) await runQueue("lingua-institution-moves", [queue.take()], bindings);
    const { body } = await callJson(`/api/institutions/${other.institution.id}/move`, { token: staff.token });
    expect(body).toMatchObject({ database: "DB_1", move: { id: first.id, state: "completed" } });
  }, 60_000);
});

describe("a move under writes and reads", () => {
  it("loses no write, never fails a read, and leaves every row in the target once", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const course = await createPublishedCourse({
      lessons: 3,
      blocksPerLesson: 1,
      itemsPerBlock: 80,
      databases: ["DB", "DB_1"],
    });
    const items = course.items;
    const receiver = receiverEndpoint();
    const hook = await createWebhook(tenant.admin, {
      url: receiver.url,
      events: ["*"],
    });
    await receiver.configure({ secrets: [hook.secret] });
    const apiToken = (
      await callJson("/api/integrations/tokens", {
        token: tenant.admin.token,
        body: { name: "before the move", abilities: ["members:read"] },
      })
    ).body.token as string;
    // Some history before the move.
    const before = items.slice(0, 5).map(attempt);
    expect(
      (await callJson("/api/progress/attempts", { token: tenant.learner.token, body: { attempts: before } }))
        .res.status,
    ).toBe(200);
    const snapshot = await keysIn("DB", id);
    expect(Object.keys(snapshot)).toEqual(
      expect.arrayContaining(["users", "api_tokens", "attempts", "webhooks", "learner_stats"]),
    );

    // Writes: one attempt at a time with stable ids, each retried after a 503's Retry-After.
    let moving = true;
    const written: string[] = [];
    let refused = 0;
    const writes = (async () => {
      for (let n = 5; moving && n < items.length; n++) {
        const sent = attempt(items[n] as string);
        for (;;) {
          const res = await call("/api/progress/attempts", {
            token: tenant.learner.token,
            body: { attempts: [sent] },
          });
          if (res.status === 503) {
            refused += 1;
            expect(((await res.json()) as { code: string }).code).toBe("institution_moving");
            await new Promise((r) => setTimeout(r, Number(res.headers.get("Retry-After")) * 1000));
            continue;
          }
          expect(res.status).toBe(200);
          written.push(sent.id);
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    // Reads: never fail.
    const readFailures: string[] = [];
    let reads = 0;
    const readLoop = (async () => {
      while (moving) {
        for (const path of ["/api/auth/me", "/api/gamification/stats", "/api/progress-history"]) {
          const res = await call(path, { token: tenant.learner.token });
          reads += 1;
          if (res.status !== 200) readFailures.push(`${path}: ${res.status}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    await new Promise((r) => setTimeout(r, 1_500)); // writes flow before the move starts, and while it copies
    const done = await moveAndWait(id, "DB_1");
    moving = false;
    await Promise.all([writes, readLoop]);
    expect(done).toMatchObject({
      database: "DB_1",
      move: { state: "completed", source: "DB", target: "DB_1", error: null },
    });
    expect(readFailures).toEqual([]);
    expect(reads).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(0); // the switch did stop writes
    expect(done.move.progress.freeze_ms).toBeGreaterThanOrEqual(5_000);
    console.log(
      JSON.stringify({ freeze_ms: done.move.progress.freeze_ms, writes: written.length, refused, reads }),
    );

    // Every attempt is in DB_1 exactly once, none in DB.
    const all = [...before.map((a) => a.id), ...written];
    const there = await inDb("DB_1")
      .select({ id: attempts.id })
      .from(attempts)
      .where(eq(attempts.userId, tenant.learner.id));
    expect(there.map((a) => a.id).sort()).toEqual([...all].sort());
    expect(await inDb("DB").select().from(attempts).where(inArray(attempts.id, all))).toEqual([]);
    // Nothing of the institution left in DB; everything it had is in DB_1.
    expect(await keysIn("DB", id)).toEqual({});
    const after = await keysIn("DB_1", id);
    for (const [table, keys] of Object.entries(snapshot))
      expect(after[table], table).toEqual(expect.arrayContaining(keys));
    expect(done.move.progress.verified.attempts).toBeGreaterThanOrEqual(before.length);

    // Sign-in by password, an API token from before, a webhook delivery: all in DB_1 now.
    const session = await signIn(tenant.admin.email, PASSWORD);
    expect((await callJson("/api/auth/me", { token: session.token })).body.institution.id).toBe(id);
    expect((await call(`/api/institutions/${id}/members`, { token: apiToken })).status).toBe(200);
    const received = (await receiver.received()).length;
    const another = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 1,
      databases: ["DB", "DB_1"],
    });
    const last = attempt(another.items[0] as string);
    const recorded = await callJson("/api/progress/attempts", {
      token: tenant.learner.token,
      body: { attempts: [last] },
    });
    expect(recorded.res.status).toBe(200);
    expect(recorded.body.summary.events.map((e: { type: string }) => e.type)).toContain("lesson.completed");
    await receiver.waitFor(received + 1);
    expect(await inDb("DB_1").select().from(attempts).where(eq(attempts.id, last.id))).toHaveLength(1);

    // And back to DB: every row as it was in DB_1, the directory keys gone.
    await new Promise((r) => setTimeout(r, 1_000)); // let the last deliveries settle
    const inTarget = await keysIn("DB_1", id);
    const back = await moveAndWait(id, "DB");
    expect(back).toMatchObject({ database: "DB", move: { state: "completed" } });
    expect(await keysIn("DB", id)).toEqual(inTarget);
    expect(await keysIn("DB_1", id)).toEqual({});
    expect((await call(`/api/institutions/${id}/members`, { token: apiToken })).status).toBe(200);
    const directory = await inDb("DB")
      .select()
      .from(institutionDatabases)
      .where(eq(institutionDatabases.institutionId, id))
      .get();
    expect(directory).toMatchObject({ binding: "DB", epoch: 2, state: "active" });
  }, 120_000);
});

describe("a crash mid-copy", () => {
  it("resumes from the checkpoint, duplicating nothing", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const course = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 6,
      databases: ["DB", "DB_1"],
    });
    const sent = course.items.map(attempt);
    expect(
      (await callJson("/api/progress/attempts", { token: tenant.learner.token, body: { attempts: sent } }))
        .res.status,
    ).toBe(200);
    const snapshot = await keysIn("DB", id);
    const queue = new HeldQueue();
    const bindings = { INSTITUTION_MOVE_QUEUE: queue as unknown as Queue };
    const { body: move } = await start(id, { database: "DB_1" }, staff.token, bindings);
    const message = queue.take() as { move_id: string; generation: number };

    // An invocation takes the move, copies a few tables, and dies without a word.
    const clock = Date.now();
    const dying = testContext({ now: () => clock });
    const job = await claimMove(dying, { message, leaseId: "lse_dying" });
    expect(job).not.toBeNull();
    let steps = 0;
    const tick = () => {
      steps += 1;
      return clock + steps * 10;
    };
    const counted = testContext({ now: tick });
    expect(await runMove(counted, job!, "lse_dying", clock + 120)).toBe("continue");
    const held = await inDb("DB")
      .select()
      .from(institutionMoves)
      .where(eq(institutionMoves.id, move.id))
      .get();
    expect(held).toMatchObject({ state: "copying" });
    expect((held?.cursor as { table: number } | undefined)?.table).toBeGreaterThan(0);

    // The sweep finds its lease run out and sends a new message; the move runs on from the checkpoint.
    const sweeping = backgroundContext(
      { ...env, ...bindings } as Cloudflare.Env,
      { waitUntil: (promise) => void promise.catch(() => undefined) },
      "cron",
      () => Date.now() + 10 * 60_000,
    );
    expect(await sweepMoves(sweeping)).toEqual({ resumed: 1 });
    expect(queue.messages).toEqual([{ move_id: move.id, generation: message.generation }]);
    while (queue.messages.length > 0) await runQueue("lingua-institution-moves", [queue.take()], bindings);
    const { body } = await callJson(`/api/institutions/${id}/move`, { token: staff.token });
    expect(body).toMatchObject({ database: "DB_1", move: { id: move.id, state: "completed" } });
    // Every row once in DB_1, as it was in DB; none left there.
    expect(await keysIn("DB_1", id)).toEqual(snapshot);
    expect(await keysIn("DB", id)).toEqual({});
    const there = await inDb("DB_1")
      .select({ id: attempts.id })
      .from(attempts)
      .where(eq(attempts.userId, tenant.learner.id));
    expect(there.map((a) => a.id).sort()).toEqual(sent.map((a) => a.id).sort());
    // The dead holder, waking up, writes nothing.
    await expect(runMove(counted, job!, "lse_dying", Number.MAX_SAFE_INTEGER)).rejects.toThrow(
      /lease was lost/,
    );
  }, 60_000);

  it("given up by the queue before its switch, leaves the institution where it was and nothing in the target", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const snapshot = await keysIn("DB", id);
    const queue = new HeldQueue();
    const bindings = { INSTITUTION_MOVE_QUEUE: queue as unknown as Queue };
    const { body: move } = await start(id, { database: "DB_1" }, staff.token, bindings);
    const message = queue.take() as { move_id: string; generation: number };
    // Copies some tables, then its invocation dies; long ago, so its lease has run out.
    const past = Date.now() - 10 * 60_000;
    let steps = 0;
    const dying = testContext({
      now: () => {
        steps += 10;
        return past + steps;
      },
    });
    const job = await claimMove(dying, { message, leaseId: "lse_gone" });
    expect(await runMove(dying, job!, "lse_gone", past + 150)).toBe("continue");
    expect(Object.keys(await keysIn("DB_1", id)).length).toBeGreaterThan(0);

    // The queue gives up on its message: the move fails, the copy in DB_1 is deleted.
    await runQueue("lingua-institution-moves-dlq", [message], bindings);
    const { body } = await callJson(`/api/institutions/${id}/move`, { token: staff.token });
    expect(body).toMatchObject({ database: "DB", move: { id: move.id, state: "failed" } });
    expect(body.move.error).toMatch(/stays in the source/);
    expect(await keysIn("DB_1", id)).toEqual({});
    expect(await keysIn("DB", id)).toEqual(snapshot);
    expect((await callJson("/api/auth/me", { token: tenant.admin.token })).res.status).toBe(200);
    expect((await signIn(tenant.learner.email, PASSWORD)).token).toBeTruthy();
  }, 60_000);

  it("died right after its switch: the resumed move neither prunes nor abandons the target, and finishes", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const snapshot = await keysIn("DB", id);
    const queue = new HeldQueue();
    const bindings = { INSTITUTION_MOVE_QUEUE: queue as unknown as Queue };
    const { body: move } = await start(id, { database: "DB_1" }, staff.token, bindings);
    const message = queue.take() as { move_id: string; generation: number };
    // Copies some tables, then (as far as the directory knows) switches and dies before recording it.
    const past = Date.now() - 10 * 60_000;
    let steps = 0;
    const dying = testContext({
      now: () => {
        steps += 10;
        return past + steps;
      },
    });
    const job = await claimMove(dying, { message, leaseId: "lse_switched" });
    await runMove(dying, job!, "lse_switched", past + 150);
    await inDb("DB")
      .update(institutionMoves)
      .set({ state: "switching", frozenAt: past, cursor: { table: 3, after: null, pass: 0, step: "prune" } })
      .where(eq(institutionMoves.id, move.id));
    await inDb("DB")
      .insert(institutionDatabases)
      .values({
        institutionId: id,
        binding: "DB_1",
        epoch: 1,
        state: "active",
        updatedAt: new Date().toISOString(),
      })
      .onConflictDoUpdate({
        target: institutionDatabases.institutionId,
        set: { binding: "DB_1", epoch: 1, state: "active" },
      });
    // A write that reached the target after the switch, which the source never had.
    const [item] = (await createPublishedCourse({ itemsPerBlock: 1, databases: ["DB", "DB_1"] })).items;
    const late = { ...attempt(item as string), id: crypto.randomUUID() };
    expect(
      (await callJson("/api/progress/attempts", { token: tenant.learner.token, body: { attempts: [late] } }))
        .res.status,
    ).toBe(200);

    const sweeping = backgroundContext(
      { ...env, ...bindings } as Cloudflare.Env,
      { waitUntil: (promise) => void promise.catch(() => undefined) },
      "cron",
      () => Date.now() + 10 * 60_000,
    );
    expect(await sweepMoves(sweeping)).toEqual({ resumed: 1 });
    while (queue.messages.length > 0) await runQueue("lingua-institution-moves", [queue.take()], bindings);
    const { body } = await callJson(`/api/institutions/${id}/move`, { token: staff.token });
    expect(body).toMatchObject({ database: "DB_1", move: { id: move.id, state: "completed" } });
    // Everything the source had was moved (the delete step copies what the target lacks), and the late write kept.
    const after = await keysIn("DB_1", id);
    for (const [table, keys] of Object.entries(snapshot))
      expect(after[table], table).toEqual(expect.arrayContaining(keys));
    expect(await inDb("DB_1").select().from(attempts).where(eq(attempts.id, late.id))).toHaveLength(1);
    expect(await keysIn("DB", id)).toEqual({});
    expect((await callJson("/api/auth/me", { token: tenant.admin.token })).res.status).toBe(200);
  }, 60_000);
});
