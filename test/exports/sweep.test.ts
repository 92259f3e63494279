import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TOO_SLOW } from "../../src/domains/exports/sweep";
import worker from "../../src/index";
import { nowIso } from "../../src/platform/ids";
import { callJson } from "../helpers/api";
import { createTenant } from "../helpers/tenants";
import {
  bucketWith,
  d1WithFailingBatches,
  deliver,
  EXPORTS,
  exportAndWait,
  HeldQueue,
  heldBindings,
  jobRow,
  outboxFor,
  requestExport,
  updateJob,
} from "./support";

/** The minute cron, as the runtime runs it (every sweep of src/scheduled.ts). */
async function cron(bindings: Cloudflare.Env = env, scheduledTime = Date.now()) {
  const ctx = createExecutionContext();
  await worker.scheduled!(createScheduledController({ scheduledTime, cron: "* * * * *" }), bindings, ctx);
  await waitOnExecutionContext(ctx);
}

describe("the exports sweep", () => {
  it("deletes the file of an export past its retention and marks it expired; the download is then 410", async () => {
    const { admin } = await createTenant();
    const due = await exportAndWait(admin.token, { type: "activity" });
    const kept = await exportAndWait(admin.token, { type: "completions" });
    const row = await jobRow(due.id);
    expect(await env.EXPORTS_BUCKET.head(row!.r2Key)).not.toBeNull();
    await updateJob(due.id, { expiresAt: new Date(Date.now() - 1000).toISOString() });

    await cron();
    expect(await env.EXPORTS_BUCKET.head(row!.r2Key)).toBeNull();
    const { body } = await callJson(`${EXPORTS}/${due.id}`, { token: admin.token });
    expect(body).toMatchObject({ status: "expired", row_count: 0, download_url: null });
    const download = await callJson(`${EXPORTS}/${due.id}/download`, { token: admin.token });
    expect(download.res.status).toBe(410);
    expect(download.body.code).toBe("export_expired");
    // Another export, still within its 7 days, is untouched.
    expect((await jobRow(kept.id))!.status).toBe("completed");
    expect(await env.EXPORTS_BUCKET.head((await jobRow(kept.id))!.r2Key)).not.toBeNull();
  });

  it("sends a new message, once, for a job whose first message was lost, once its lease has run out; the job then completes", async () => {
    const { admin } = await createTenant();
    const lost = new HeldQueue();
    const { body: job } = await requestExport(
      admin.token,
      { type: "learner_progress" },
      { bindings: heldBindings(lost) },
    );
    lost.messages.length = 0; // the message never arrives
    const queue = new HeldQueue();
    // Within the grace of its message's due time, the job is not lost.
    await cron(heldBindings(queue), Date.now() + 30_000);
    expect(queue.messages).toEqual([]);

    const later = Date.now() + 2 * 60_000;
    await cron(heldBindings(queue), later);
    await cron(heldBindings(queue), later);
    expect(queue.messages).toEqual([{ job_id: job.id, generation: 0 }]);
    expect((await deliver(heldBindings(queue), queue.take())).acked).toBe(true);
    expect((await jobRow(job.id))!.status).toBe("completed");
  });

  it("leaves alone a job whose lease is live, or whose message is waiting out its retry delay", async () => {
    const { admin } = await createTenant();
    const held = new HeldQueue();
    const { body: fresh } = await requestExport(
      admin.token,
      { type: "activity" },
      { bindings: heldBindings(held) },
    );
    const { body: leased } = await requestExport(
      admin.token,
      { type: "activity" },
      { bindings: heldBindings(held) },
    );
    const { body: waiting } = await requestExport(
      admin.token,
      { type: "activity" },
      { bindings: heldBindings(held) },
    );
    const at = Date.now() + 2 * 60_000;
    await updateJob(leased.id, { status: "processing", leaseId: "lse_x", leaseUntil: at + 30_000 });
    // Retried by the queue in five minutes (plus the grace).
    await updateJob(waiting.id, { status: "processing", leaseId: null, leaseUntil: Date.now() + 360_000 });
    const queue = new HeldQueue();
    await cron(heldBindings(queue), at);
    // Only the job whose first message never came is sent again.
    expect(queue.messages).toEqual([{ job_id: fresh.id, generation: 0 }]);
    expect((await jobRow(leased.id))!.leaseId).toBe("lse_x");
  });

  it("gives up a job that has not finished within a day: failed, upload aborted, export.failed", async () => {
    const { admin, institution } = await createTenant();
    const held = new HeldQueue();
    const { body: job } = await requestExport(
      admin.token,
      { type: "activity" },
      { bindings: heldBindings(held) },
    );
    const row = await jobRow(job.id);
    const upload = await env.EXPORTS_BUCKET.createMultipartUpload(row!.r2Key);
    await updateJob(job.id, {
      status: "processing",
      uploadId: upload.uploadId,
      createdAt: nowIso(Date.now() - 25 * 3_600_000),
    });

    await cron(heldBindings(new HeldQueue()));
    expect(await jobRow(job.id)).toMatchObject({ status: "failed", error: TOO_SLOW, leaseId: null });
    await expect(
      env.EXPORTS_BUCKET.resumeMultipartUpload(row!.r2Key, upload.uploadId).uploadPart(1, new Uint8Array(8)),
    ).rejects.toThrow();
    expect(await outboxFor(job.id)).toEqual([
      {
        type: "export.failed",
        institution_id: institution.id,
        user_id: admin.id,
        payload: { export_id: job.id, type: "activity", error: TOO_SLOW },
      },
    ]);
  });

  it("gives up a job whose whole file was written but never recorded as completed: the file is deleted too", async () => {
    const { admin } = await createTenant();
    const queue = new HeldQueue();
    const { body: job } = await requestExport(
      admin.token,
      { type: "activity" },
      { bindings: heldBindings(queue) },
    );
    // The file is in R2 (a plain PUT), and `completed` was never written.
    const broken = heldBindings(queue, { DB: d1WithFailingBatches() });
    expect((await deliver(broken, queue.take())).acked).toBe(false);
    const row = await jobRow(job.id);
    expect(row).toMatchObject({ status: "processing", leaseId: null });
    expect(await env.EXPORTS_BUCKET.head(row!.r2Key)).not.toBeNull();
    await updateJob(job.id, { createdAt: nowIso(Date.now() - 25 * 3_600_000) });

    // R2 refusing the delete leaves the job active for the next minute's sweep.
    const refusing = bucketWith({
      delete: async () => {
        throw new Error("R2 unavailable");
      },
    });
    await cron(heldBindings(new HeldQueue(), { EXPORTS_BUCKET: refusing }));
    expect(await jobRow(job.id)).toMatchObject({ status: "processing", leaseId: null });
    expect(await outboxFor(job.id)).toEqual([]);

    await cron(heldBindings(new HeldQueue()));
    expect(await jobRow(job.id)).toMatchObject({ status: "failed", error: TOO_SLOW });
    expect(await env.EXPORTS_BUCKET.head(row!.r2Key)).toBeNull();
    expect((await outboxFor(job.id)).map((e) => e.type)).toEqual(["export.failed"]);
    expect((await callJson(`${EXPORTS}/${job.id}/download`, { token: admin.token })).body.code).toBe(
      "export_failed",
    );
  });
});
