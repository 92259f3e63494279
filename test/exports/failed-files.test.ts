import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { GAVE_UP } from "../../src/domains/exports/consumer";
import { callJson } from "../helpers/api";
import { createTenant } from "../helpers/tenants";
import {
  bucketWith,
  d1WithFailingBatches,
  deliver,
  EXPORTS,
  gate,
  HeldQueue,
  heldBindings,
  jobRow,
  outboxFor,
  requestExport,
  updateJob,
} from "./support";

// A failed export never keeps a file in R2, even one that was written whole before the job failed.

const DLQ = { queue: "lingua-exports-dlq" };

async function queuedExport() {
  const { admin } = await createTenant();
  const queue = new HeldQueue();
  const bindings = heldBindings(queue);
  const { res, body } = await requestExport(admin.token, { type: "activity" }, { bindings });
  expect(res.status).toBe(202);
  const row = await jobRow(body.id);
  return {
    token: admin.token,
    id: body.id as string,
    key: row!.r2Key as string,
    message: queue.take(),
    bindings,
  };
}

/** The file is written by a plain PUT, then recording `completed` fails: the message is retried. */
async function writtenButNotCompleted(job: Awaited<ReturnType<typeof queuedExport>>, attempts = 1) {
  const outcome = await deliver({ ...job.bindings, DB: d1WithFailingBatches() }, job.message, { attempts });
  expect(outcome.acked).toBe(false);
  expect(outcome.retried).not.toBeNull();
  expect(await jobRow(job.id)).toMatchObject({ status: "processing", leaseId: null });
  expect(await env.EXPORTS_BUCKET.head(job.key)).not.toBeNull();
}

async function expectFailedWithoutFile(job: Awaited<ReturnType<typeof queuedExport>>) {
  expect(await jobRow(job.id)).toMatchObject({ status: "failed", error: GAVE_UP, leaseId: null });
  expect(await env.EXPORTS_BUCKET.head(job.key)).toBeNull();
  expect((await outboxFor(job.id)).map((e) => e.type)).toEqual(["export.failed"]);
  const { body } = await callJson(`${EXPORTS}/${job.id}`, { token: job.token });
  expect(body).toMatchObject({ status: "failed", download_url: null, row_count: null });
  const download = await callJson(`${EXPORTS}/${job.id}/download`, { token: job.token });
  expect(download.res.status).toBe(409);
  expect(download.body.code).toBe("export_failed");
}

describe("a job that fails after its file was written", () => {
  it("completing it failed on every attempt: the dead-letter consumer deletes the file with the job's failure", async () => {
    const job = await queuedExport();
    for (const attempts of [1, 2, 3]) await writtenButNotCompleted(job, attempts);

    expect((await deliver(job.bindings, job.message, DLQ)).acked).toBe(true);
    await expectFailedWithoutFile(job);
    // The dead letter delivered again changes nothing.
    expect((await deliver(job.bindings, job.message, DLQ)).acked).toBe(true);
    expect(await outboxFor(job.id)).toHaveLength(1);
  });

  it("R2 refuses the delete: the job stays active and unheld, the dead letter is retried, and its retry fails it", async () => {
    const job = await queuedExport();
    await writtenButNotCompleted(job);
    const refusing = bucketWith({
      delete: async () => {
        throw new Error("R2 unavailable");
      },
    });

    const refused = await deliver({ ...job.bindings, EXPORTS_BUCKET: refusing }, job.message, DLQ);
    expect(refused.acked).toBe(false);
    expect(refused.retried).not.toBeNull();
    expect(await jobRow(job.id)).toMatchObject({ status: "processing", leaseId: null, error: null });
    expect(await env.EXPORTS_BUCKET.head(job.key)).not.toBeNull();
    expect(await outboxFor(job.id)).toEqual([]);

    expect((await deliver(job.bindings, job.message, { ...DLQ, attempts: 2 })).acked).toBe(true);
    await expectFailedWithoutFile(job);
  });

  it("an invocation that outlived its lease and wrote the file after the job failed deletes that file", async () => {
    const job = await queuedExport();
    const putStarted = gate();
    const putMayFinish = gate();
    const stalling = bucketWith({
      put: (async (key: string, value: any, options?: R2PutOptions) => {
        putStarted.open();
        await putMayFinish.opened;
        return env.EXPORTS_BUCKET.put(key, value, options);
      }) as R2Bucket["put"],
    });
    const stalled = deliver({ ...job.bindings, EXPORTS_BUCKET: stalling }, job.message);
    await putStarted.opened;
    // Its lease runs out while it stalls, and the queue's dead letter fails the job.
    await updateJob(job.id, { leaseUntil: Date.now() - 1 });
    expect((await deliver(job.bindings, job.message, DLQ)).acked).toBe(true);
    expect((await jobRow(job.id))!.status).toBe("failed");

    putMayFinish.open();
    expect((await stalled).acked).toBe(true);
    await expectFailedWithoutFile(job);
  });
});
