import { env } from "cloudflare:test";
import { asc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { attemptArchiveFiles, attempts } from "../../src/db/schema";
import { archiveOldAttempts, eligibility } from "../../src/domains/progress/cold-tier/archive";
import { gunzip, objectKey, parseNdjson } from "../../src/domains/progress/cold-tier/format";
import {
  dayAttempts,
  filesFrom,
  institutionsWithColdAttempts,
} from "../../src/domains/progress/cold-tier/sql";
import { FACT_SOURCES } from "../../src/domains/xapi/backfill/sources";
import { config } from "../../src/platform/config";
import { database } from "../../src/platform/db";
import { backgroundContext, type ServiceContext } from "../../src/platform/service/context";
import { runSweeps } from "../../src/scheduled";
import { bucketWith, exportRecords } from "../exports/support";
import { createTenant, type Tenant } from "../helpers/tenants";

// The cold tier (src/domains/progress/cold-tier, docs/design/cold-tier.md): the sweep moves attempts
// past ATTEMPTS_HOT_DAYS (90 here, wrangler.toml's default) from D1 to gzip NDJSON files in R2, and
// the readers of old attempts (the activity export, the xAPI back-fill) answer as before the move.

const DAY = 86_400_000;
const db = () => database(env.DB);
/** Scores whose rounding to thousandths is delicate (ties, thirds, the ends). */
const SCORES = [0.1235, 0.0005, 1, 0, 0.9995, 1 / 3, 2 / 3, 0.8125, 0.45678901234];

type AttemptInsert = typeof attempts.$inferInsert;
let sequence = 0;

function iso(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** Attempts of the tenant's learner (and admin), `count` a day at each of `daysAgo`, recorded when they happened. */
async function seed(
  t: Tenant,
  now: number,
  daysAgo: number[],
  count: number,
  recordedAt?: (occurred: number) => number,
): Promise<AttemptInsert[]> {
  const rows: AttemptInsert[] = [];
  for (const d of daysAgo) {
    const dayStart = Math.floor((now - d * DAY) / DAY) * DAY;
    // 01:00 of the day, or today before 01:01 a minute ago (never a future attempt), still that day.
    const base = Math.max(dayStart, Math.min(dayStart + 3_600_000, now - 60_000));
    for (let i = 0; i < count; i++) {
      sequence += 1;
      // Several attempts share a second, so that ids break ties.
      const occurred = base + Math.floor(i / 3) * 1_000;
      rows.push({
        id: crypto.randomUUID(),
        userId: i % 4 === 0 ? t.admin.id : t.learner.id,
        institutionId: t.institution.id,
        trainingItemId: `itm_cold_${i % 5}`,
        lessonId: `les_cold_${i % 2}`,
        courseId: i % 3 === 0 ? "crs_cold_a" : "crs_cold_b",
        skill: "reading",
        cefrLevel: "B1",
        score: SCORES[sequence % SCORES.length] ?? 0.5,
        correct: i % 2 === 0,
        durationSeconds: 10 + i,
        occurredAt: iso(occurred),
        localDay: iso(occurred).slice(0, 10),
        xpAwarded: i % 7,
        recordedAt: iso(recordedAt ? recordedAt(occurred) : occurred + 1000),
      });
    }
  }
  for (let i = 0; i < rows.length; i += 6)
    await db()
      .insert(attempts)
      .values(rows.slice(i, i + 6));
  return rows;
}

function contextAt(now: number, bindings: Partial<Cloudflare.Env> = {}): ServiceContext {
  const execution = { waitUntil: (p: Promise<unknown>) => void p.catch(() => undefined) };
  return backgroundContext({ ...env, ...bindings }, execution, "cron", () => now);
}

async function hotIds(t: Tenant): Promise<string[]> {
  const rows = await db()
    .select({ id: attempts.id })
    .from(attempts)
    .where(eq(attempts.institutionId, t.institution.id))
    .orderBy(asc(attempts.occurredAt), asc(attempts.id));
  return rows.map((r) => r.id);
}

async function manifest(t: Tenant) {
  return db()
    .select()
    .from(attemptArchiveFiles)
    .where(eq(attemptArchiveFiles.institutionId, t.institution.id))
    .orderBy(asc(attemptArchiveFiles.day), asc(attemptArchiveFiles.part));
}

async function fileIds(key: string): Promise<string[]> {
  const object = await env.EXPORTS_BUCKET.get(key);
  if (!object) throw new Error(`no ${key}`);
  return parseNdjson(await gunzip(object.body)).map((a) => a.id);
}

/** Runs the sweep until it has nothing left to move. */
async function archiveAll(ctx: ServiceContext) {
  for (let i = 0; i < 50; i++) if ((await archiveOldAttempts(ctx)).length === 0) return;
  throw new Error("the sweep did not settle");
}

describe("the cold tier's sweep", () => {
  it("moves attempts of days past the window to verified files, keeps recent ones, and answers as before", async () => {
    const t = await createTenant();
    const now = Date.now();
    const old = await seed(t, now, [120, 100, 95], 9);
    const recent = await seed(t, now, [89, 10, 0], 4);
    const exportBefore = await exportRecords(t.admin.token, { type: "activity" });
    const filtered = {
      type: "activity",
      from: iso(now - 100 * DAY),
      to: iso(now - 5 * DAY),
      user_ids: [t.learner.id],
    };
    const filteredBefore = await exportRecords(t.admin.token, filtered);

    await runSweeps(env, { waitUntil: () => undefined }, now);
    await archiveAll(contextAt(now));

    const keep = new Set(recent.map((r) => r.id));
    expect(new Set(await hotIds(t))).toEqual(keep);
    const files = await manifest(t);
    expect(files.map((f) => f.day)).toEqual([...new Set(old.map((r) => r.occurredAt.slice(0, 10)))].sort());
    for (const file of files) {
      expect(file.objectKey).toBe(objectKey(t.institution.id, file.day, 1));
      expect(file.objectKey).toMatch(/^attempts\/v1\/ins_test_[^/]+\/\d{4}\/\d{2}\/\d{2}\.ndjson\.gz$/);
      expect(file.rows).toBe(9);
      const ids = await fileIds(file.objectKey);
      expect(ids).toHaveLength(9);
      expect(ids[0]).toBe(file.firstId);
      expect(ids.at(-1)).toBe(file.lastId);
      const object = await env.EXPORTS_BUCKET.head(file.objectKey);
      expect(object?.size).toBe(file.bytes);
      expect(object?.customMetadata).toMatchObject({ schema: "attempts/v1", rows: "9", sha256: file.sha256 });
    }

    const exportAfter = await exportRecords(t.admin.token, { type: "activity" });
    expect(exportAfter.text).toBe(exportBefore.text);
    expect(exportAfter.records).toHaveLength(old.length + recent.length);
    const filteredAfter = await exportRecords(t.admin.token, filtered);
    expect(filteredAfter.text).toBe(filteredBefore.text);
    expect(filteredAfter.records.length).toBeGreaterThan(0);
  }, 60_000);

  it("deletes nothing when the file does not read back as written, and moves it on the next run", async () => {
    const t = await createTenant();
    const now = Date.now();
    const old = await seed(t, now, [200], 6);
    const real = env.EXPORTS_BUCKET;
    const corrupting = bucketWith({
      async get(key: string) {
        const object = await real.get(key);
        if (!object) return object;
        // The stored object loses its last line (a torn write).
        const text = new TextDecoder().decode(await gunzip(object.body));
        const torn = text.slice(0, text.lastIndexOf("\n", text.length - 2) + 1);
        const body = new Blob([torn]).stream().pipeThrough(new CompressionStream("gzip"));
        return { ...object, body } as unknown as R2ObjectBody;
      },
    });
    const failingPut = bucketWith({
      put: async () => {
        throw new Error("R2 is unavailable");
      },
    });
    for (const [i, bucket] of [corrupting, failingPut].entries()) {
      // Each failed step holds the day for a while (its claim); the next try comes after it.
      await archiveOldAttempts(contextAt(now + i * 10 * 60_000, { EXPORTS_BUCKET: bucket }));
      expect(await hotIds(t)).toHaveLength(old.length);
      expect(await manifest(t)).toEqual([]);
    }
    // The failed run's claim on the day runs out; then the day moves.
    await archiveAll(contextAt(now + 20 * 60_000));
    expect(await hotIds(t)).toEqual([]);
    expect((await manifest(t)).map((f) => f.rows)).toEqual([6]);
  });

  it("is idempotent: a rerun after a crash between writing and deleting rewrites the same file and doubles nothing", async () => {
    const t = await createTenant();
    const now = Date.now();
    const old = await seed(t, now, [150], 5);
    await archiveAll(contextAt(now));
    const [file] = await manifest(t);
    if (!file) throw new Error("no file");
    const bytesBefore = new Uint8Array(await (await env.EXPORTS_BUCKET.get(file.objectKey))!.arrayBuffer());
    // As if the batch that deletes had never run: the rows are back in D1 next to their file.
    await db().insert(attempts).values(old.slice(0, 5));
    await archiveAll(contextAt(now + 10 * 60_000));
    expect(await hotIds(t)).toEqual([]);
    const files = await manifest(t);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ rows: 5, sha256: file.sha256, objectKey: file.objectKey });
    const bytesAfter = new Uint8Array(await (await env.EXPORTS_BUCKET.get(file.objectKey))!.arrayBuffer());
    expect(bytesAfter).toEqual(bytesBefore);
    expect((await fileIds(file.objectKey)).sort()).toEqual(old.map((r) => r.id).sort());
    // A run with nothing to move changes nothing.
    expect(await archiveOldAttempts(contextAt(now + 20 * 60_000))).toEqual([]);
  });

  it("keeps a late attempt for an archived day in D1 for the window, then adds it to that day's file", async () => {
    const t = await createTenant();
    const now = Date.now();
    const early = await seed(t, now, [130], 4);
    await archiveAll(contextAt(now));
    const exportBefore = await exportRecords(t.admin.token, { type: "activity" });
    // Recorded now, for the archived day (recording accepts occurred_at in the past).
    const [late] = await seed(t, now, [130], 1, () => now);
    if (!late?.id) throw new Error("no late attempt");
    await archiveAll(contextAt(now));
    expect(await hotIds(t)).toEqual([late.id]);
    const exportWithLate = await exportRecords(t.admin.token, { type: "activity" });
    expect(exportWithLate.records.map((r) => r.attempt_id)).toContain(late.id);
    expect(exportWithLate.records).toHaveLength(exportBefore.records.length + 1);

    // A window later, the late attempt joins its day's file, in key order.
    const later = now + 91 * DAY;
    await archiveAll(contextAt(later));
    expect(await hotIds(t)).toEqual([]);
    const files = await manifest(t);
    expect(files.map((f) => f.rows)).toEqual([5]);
    const ids = await fileIds(files[0]!.objectKey);
    expect(new Set(ids)).toEqual(new Set([...early.map((r) => r.id), late.id]));
    const exportAfter = await exportRecords(t.admin.token, { type: "activity" });
    expect(exportAfter.text).toBe(exportWithLate.text);
  }, 60_000);

  it("splits a large day into parts in key order, and a late attempt joins the part whose range holds it", async () => {
    const t = await createTenant();
    const now = Date.now();
    const rows = await seed(t, now, [140], 10);
    const ctx = contextAt(now);
    for (let i = 0; i < 10; i++) if ((await archiveOldAttempts(ctx, 4)).length === 0) break;
    const files = await manifest(t);
    expect(files.map((f) => [f.part, f.rows])).toEqual([
      [1, 4],
      [2, 4],
      [3, 2],
    ]);
    const day = files[0]!.day;
    expect(files.map((f) => f.objectKey)).toEqual(
      [1, 2, 3].map((part) => objectKey(t.institution.id, day, part)),
    );
    expect(files[1]!.objectKey).toMatch(/\/\d{2}\.part-2\.ndjson\.gz$/);
    const sorted = [...rows].sort((a, b) =>
      a.occurredAt === b.occurredAt ? (a.id < b.id ? -1 : 1) : a.occurredAt < b.occurredAt ? -1 : 1,
    );
    const inFiles = (await Promise.all(files.map((f) => fileIds(f.objectKey)))).flat();
    expect(inFiles).toEqual(sorted.map((r) => r.id));
    const exportBefore = await exportRecords(t.admin.token, { type: "activity" });

    // A late attempt (recorded long ago, as after an outage of the sweep) between part 2's rows.
    const middle = sorted[5]!;
    const late = { ...middle, id: `${middle.id.slice(0, -1)}${middle.id.endsWith("0") ? "1" : "0"}` };
    await db().insert(attempts).values(late);
    const withLate = await exportRecords(t.admin.token, { type: "activity" });
    for (let i = 0; i < 10; i++) if ((await archiveOldAttempts(ctx, 4)).length === 0) break;
    expect(await hotIds(t)).toEqual([]);
    expect((await manifest(t)).map((f) => [f.part, f.rows])).toEqual([
      [1, 4],
      [2, 5],
      [3, 2],
    ]);
    expect(await fileIds(files[1]!.objectKey)).toContain(late.id);
    const after = await exportRecords(t.admin.token, { type: "activity" });
    expect(after.text).toBe(withLate.text);
    expect(after.records).toHaveLength(exportBefore.records.length + 1);
  }, 60_000);

  it("gives the xAPI back-fill the same attempts before and after the move", async () => {
    const t = await createTenant();
    const now = Date.now();
    await seed(t, now, [110, 100], 8);
    await seed(t, now, [3], 5);
    const scope = {
      institutionId: t.institution.id,
      since: iso(now - 115 * DAY),
      until: iso(now),
      wants: new Set(["answered"] as const),
    };
    async function walk(ctx: ServiceContext) {
      const facts: unknown[] = [];
      let key: string[] | null = null;
      for (;;) {
        const page = await FACT_SOURCES.attempts.read(ctx, scope, key, 7);
        facts.push(...page.facts);
        key = page.last;
        if (page.rows < 7) return facts;
      }
    }
    const before = await walk(contextAt(now));
    expect(before).toHaveLength(21);
    await archiveAll(contextAt(now));
    expect(await hotIds(t)).toHaveLength(5);
    const after = await walk(contextAt(now));
    expect(after).toEqual(before);
  });
});

