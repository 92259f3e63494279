import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { parse } from "csv-parse/sync";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { bulkJobRows, bulkJobs } from "../../src/db/schema";
import worker from "../../src/index";
import { runSweeps } from "../../src/scheduled";
import { HeldQueue } from "../exports/support";
import { createTenant, mintToken } from "../helpers/tenants";
import {
  acceptInvitation,
  bulkPath,
  call,
  callJson,
  db,
  findBulkJob,
  groupCount,
  insertBulkJob,
  invitationToken,
  membersPath,
  outboxOf,
  uniqueEmail,
  uploadCsv,
  userCount,
} from "./support";

let deliveries = 0;

/** Runs the worker's queue handler on one bulk message, as the queue would. */
async function deliver(bindings: Cloudflare.Env, body: unknown, queue = "lingua-bulk-members") {
  deliveries += 1;
  const batch = createMessageBatch(queue, [
    { id: `bulk-${deliveries}`, timestamp: new Date(), attempts: 1, body },
  ]);
  const ctx = createExecutionContext();
  await worker.queue!(batch as MessageBatch<unknown>, bindings, ctx);
  const result = await getQueueResult(batch, ctx);
  return { acked: result.explicitAcks.length === 1, retried: result.retryMessages.length === 1 };
}

function held(queue: HeldQueue): Cloudflare.Env {
  return { ...env, BULK_QUEUE: queue as unknown as Queue } as Cloudflare.Env;
}

/** The minute cron's sweeps, as scheduled at `scheduledTime`. */
async function sweep(bindings: Cloudflare.Env, scheduledTime: number) {
  const ctx = createExecutionContext();
  await runSweeps(bindings, ctx, scheduledTime);
  await waitOnExecutionContext(ctx);
}

function rowsCsv(count: number, tag: string): string {
  const lines = ["email,name,external_id,groups"];
  for (let i = 0; i < count; i++) lines.push(`${tag}-${i}@bulk.test,Member ${i},${tag}-${i},year-${i % 5}`);
  return `${lines.join("\r\n")}\r\n`;
}

