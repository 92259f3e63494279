import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { parse } from "csv-parse/sync";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { attempts, type ExportType } from "../../src/db/schema";
import { GAVE_UP } from "../../src/domains/exports/consumer";
import { database } from "../../src/platform/db";
import { runSweeps } from "../../src/scheduled";
import { call, callJson } from "../helpers/api";
import { createTenant, type Tenant } from "../helpers/tenants";
import {
  bucketWith,
  deliver,
  downloadRecords,
  drain,
  EXPORTS,
  getJob,
  HeldQueue,
  heldBindings,
  jobRow,
  outboxFor,
  requestExport,
  updateJob,
  withOverrides,
} from "./support";

// Generation across queue messages with real R2 multipart uploads. R2 (and its local simulator)
// wants every part but the last to be at least 5 MiB, so these exports are about 19 MB: 3 full parts
// and a last one. The test settings (vitest.config.ts) give every invocation a 1 ms time budget, so
// each message writes one part and hands over to the next; keyset pages of 997 rows here.

const ROWS = 100_000;
const PART = 5 * 1024 * 1024;
const PAGE_SIZE = "997";
let tenant: Tenant;
let expected: Record<string, string>[];

beforeAll(async () => {
  tenant = await createTenant();
  // Rows straight into D1: three attempts a second (ties broken by id, in an order unlike insertion),
  // and a lesson id with a quote, a comma, a line break and multi-byte characters, so that quoted,
  // multi-line rows straddle part boundaries. The one raw statement of these fixtures, on purpose:
  // SQLite makes the 100,000 rows itself in one statement (under a second), where drizzle binds six
  // rows a statement (about ten seconds, measured).
  const start = Math.floor(Date.now() / 1000) - 86_400;
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
     INSERT INTO attempts (id, user_id, institution_id, training_item_id, lesson_id, course_id, skill, cefr_level, score, correct,
                           duration_seconds, occurred_at, local_day, xp_awarded, recorded_at)
     SELECT printf('%08x-0000-4000-8000-%012d', (i * 7919) % 1000003, i), ?2, ?3, 'itm_bulk_' || (i % 50),
            'les "bulk", é€' || char(10) || (i % 10), 'crs_bulk', 'reading', 'B1', (i % 100) / 100.0, i % 2, i % 300,
            strftime('%Y-%m-%dT%H:%M:%SZ', ?4 + i / 3, 'unixepoch'), '2026-01-01', i % 20, strftime('%Y-%m-%dT%H:%M:%SZ', ?4, 'unixepoch')
     FROM n`,
  )
    .bind(ROWS, tenant.learner.id, tenant.institution.id, start)
    .run();
  const results = await database(env.DB)
    .select({
      id: attempts.id,
      occurred_at: attempts.occurredAt,
      user_id: attempts.userId,
      course_id: attempts.courseId,
      lesson_id: attempts.lessonId,
      training_item_id: attempts.trainingItemId,
      skill: attempts.skill,
      cefr_level: attempts.cefrLevel,
      // SQLite's rounding, which the export writes.
      score: sql<number>`round(${attempts.score}, 3)`,
      correct: attempts.correct,
      duration_seconds: attempts.durationSeconds,
      xp_awarded: attempts.xpAwarded,
      recorded_at: attempts.recordedAt,
    })
    .from(attempts)
    .where(eq(attempts.institutionId, tenant.institution.id))
    .orderBy(attempts.occurredAt, attempts.id);
  expected = results.map((r) => ({
    attempt_id: String(r.id),
    occurred_at: String(r.occurred_at),
    user_id: String(r.user_id),
    course_id: String(r.course_id),
    lesson_id: String(r.lesson_id),
    training_item_id: String(r.training_item_id),
    skill: String(r.skill),
    cefr_level: String(r.cefr_level),
    score: String(r.score),
    correct: r.correct ? "true" : "false",
    duration_seconds: String(r.duration_seconds),
    xp_awarded: String(r.xp_awarded),
    recorded_at: String(r.recorded_at),
  }));
  expect(expected).toHaveLength(ROWS);
}, 120_000);

/** An R2 binding whose multipart uploads call `afterPart(n)` once part n is stored. */
function bucketAfterEachPart(afterPart: (n: number) => void): R2Bucket {
  const real = env.EXPORTS_BUCKET;
  const wrap = (upload: R2MultipartUpload) =>
    withOverrides(upload, {
      async uploadPart(n: number, value: Parameters<R2MultipartUpload["uploadPart"]>[1]) {
        const part = await upload.uploadPart(n, value);
        afterPart(n);
        return part;
      },
    });
  return bucketWith({
    createMultipartUpload: async (key: string, options?: R2MultipartOptions) =>
      wrap(await real.createMultipartUpload(key, options)),
    resumeMultipartUpload: (key: string, uploadId: string) => wrap(real.resumeMultipartUpload(key, uploadId)),
  });
}

/** An R2 binding whose uploads throw right after storing part `failOn`, as if the worker died there. */
function crashingBucket(failOn: number): R2Bucket {
  return bucketAfterEachPart((n) => {
    if (n === failOn) throw new Error(`simulated crash after uploading part ${n}`);
  });
}

/** An R2 binding that notes the number of every part uploaded through it. */
function recordingBucket(uploaded: number[]): R2Bucket {
  return bucketAfterEachPart((n) => uploaded.push(n));
}

/** The D1 binding, with `effect` run after every statement whose SQL matches (once it has run). */
function d1After(match: RegExp, effect: () => Promise<void>): D1Database {
  const real = env.DB;
  const wrapped: D1Database = withOverrides(real, {
    // The service context runs every query in a session: this binding is its own.
    withSession: () => wrapped as unknown as D1DatabaseSession,
    prepare(query: string) {
      const statement = real.prepare(query);
      if (!match.test(query)) return statement;
      return withOverrides(statement, {
        bind(...values: unknown[]) {
          const bound = statement.bind(...values);
          return withOverrides(bound, {
            async run() {
              const result = await bound.run();
              await effect();
              return result;
            },
          } as Partial<D1PreparedStatement>);
        },
      });
    },
  });
  return wrapped;
}

/** The minute cron's sweeps, as scheduled at `scheduledTime`. */
async function sweep(bindings: Cloudflare.Env, scheduledTime: number) {
  const ctx = createExecutionContext();
  await runSweeps(bindings, ctx, scheduledTime);
  await waitOnExecutionContext(ctx);
}

async function startExport(queue: HeldQueue) {
  const { res, body } = await requestExport(
    tenant.admin.token,
    { type: "activity" },
    { bindings: heldBindings(queue) },
  );
  expect(res.status).toBe(202);
  return body.id as string;
}

async function expectExactFile(id: string) {
  const { records, res } = await downloadRecords(tenant.admin.token, id);
  // Compared in bulk first (a readable failure), then every row in order.
  expect(records.length).toBe(ROWS);
  expect(records.map((r) => r.attempt_id)).toEqual(expected.map((r) => r.attempt_id));
  expect(records).toEqual(expected);
  const job = await getJob(tenant.admin.token, id);
  expect(job).toMatchObject({ status: "completed", row_count: ROWS, progress: ROWS });
  expect(Number(res.headers.get("Content-Length"))).toBe(job.byte_size);
  expect(job.byte_size).toBeGreaterThan(3 * PART);
  expect(job.byte_size).toBeLessThan(4 * PART);
  const row = await jobRow(id);
  expect(row!.parts.map((p: any) => p.partNumber)).toEqual([1, 2, 3, 4]);
  expect(row!.partSize).toBe(PART);
  return job;
}

describe("a multi-part export", () => {
  it("goes queued → processing → completed across several queue messages, one 5 MiB part each, and yields exactly the rows in order", async () => {
    const queue = new HeldQueue();
    const bindings = heldBindings(queue, { EXPORT_PAGE_SIZE: PAGE_SIZE });
    const id = await startExport(queue);
    const queued = await getJob(tenant.admin.token, id);
    expect(queued.status).toBe("queued");

    const seen: {
      status: string;
      progress: number;
      parts: number;
      generation: number;
      startedAt: string;
      completedAt: string | null;
    }[] = [];
    while (queue.messages.length > 0) {
      const message = queue.take();
      expect(message).toEqual({ job_id: id, generation: seen.length });
      const outcome = await deliver(bindings, message);
      expect(outcome.acked).toBe(true);
      const job = await getJob(tenant.admin.token, id);
      const row = await jobRow(id);
      seen.push({
        status: job.status,
        progress: job.progress,
        parts: row!.parts.length,
        generation: row!.generation,
        startedAt: job.started_at,
        completedAt: job.completed_at,
      });
      if (job.status === "processing") {
        // Between messages: nobody holds the job, and the file cannot be downloaded yet.
        expect(row!.leaseId).toBeNull();
        expect((await call(`${EXPORTS}/${id}/download`, { token: tenant.admin.token })).status).toBe(409);
      }
    }
    expect(seen.map((s) => s.status)).toEqual(["processing", "processing", "processing", "completed"]);
    expect(seen.map((s) => s.parts)).toEqual([1, 2, 3, 4]);
    expect(seen.map((s) => s.generation)).toEqual([1, 2, 3, 3]);
    // started_at is the first message's claim, kept by every continuation; completed_at only at the end.
    expect(queued.started_at).toBeNull();
    expect(seen[0]!.startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(seen[0]!.startedAt >= queued.created_at).toBe(true);
    expect(new Set(seen.map((s) => s.startedAt))).toEqual(new Set([seen[0]!.startedAt]));
    expect(seen.map((s) => s.completedAt === null)).toEqual([true, true, true, false]);
    expect(seen[3]!.completedAt! >= seen[0]!.startedAt).toBe(true);
    // Progress counts the rows written so far: those in uploaded parts, and the one whose rest the
    // checkpoint carries into the next part. So it grows by about a part's worth.
    const progress = seen.map((s) => s.progress);
    expect(progress[0]).toBeGreaterThan(0);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
    expect(progress[3]).toBe(ROWS);

    const job = await expectExactFile(id);
    expect((await env.EXPORTS_BUCKET.head(`exports/${tenant.institution.id}/${id}.csv`))!.size).toBe(
      job.byte_size,
    );
    expect((await outboxFor(id)).map((e) => e.type)).toEqual(["export.completed"]);
  });

  it("a continuation that fails after uploading its part is retried from the last checkpoint: no row doubled or lost", async () => {
    const queue = new HeldQueue();
    const bindings = heldBindings(queue, { EXPORT_PAGE_SIZE: PAGE_SIZE });
    const id = await startExport(queue);
    expect((await deliver(bindings, queue.take())).acked).toBe(true);
    const continuation = queue.take();

    const failed = await deliver({ ...bindings, EXPORTS_BUCKET: crashingBucket(2) }, continuation);
    expect(failed.acked).toBe(false);
    expect(failed.retried).toEqual({ delaySeconds: 5 });
    const after = await jobRow(id);
    // Part 2 reached R2 but its checkpoint did not: the job still stands after part 1, free for the retry.
    expect(after!.parts).toHaveLength(1);
    expect(after).toMatchObject({ status: "processing", leaseId: null, generation: 1 });
    expect(queue.messages).toHaveLength(0);

    // The queue's retry of the same message.
    expect((await deliver(bindings, continuation, { attempts: 2 })).acked).toBe(true);
    await drain(bindings, queue);
    await expectExactFile(id);
  });

  it("a continuation message lost after the first part: the minute sweep resumes the job about two minutes later, the file is exact, and the late original changes nothing", async () => {
    const queue = new HeldQueue();
    const bindings = heldBindings(queue, { EXPORT_PAGE_SIZE: PAGE_SIZE });
    const id = await startExport(queue);
    expect((await deliver(bindings, queue.take())).acked).toBe(true);
    const lost = queue.take(); // handed over, and never delivered
    expect(lost).toEqual({ job_id: id, generation: 1 });

    // A minute on, the message may still be on its way: nothing is sent.
    await sweep(bindings, Date.now() + 30_000);
    expect(queue.messages).toEqual([]);
    // Past the lease: one new message of the job's generation, however many sweeps run at that time.
    const later = Date.now() + 2 * 60_000;
    await Promise.all([sweep(bindings, later), sweep(bindings, later)]);
    expect(queue.messages).toEqual([{ job_id: id, generation: 1 }]);
    await drain(bindings, queue);
    await expectExactFile(id);

    // The lost message turns up after all: acknowledged, nothing written or sent.
    const before = await jobRow(id);
    expect((await deliver(bindings, lost)).acked).toBe(true);
    expect(queue.messages).toEqual([]);
    expect(await jobRow(id)).toEqual(before);
    expect((await outboxFor(id)).map((e) => e.type)).toEqual(["export.completed"]);
  }, 120_000);

  it("a crashed invocation that kept its lease is taken over by the retry once the lease has run out", async () => {
    const queue = new HeldQueue();
    const bindings = heldBindings(queue, { EXPORT_PAGE_SIZE: PAGE_SIZE });
    const id = await startExport(queue);
    await deliver(bindings, queue.take());
    const continuation = queue.take();
    // The worker running the continuation died after claiming the job and uploading a part 2 of its own.
    const row = await jobRow(id);
    await env.EXPORTS_BUCKET.resumeMultipartUpload(row!.r2Key, row!.uploadId!).uploadPart(
      2,
      new Uint8Array(PART).fill(120),
    );
    await updateJob(id, { leaseId: "lse_dead", leaseUntil: Date.now() + 60_000 });

    const early = await deliver(bindings, continuation, { attempts: 2 });
    expect(early.acked).toBe(false);
    expect(early.retried!.delaySeconds).toBeGreaterThanOrEqual(59);
    expect(early.retried!.delaySeconds).toBeLessThanOrEqual(61);

    await updateJob(id, { leaseUntil: Date.now() - 1 });
    expect((await deliver(bindings, continuation, { attempts: 3 })).acked).toBe(true);
    await drain(bindings, queue);
    await expectExactFile(id);
  });

  it("an invocation that stalled past its lease after a checkpoint stops before uploading its next part", async () => {
    const queue = new HeldQueue();
    // A long time budget: left alone, this invocation would write every part.
    const bindings = heldBindings(queue, { EXPORT_PAGE_SIZE: PAGE_SIZE, EXPORT_TIME_BUDGET_MS: "600000" });
    const id = await startExport(queue);
    const message = queue.take();
    const uploaded: number[] = [];
    let takenOver = false;
    // Right after part 1's checkpoint, the invocation stalls past its lease and a redelivery of its
    // message takes the job over.
    const stalling = d1After(/json_array_length/, async () => {
      if (takenOver) return;
      takenOver = true;
      await updateJob(id, { leaseId: "lse_successor", leaseUntil: Date.now() + 60_000 });
    });

    const stale = await deliver(
      { ...bindings, DB: stalling, EXPORTS_BUCKET: recordingBucket(uploaded) },
      message,
    );
    expect(stale.acked).toBe(true);
    expect(uploaded).toEqual([1]);
    const row = await jobRow(id);
    expect(row).toMatchObject({ status: "processing", leaseId: "lse_successor", generation: 0 });
    expect(row!.parts).toHaveLength(1);

    // The successor (here: the message delivered again once its lease is over) writes the rest.
    await updateJob(id, { leaseId: null, leaseUntil: null });
    expect(
      (await deliver(heldBindings(queue, { EXPORT_PAGE_SIZE: PAGE_SIZE }), message, { attempts: 2 })).acked,
    ).toBe(true);
    await drain(heldBindings(queue, { EXPORT_PAGE_SIZE: PAGE_SIZE }), queue);
    await expectExactFile(id);
  });

  it("two deliveries of one message at once: one writes, its twin stands back, and the file is exact", async () => {
    const queue = new HeldQueue();
    const bindings = heldBindings(queue, { EXPORT_PAGE_SIZE: PAGE_SIZE });
    const id = await startExport(queue);
    const first = queue.take();
    const outcomes = await Promise.all([deliver(bindings, first), deliver(bindings, first)]);
    // One claims the job; its twin finds it leased and comes back later (or, had it come after the
    // hand-over, would have been dropped as a message of a past generation).
    const twins = outcomes.filter((o) => o.retried);
    expect(outcomes.filter((o) => o.acked).length + twins.length).toBe(2);
    expect(twins.length).toBeLessThanOrEqual(1);
    for (const twin of twins) {
      expect(twin.retried!.delaySeconds).toBeGreaterThan(0);
      expect((await deliver(bindings, first, { attempts: 2 })).acked).toBe(true);
    }
    // Exactly one continuation: only one invocation wrote part 1 and handed over.
    expect(queue.messages).toEqual([{ job_id: id, generation: 1 }]);
    await drain(bindings, queue);
    await expectExactFile(id);
    // A late duplicate of any message changes nothing.
    expect((await deliver(bindings, { job_id: id, generation: 1 })).acked).toBe(true);
    expect((await outboxFor(id)).map((e) => e.type)).toEqual(["export.completed"]);
  });
});

describe("permanent failure", () => {
  it("a message the queue gave up on fails the job with a reason, aborts its multipart upload and emits export.failed", async () => {
    const queue = new HeldQueue();
    const bindings = heldBindings(queue, { EXPORT_PAGE_SIZE: PAGE_SIZE });
    const id = await startExport(queue);
    await deliver(bindings, queue.take());
    const continuation = queue.take();
    const before = await jobRow(id);
    expect(before!.uploadId).toBeTruthy();

    // A dead letter of an older generation is not the job's current message: ignored.
    expect(
      (await deliver(bindings, { job_id: id, generation: 0 }, { queue: "lingua-exports-dlq" })).acked,
    ).toBe(true);
    expect((await jobRow(id))!.status).toBe("processing");

    expect((await deliver(bindings, continuation, { queue: "lingua-exports-dlq" })).acked).toBe(true);
    const job = await getJob(tenant.admin.token, id);
    expect(job).toMatchObject({ status: "failed", error: GAVE_UP, download_url: null });
    const upload = env.EXPORTS_BUCKET.resumeMultipartUpload(before!.r2Key, before!.uploadId!);
    await expect(upload.uploadPart(2, new Uint8Array(10))).rejects.toThrow();
    expect(await outboxFor(id)).toEqual([
      {
        type: "export.failed",
        institution_id: tenant.institution.id,
        user_id: tenant.admin.id,
        payload: { export_id: id, type: "activity", error: GAVE_UP },
      },
    ]);
    const download = await callJson(`${EXPORTS}/${id}/download`, { token: tenant.admin.token });
    expect(download.res.status).toBe(409);
    expect(download.body).toMatchObject({ code: "export_failed", detail: expect.stringContaining(GAVE_UP) });

    // The original message arriving after all: nothing changes.
    expect((await deliver(bindings, continuation)).acked).toBe(true);
    expect((await jobRow(id))!.status).toBe("failed");
    expect(await outboxFor(id)).toHaveLength(1);
  });

  it("a failure that retrying cannot mend fails the job at once, without retries", async () => {
    const queue = new HeldQueue();
    const bindings = heldBindings(queue);
    const id = await startExport(queue);
    // A type the schema does not know, as a row written by a later version could hold.
    await updateJob(id, { type: "grades" as ExportType });
    expect((await deliver(bindings, queue.take())).acked).toBe(true);
    expect(await jobRow(id)).toMatchObject({ status: "failed", error: "Unknown export type grades." });
  });
});

describe("a small export through the real queue", () => {
  it("is a single plain object, no multipart upload", async () => {
    const small = await createTenant();
    const { res, body } = await requestExport(small.admin.token, { type: "activity" });
    expect(res.status).toBe(202);
    for (let i = 0; i < 400 && (await jobRow(body.id))!.status !== "completed"; i++)
      await new Promise((r) => setTimeout(r, 25));
    const row = await jobRow(body.id);
    expect(row).toMatchObject({ status: "completed", uploadId: null, parts: [], attempts: 1 });
    const text = await (await call(`${EXPORTS}/${body.id}/download`, { token: small.admin.token })).text();
    expect(parse(text)).toEqual([
      [
        "attempt_id",
        "occurred_at",
        "user_id",
        "course_id",
        "lesson_id",
        "training_item_id",
        "skill",
        "cefr_level",
        "score",
        "correct",
        "duration_seconds",
        "xp_awarded",
        "recorded_at",
      ],
    ]);
  });
});