describe("a short window (ATTEMPTS_HOT_DAYS=7, the fleet's setting in docs/design/capacity.md)", () => {
  const week = { ATTEMPTS_HOT_DAYS: "7" } as unknown as Partial<Cloudflare.Env>;

  it("moves every day older than a week through the cron, and the export and the back-fill answer as before", async () => {
    const t = await createTenant();
    const now = Date.now();
    const moved = await seed(t, now, [40, 9, 8], 6);
    const kept = await seed(t, now, [6, 1, 0], 3);
    // Recorded only yesterday for a day long past: stays a window after its recording.
    const late = await seed(t, now, [20], 2, () => now - DAY);
    const filtered = { type: "activity", from: iso(now - 30 * DAY), user_ids: [t.learner.id] };
    const exportBefore = await exportRecords(t.admin.token, { type: "activity" });
    const filteredBefore = await exportRecords(t.admin.token, filtered);
    const scope = {
      institutionId: t.institution.id,
      since: iso(now - 45 * DAY),
      until: iso(now),
      wants: new Set(["answered"] as const),
    };
    async function walk(ctx: ServiceContext) {
      const facts: unknown[] = [];
      let key: string[] | null = null;
      for (;;) {
        const page = await FACT_SOURCES.attempts.read(ctx, scope, key, 5);
        facts.push(...page.facts);
        key = page.last;
        if (page.rows < 5) return facts;
      }
    }
    const backfillBefore = await walk(contextAt(now, week));

    // The cron's own path, with the week's window; a few runs until nothing is left to move.
    for (let i = 0; i < 10; i++)
      await runSweeps({ ...env, ...week } as Cloudflare.Env, { waitUntil: () => undefined }, now);

    expect(new Set(await hotIds(t))).toEqual(new Set([...kept, ...late].map((r) => r.id)));
    expect((await manifest(t)).map((f) => [f.day, f.rows])).toEqual(
      [40, 9, 8].map((d) => [iso(now - d * DAY).slice(0, 10), 6]),
    );
    expect(moved).toHaveLength(18);
    const exportAfter = await exportRecords(t.admin.token, { type: "activity" });
    expect(exportAfter.text).toBe(exportBefore.text);
    expect(exportAfter.records).toHaveLength(moved.length + kept.length + late.length);
    expect((await exportRecords(t.admin.token, filtered)).text).toBe(filteredBefore.text);
    expect(await walk(contextAt(now, week))).toEqual(backfillBefore);

    // A week after its recording, the late attempt joins its day; the answers stay the same.
    await archiveAll(contextAt(now + 7 * DAY, week));
    const today = iso(Math.floor(now / DAY) * DAY);
    expect(new Set(await hotIds(t))).toEqual(
      new Set(kept.filter((r) => r.occurredAt >= today).map((r) => r.id)),
    );
    expect((await exportRecords(t.admin.token, { type: "activity" })).text).toBe(exportBefore.text);
  }, 90_000);
});