describe("bulk upload through the queue", () => {
  it("applies 5,000 rows in chunks, once, even when a message is delivered twice", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const queue = new HeldQueue();
    const bindings = held(queue);
    const tag = uniqueEmail("q").split("@")[0]!;
    const upload = await uploadCsv(tenant.admin.token, id, rowsCsv(5000, tag), "", bindings);
    expect(upload.res.status, JSON.stringify(upload.body)).toBe(202);
    expect(upload.body).toMatchObject({ status: "queued", total_rows: 5000, processed_rows: 0 });
    const location = upload.res.headers.get("Location")!;
    expect(location).toBe(`https://api.lingua.test${bulkPath(id)}/${upload.body.id}`);

    // A second upload while the first is queued.
    const second = await uploadCsv(tenant.admin.token, id, "email\r\nx@y.test\r\n", "", bindings);
    expect(second.res.status).toBe(409);
    expect(second.body.code).toBe("bulk_in_progress");

    const first = queue.take();
    expect(first).toEqual({ job_id: upload.body.id, generation: 0 });
    expect((await deliver(bindings, first)).acked).toBe(true);
    // The same message again: the job was handed on to a message of the next generation, so this one
    // is acknowledged, not re-applied.
    const twin = await deliver(bindings, first);
    expect(twin).toEqual({ acked: true, retried: false });
    let messages = 1;
    while (queue.messages.length > 0) {
      const outcome = await deliver(bindings, queue.take());
      expect(outcome.acked).toBe(true);
      messages += 1;
    }
    expect(messages).toBe(5);

    const { res, body } = await callJson(`${location}?per_page=1000`, { token: tenant.admin.token });
    expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(200);
    expect(body).toMatchObject({
      status: "completed",
      processed_rows: 5000,
      counts: { created: 5000, updated: 0, unchanged: 0, suspended: 0, rejected: 0 },
      rows_meta: { total: 5000, per_page: 1000, current_page: 1, last_page: 5 },
    });
    expect(body.rows[0]).toMatchObject({ line: 2, outcome: "created", email: `${tag}-0@bulk.test` });
    expect(body.rows.every((r: any) => typeof r.invitation_url === "string")).toBe(true);
    // Shown once.
    const again = await callJson(`${location}?per_page=1000`, { token: tenant.admin.token });
    expect(again.body.rows.every((r: any) => r.invitation_url === null)).toBe(true);

    expect(await userCount(id)).toBe(5003);
    expect(await groupCount(id)).toBe(5000);
    const events = await outboxOf(id, "member.created");
    expect(events).toHaveLength(5000);
    expect(new Set(events.map((e) => e.user_id)).size).toBe(5000);

    // The stale twin, delivered once the job is completed, is acknowledged and does nothing.
    expect(await deliver(bindings, first)).toEqual({ acked: true, retried: false });
    expect((await outboxOf(id, "member.created")).length).toBe(5000);

    // Now a new upload is accepted; the same file changes nothing.
    const repeat = await uploadCsv(tenant.admin.token, id, rowsCsv(5000, tag), "", bindings);
    expect(repeat.res.status).toBe(202);
    while (queue.messages.length > 0) await deliver(bindings, queue.take());
    const repeated = await callJson(repeat.res.headers.get("Location")!, { token: tenant.admin.token });
    expect(repeated.body.counts).toEqual({
      created: 0,
      updated: 0,
      unchanged: 5000,
      suspended: 0,
      rejected: 0,
    });
  });

  it("a message lost after the first chunk: uploads wait (409) while the lease is live, the minute sweep resumes the job about two minutes later, every row is reported once, and the late original changes nothing", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const queue = new HeldQueue();
    const bindings = held(queue);
    const tag = uniqueEmail("lost").split("@")[0]!;
    const upload = await uploadCsv(tenant.admin.token, id, rowsCsv(3000, tag), "", bindings);
    expect(upload.res.status, JSON.stringify(upload.body)).toBe(202);
    const location = upload.res.headers.get("Location")!;
    expect((await deliver(bindings, queue.take())).acked).toBe(true);
    const lost = queue.take(); // handed over after the first chunk, and never delivered
    expect(lost).toEqual({ job_id: upload.body.id, generation: 1 });
    expect(queue.messages).toEqual([]);
    const midway = await callJson(location, { token: tenant.admin.token });
    expect(midway.body).toMatchObject({ status: "processing", processed_rows: 1000 });

    // Within the lease, the job still counts: another upload waits, and the sweep sends nothing.
    const early = await uploadCsv(tenant.admin.token, id, "email\r\nearly@bulk.test\r\n", "", bindings);
    expect(early.res.status).toBe(409);
    expect(early.body.code).toBe("bulk_in_progress");
    await sweep(bindings, Date.now() + 30_000);
    expect(queue.messages).toEqual([]);

    // Past it: one new message of the job's generation, however many sweeps run at that time.
    const later = Date.now() + 2 * 60_000;
    await Promise.all([sweep(bindings, later), sweep(bindings, later)]);
    expect(queue.messages).toEqual([{ job_id: upload.body.id, generation: 1 }]);
    while (queue.messages.length > 0) expect((await deliver(bindings, queue.take())).acked).toBe(true);

    const { body } = await callJson(`${location}?per_page=1000`, { token: tenant.admin.token });
    expect(body).toMatchObject({
      status: "completed",
      processed_rows: 3000,
      counts: { created: 3000, updated: 0, unchanged: 0, suspended: 0, rejected: 0 },
      rows_meta: { total: 3000 },
    });
    const lines = await db()
      .select({ line: bulkJobRows.line })
      .from(bulkJobRows)
      .where(eq(bulkJobRows.jobId, upload.body.id));
    expect(lines.map((r) => r.line).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 3000 }, (_, i) => i + 2),
    );
    expect(await userCount(id)).toBe(3003);
    expect((await outboxOf(id, "member.created")).length).toBe(3000);

    // The lost message turns up after all: acknowledged, nothing applied or sent.
    expect(await deliver(bindings, lost)).toEqual({ acked: true, retried: false });
    expect(queue.messages).toEqual([]);
    expect((await outboxOf(id, "member.created")).length).toBe(3000);
    expect(await userCount(id)).toBe(3003);

    // The job finished, uploads are accepted again.
    const next = await uploadCsv(tenant.admin.token, id, "email\r\nafter@bulk.test\r\n", "", bindings);
    expect(next.res.status).toBe(200);
  });

  it("an upload applied within its request whose request died: 409 while its lease is live; then the next upload (or the sweep) fails it", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const now = Date.now();
    const crashed = await insertBulkJob(id, tenant.admin.id, {
      leaseId: "lse_request",
      leaseUntil: now + 60_000,
      heartbeatAt: now,
    });
    const blocked = await uploadCsv(tenant.admin.token, id, "email\r\nwait@bulk.test\r\n");
    expect(blocked.res.status).toBe(409);

    // The sweep, past its lease, fails it: nothing can resume an upload that was never stored.
    await sweep(held(new HeldQueue()), now + 2 * 60_000);
    expect(await findBulkJob(crashed.id)).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/upload the file again/),
      leaseId: null,
    });
    expect((await uploadCsv(tenant.admin.token, id, "email\r\nnow@bulk.test\r\n")).res.status).toBe(200);

    // Without a sweep in between, the next upload fails the abandoned job itself.
    const abandoned = await insertBulkJob(id, tenant.admin.id, {
      leaseId: "lse_request",
      leaseUntil: Date.now() - 1,
      heartbeatAt: now,
    });
    expect((await uploadCsv(tenant.admin.token, id, "email\r\nthen@bulk.test\r\n")).res.status).toBe(200);
    expect((await findBulkJob(abandoned.id))!.status).toBe("failed");
  });

  it("hides jobs from other institutions and serves rejected rows once finished", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const id = tenant.institution.id;
    const queue = new HeldQueue();
    const bindings = held(queue);
    const tag = uniqueEmail("r").split("@")[0]!;
    const csv = `${rowsCsv(1200, tag)}broken,Broken,,\r\n`;
    const upload = await uploadCsv(tenant.admin.token, id, csv, "dry_run=true", bindings);
    expect(upload.res.status).toBe(202);
    const jobPath = `${bulkPath(id)}/${upload.body.id}`;
    const early = await callJson(`${jobPath}/rejected.csv`, { token: tenant.admin.token });
    expect(early.res.status).toBe(409);
    expect(early.body).toMatchObject({ code: "bulk_not_finished", bulk_status: "queued" });
    for (const path of [
      jobPath,
      `${jobPath}/rejected.csv`,
      `${bulkPath(other.institution.id)}/${upload.body.id}`,
    ]) {
      expect((await call(path, { token: other.admin.token })).status, path).toBe(404);
    }
    expect(
      (await call(`${bulkPath(other.institution.id)}/${upload.body.id}`, { token: tenant.admin.token }))
        .status,
    ).toBe(404);
    expect((await call(jobPath, { token: tenant.learner.token })).status).toBe(403);

    while (queue.messages.length > 0) expect((await deliver(bindings, queue.take())).acked).toBe(true);
    const done = await callJson(`${jobPath}?outcome=rejected`, { token: tenant.admin.token });
    expect(done.body).toMatchObject({
      status: "completed",
      dry_run: true,
      counts: { created: 1200, rejected: 1 },
      rows: [{ line: 1202, outcome: "rejected", invitation_url: null }],
    });
    // A dry run created nobody: its created rows name no member.
    const created = await callJson(`${jobPath}?outcome=created&per_page=3`, { token: tenant.admin.token });
    expect(created.body.rows.map((r: any) => [r.line, r.member_id])).toEqual([
      [2, null],
      [3, null],
      [4, null],
    ]);
    expect(await userCount(id)).toBe(3);
    const rejected = await call(`${jobPath}/rejected.csv`, { token: tenant.admin.token });
    expect(rejected.status).toBe(200);
    expect(parse(await rejected.text(), { columns: true })).toEqual([
      {
        email: "broken",
        name: "Broken",
        external_id: "",
        groups: "",
        line: "1202",
        reason: 'email: "broken" is not an e-mail address',
      },
    ]);
  });

  it("mints each invitation when its row is first read: shown once, usable, and never over a re-invite", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const queue = new HeldQueue();
    const bindings = held(queue);
    const tag = uniqueEmail("i").split("@")[0]!;
    const upload = await uploadCsv(tenant.admin.token, id, rowsCsv(1001, tag), "", bindings);
    expect(upload.res.status).toBe(202);
    while (queue.messages.length > 0) expect((await deliver(bindings, queue.take())).acked).toBe(true);
    const jobPath = upload.res.headers.get("Location")!;

    // The member of line 3 is re-invited before anybody read the report: that invitation stands.
    const first = await callJson(`${jobPath}?per_page=1`, { token: tenant.admin.token });
    expect(first.body.rows[0]).toMatchObject({ line: 2, outcome: "created" });
    const lineThree = await callJson(`${membersPath(id)}?external_id=${tag}-1`, {
      token: tenant.admin.token,
    });
    expect(lineThree.body.data).toHaveLength(1);
    const reinvited = await callJson(`/api/institutions/${id}/invitations`, {
      token: tenant.admin.token,
      body: { member_id: lineThree.body.data[0].id },
    });
    expect(reinvited.res.status).toBe(201);

    // The member of line 4 is removed and the one of line 5 suspended before anybody read their rows.
    for (const [ext, change] of [
      [`${tag}-2`, "DELETE"],
      [`${tag}-3`, "PATCH"],
    ] as const) {
      const found = await callJson(`${membersPath(id)}?external_id=${ext}`, { token: tenant.admin.token });
      const res = await call(`${membersPath(id)}/${found.body.data[0].id}`, {
        method: change,
        token: tenant.admin.token,
        ...(change === "PATCH" ? { body: { status: "suspended" } } : {}),
      });
      expect(res.status, ext).toBe(change === "DELETE" ? 204 : 200);
    }

    // Two readers of the same page at once: every invitation reaches exactly one of them.
    const [a, b] = await Promise.all([
      callJson(`${jobPath}?per_page=20&page=1`, { token: tenant.admin.token }),
      callJson(`${jobPath}?per_page=20&page=1`, { token: tenant.admin.token }),
    ]);
    const urls = [...a.body.rows, ...b.body.rows].filter((r: any) => r.invitation_url);
    // Line 2 was shown by the first read, line 3's member had been re-invited, line 4's removed and
    // line 5's suspended: 16 left on the page.
    expect(urls).toHaveLength(16);
    expect(new Set(urls.map((r: any) => r.line)).size).toBe(16);
    expect(urls.some((r: any) => [3, 4, 5].includes(r.line))).toBe(false);

    // The minted invitations work, once; the re-invite was not replaced.
    const accepted = await acceptInvitation(invitationToken(first.body.rows[0].invitation_url));
    expect(accepted.res.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body.user).toMatchObject({ id: first.body.rows[0].member_id });
    expect((await acceptInvitation(invitationToken(urls[0].invitation_url))).res.status).toBe(200);
    expect((await acceptInvitation(invitationToken(urls[0].invitation_url))).res.status).toBe(400);
    const viaReinvite = await acceptInvitation(invitationToken(reinvited.body.invitation_url));
    expect(viaReinvite.res.status, JSON.stringify(viaReinvite.body)).toBe(200);
  });

  it("shows invitation URLs only to readers who may issue them; the others use none up", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const queue = new HeldQueue();
    const bindings = held(queue);
    const tag = uniqueEmail("p").split("@")[0]!;
    // Line 2 an institution admin, the rest learners.
    const csv = rowsCsv(1001, tag).replace(`${tag}-0,year-0`, `${tag}-0,year-0,institution_admin`);
    const withRole = csv.replace("email,name,external_id,groups", "email,name,external_id,groups,role");
    const upload = await uploadCsv(tenant.admin.token, id, withRole, "", bindings);
    expect(upload.res.status, JSON.stringify(upload.body)).toBe(202);
    while (queue.messages.length > 0) expect((await deliver(bindings, queue.take())).acked).toBe(true);
    const jobPath = upload.res.headers.get("Location")!;
    const page = `${jobPath}?per_page=3`;

    const readOnly = await mintToken(tenant.admin, ["members:read"]);
    for (const token of [tenant.instructor.token, readOnly.token]) {
      const read = await callJson(page, { token });
      expect(read.res.status).toBe(200);
      expect(read.body.rows.map((r: any) => r.invitation_url)).toEqual([null, null, null]);
    }
    // Somebody who may issue them then gets every one, the admin's too, once.
    const byAdmin = await callJson(page, { token: tenant.admin.token });
    expect(byAdmin.body.rows.every((r: any) => typeof r.invitation_url === "string")).toBe(true);
    const again = await callJson(page, { token: tenant.admin.token });
    expect(again.body.rows.map((r: any) => r.invitation_url)).toEqual([null, null, null]);
    expect(
      (await acceptInvitation(invitationToken(byAdmin.body.rows[0].invitation_url))).body.user,
    ).toMatchObject({
      role: "institution_admin",
    });
  });

  it("fails a job the queue gave up on, once no invocation holds it", async () => {
    const tenant = await createTenant();
    const queue = new HeldQueue();
    const bindings = held(queue);
    const upload = await uploadCsv(
      tenant.admin.token,
      tenant.institution.id,
      rowsCsv(1001, uniqueEmail("d").split("@")[0]!),
      "",
      bindings,
    );
    expect(upload.res.status).toBe(202);
    const message = queue.take();
    // While an invocation holds the job (a twin of the message got through), the dead letter waits.
    const heldByTwin = { leaseId: "lse_twin", leaseUntil: Date.now() + 60_000 };
    await db().update(bulkJobs).set(heldByTwin).where(eq(bulkJobs.id, upload.body.id)).run();
    expect(await deliver(bindings, message, "lingua-bulk-members-dlq")).toEqual({
      acked: false,
      retried: true,
    });
    expect((await findBulkJob(upload.body.id))!.status).toBe("queued");
    await db()
      .update(bulkJobs)
      .set({ leaseId: null, leaseUntil: Date.now() + 60_000 })
      .where(eq(bulkJobs.id, upload.body.id))
      .run();
    expect((await deliver(bindings, message, "lingua-bulk-members-dlq")).acked).toBe(true);
    const job = await callJson(upload.res.headers.get("Location")!, { token: tenant.admin.token });
    expect(job.body).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/Upload the file again/),
    });
    const next = await uploadCsv(tenant.admin.token, tenant.institution.id, "email\r\nfresh@bulk.test\r\n");
    expect(next.res.status).toBe(200);
  });
});