describe("the cold tier's statements", () => {
  async function plan(query: { toSQL(): { sql: string; params: unknown[] } }): Promise<string> {
    const { sql, params } = query.toSQL();
    const result = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...params)
      .all<{ detail: string }>();
    return result.results.map((r) => r.detail).join("\n");
  }
  const eligible = { beforeDay: "2026-08-01", recordedBefore: "2026-08-01T00:00:00Z" };

  it("finds each institution's first eligible attempt with a seek on attempts_institution_time_idx", async () => {
    const details = await plan(institutionsWithColdAttempts(db(), eligible, 12));
    expect(details).toContain("attempts_institution_time_idx");
    expect(details).not.toMatch(/SCAN a\b/);
  });

  it("reads a part's range of D1 rows and the manifest on their keys, without sorting", async () => {
    const day = await plan(
      dayAttempts(
        db(),
        {
          institutionId: "ins_x",
          day: "2026-05-01",
          after: { occurredAt: "2026-05-01T10:00:00Z", id: "a" },
          upTo: null,
        },
        eligible,
        100,
      ),
    );
    expect(day).toContain("attempts_institution_time_idx");
    expect(day).not.toMatch(/TEMP B-TREE/);
    const files = await plan(
      filesFrom(db(), { institutionId: "ins_x", fromDay: "2026-05-01", toDay: null, after: null }, 20),
    );
    expect(files).toContain("attempt_archive_files");
    expect(files).not.toMatch(/TEMP B-TREE/);
  });
});

describe("the window", () => {
  const withVars = (vars: Record<string, string>) => ({ ...env, ...vars }) as Cloudflare.Env;

  it("defaults to 90 days and accepts a single day", () => {
    expect(config(env).coldTier.hotDays).toBe(90);
    expect(config(withVars({ ATTEMPTS_HOT_DAYS: "1" })).coldTier.hotDays).toBe(1);
  });

  it.each(["0", "-3", "1.5", "ninety"])("refuses ATTEMPTS_HOT_DAYS=%s, naming the variable", (value) => {
    expect(() => config(withVars({ ATTEMPTS_HOT_DAYS: value }))).toThrow("ATTEMPTS_HOT_DAYS");
  });

  it("moves days that ended a whole window ago, recorded as long ago", () => {
    const now = Date.parse("2026-11-27T12:00:00Z");
    const ctx = contextAt(now, { ATTEMPTS_HOT_DAYS: "1" } as unknown as Partial<Cloudflare.Env>);
    expect(eligibility(ctx)).toEqual({ beforeDay: "2026-11-26", recordedBefore: "2026-11-26T12:00:00Z" });
  });
});
