import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { exportJobs } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { nowIso } from "../../src/platform/ids";
import { call, callJson } from "../helpers/api";
import { createCourse } from "../helpers/catalog";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { createPlatformAdmin, createTenant, mintToken } from "../helpers/tenants";
import { attempt, record } from "../progress/reads/support";
import {
  deliver,
  drain,
  EXPORTS,
  exportAndWait,
  gate,
  HeldQueue,
  heldBindings,
  jobRow,
  jobsRequestedBy,
  outboxFor,
  requestExport,
  updateJob,
} from "./support";

describe("POST /api/integrations/exports", () => {
  it("answers 202 with the queued job and its URL in Location", async () => {
    const { admin, institution } = await createTenant();
    const queue = new HeldQueue();
    const { res, body } = await requestExport(
      admin.token,
      { type: "activity" },
      { bindings: heldBindings(queue) },
    );
    expect(res.status).toBe(202);
    expect(body).toEqual({
      id: expect.stringMatching(/^exp_[0-9A-Z]{26}$/),
      type: "activity",
      filters: {},
      status: "queued",
      row_count: null,
      byte_size: null,
      progress: 0,
      error: null,
      requested_by: admin.id,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      started_at: null,
      completed_at: null,
      expires_at: null,
      download_url: null,
    });
    expect(res.headers.get("Location")).toBe(`https://api.lingua.test${EXPORTS}/${body.id}`);
    expect(queue.messages).toEqual([{ job_id: body.id, generation: 0 }]);
    const row = await jobRow(body.id);
    expect(row).toMatchObject({
      institutionId: institution.id,
      status: "queued",
      r2Key: `exports/${institution.id}/${body.id}.csv`,
    });
    const again = await callJson(`${EXPORTS}/${body.id}`, { token: admin.token });
    expect(again.body).toEqual(body);
  });

  it("refuses jobs (500, nothing stored or queued) while the deployment's part size is below R2's 5 MiB", async () => {
    const { admin, institution } = await createTenant();
    const queue = new HeldQueue();
    const { res, body } = await requestExport(
      admin.token,
      { type: "activity" },
      { bindings: heldBindings(queue, { EXPORT_PART_SIZE_BYTES: String(5 * 1024 * 1024 - 1) }) },
    );
    expect(res.status).toBe(500);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(body.code).toBe("internal_error");
    expect(queue.messages).toEqual([]);
    expect(await database(env.DB).$count(exportJobs, eq(exportJobs.institutionId, institution.id))).toBe(0);
  });

  it.each([
    ["an unknown type", { type: "grades" }, "type"],
    ["no type", {}, "type"],
    ["an unknown field", { type: "activity", format: "xlsx" }, "format"],
    ["a malformed from", { type: "activity", from: "yesterday" }, "from"],
    ["to before from", { type: "activity", from: "2026-02-01T00:00:00Z", to: "2026-01-01T00:00:00Z" }, "to"],
    [
      "to equal to from",
      { type: "activity", from: "2026-02-01T00:00:00Z", to: "2026-02-01T00:00:00Z" },
      "to",
    ],
    ["an empty user list", { type: "activity", user_ids: [] }, "user_ids"],
    [
      "101 users",
      { type: "activity", user_ids: Array.from({ length: 101 }, (_, i) => `usr_${i}`) },
      "user_ids",
    ],
  ])("refuses %s with 422", async (_name, body, path) => {
    const { admin } = await createTenant();
    const { res, body: problem } = await requestExport(admin.token, body);
    expect(res.status).toBe(422);
    expect(problem.code).toBe("validation_failed");
    expect(problem.errors.map((e: any) => e.path)).toContain(path);
  });

  it("refuses an unknown course and users who are not members of the institution (422, each named)", async () => {
    const { admin, learner } = await createTenant();
    const other = await createTenant();
    const { res, body } = await requestExport(admin.token, {
      type: "activity",
      course_id: "crs_nope",
      user_ids: [learner.id, other.learner.id, "usr_nobody"],
    });
    expect(res.status).toBe(422);
    expect(body.errors).toEqual([
      { path: "course_id", message: "is not a known course" },
      { path: "user_ids.1", message: "is not a member of your institution" },
      { path: "user_ids.2", message: "is not a member of your institution" },
    ]);
    expect(await jobsRequestedBy(admin.id)).toBe(0);
  });

  it("refuses an unpublished course exactly as an unknown one: no existence oracle", async () => {
    const { admin } = await createTenant();
    const draft = await createCourse({ published: false });
    const published = await createCourse();
    const unknown = await requestExport(admin.token, { type: "activity", course_id: "crs_nope" });
    const hidden = await requestExport(admin.token, { type: "activity", course_id: draft.id });
    expect(hidden.res.status).toBe(422);
    const { request_id: _unknownId, ...unknownProblem } = unknown.body;
    const { request_id: _hiddenId, ...hiddenProblem } = hidden.body;
    expect(hiddenProblem).toEqual(unknownProblem);
    expect(await jobsRequestedBy(admin.id)).toBe(0);
    // A published course is accepted.
    const visible = await requestExport(admin.token, { type: "activity", course_id: published.id });
    expect(visible.res.status, JSON.stringify(visible.body)).toBe(202);
  });

  it("needs exports:write; learners and instructors lack it; platform staff without an institution are refused with 403", async () => {
    const { admin, learner, instructor } = await createTenant();
    for (const user of [learner, instructor]) {
      const { res, body } = await requestExport(user.token, { type: "activity" });
      expect(res.status).toBe(403);
      expect(body).toMatchObject({
        code: "missing_ability",
        detail: expect.stringContaining("exports:write"),
      });
    }
    const readOnly = await mintToken(admin, ["exports:read"]);
    expect((await requestExport(readOnly.token, { type: "activity" })).res.status).toBe(403);
    const staff = await createPlatformAdmin();
    const refused = await requestExport(staff.token, { type: "activity" });
    expect(refused.res.status).toBe(403);
    expect(refused.body).toMatchObject({
      code: "forbidden",
      detail: expect.stringContaining("belongs to an institution"),
    });
    expect((await callJson(EXPORTS, { token: staff.token })).res.status).toBe(403);
  });

  it("honours Idempotency-Key: the same request replays the job, another body is 422", async () => {
    const { admin } = await createTenant();
    const queue = new HeldQueue();
    const bindings = heldBindings(queue);
    const headers = { "Idempotency-Key": `exp-${crypto.randomUUID()}` };
    const first = await requestExport(admin.token, { type: "completions" }, { headers, bindings });
    const second = await requestExport(admin.token, { type: "completions" }, { headers, bindings });
    expect(first.res.status).toBe(202);
    expect(second.res.status).toBe(202);
    expect(second.res.headers.get("Idempotent-Replayed")).toBe("true");
    expect(second.body).toEqual(first.body);
    expect(second.res.headers.get("Location")).toBe(first.res.headers.get("Location"));
    expect(queue.messages).toHaveLength(1);
    expect(await jobsRequestedBy(admin.id)).toBe(1);
    const reused = await requestExport(admin.token, { type: "activity" }, { headers, bindings });
    expect(reused.res.status).toBe(422);
    expect(reused.body.code).toBe("idempotency_key_reused");
  });
});

describe("POST /api/integrations/exports with an Idempotency-Key still in flight", () => {
  it("answers the twin 409 idempotency_in_flight and creates nothing; the first then answers, and a retry replays it", async () => {
    const { admin } = await createTenant();
    const queue = new HeldQueue();
    // The first request stops in the middle (its job recorded, its message not yet sent), holding the key.
    const sendStarted = gate();
    const sendMayFinish = gate();
    const stalling = {
      async send(body: unknown) {
        sendStarted.open();
        await sendMayFinish.opened;
        await queue.send(body);
      },
    };
    const bindings = heldBindings(queue, { EXPORTS_QUEUE: stalling });
    const headers = { "Idempotency-Key": `exp-${crypto.randomUUID()}` };
    const jobs = () => jobsRequestedBy(admin.id);

    const first = requestExport(admin.token, { type: "activity" }, { headers, bindings });
    await sendStarted.opened;
    const twin = await requestExport(admin.token, { type: "activity" }, { headers, bindings });
    expect(twin.res.status).toBe(409);
    expect(twin.res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(twin.res.headers.get("Idempotent-Replayed")).toBeNull();
    expect(twin.body).toMatchObject({ status: 409, code: "idempotency_in_flight" });
    expect(await jobs()).toBe(1);

    sendMayFinish.open();
    const answered = await first;
    expect(answered.res.status).toBe(202);
    expect(queue.messages).toEqual([{ job_id: answered.body.id, generation: 0 }]);

    const retried = await requestExport(admin.token, { type: "activity" }, { headers, bindings });
    expect(retried.res.status).toBe(202);
    expect(retried.res.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retried.body).toEqual(answered.body);
    expect(await jobs()).toBe(1);
    expect(queue.messages).toHaveLength(1);
  });
});

describe("GET /api/integrations/exports", () => {
  it("lists the institution's exports newest first, filtered by status and type, in the list envelope", async () => {
    const { admin } = await createTenant();
    const other = await createTenant();
    const queue = new HeldQueue();
    const bindings = heldBindings(queue);
    const ids: string[] = [];
    for (const type of ["activity", "completions", "learner_progress", "activity"]) {
      ids.push((await requestExport(admin.token, { type }, { bindings })).body.id);
    }
    await requestExport(other.admin.token, { type: "activity" }, { bindings });
    // Complete the first one only.
    await deliver(bindings, queue.messages[0]);

    const all = await callJson(`${EXPORTS}?per_page=3`, { token: admin.token });
    expect(all.res.status).toBe(200);
    expect(all.body.data.map((j: any) => j.id)).toEqual([ids[3], ids[2], ids[1]]);
    expect(all.body.meta).toEqual({ total: 4, per_page: 3, current_page: 1, last_page: 2 });
    expect(all.body.links.next).toBe(`https://api.lingua.test${EXPORTS}?per_page=3&page=2`);

    const completed = await callJson(`${EXPORTS}?status=completed`, { token: admin.token });
    expect(completed.body.data.map((j: any) => [j.id, j.status])).toEqual([[ids[0], "completed"]]);
    expect(completed.body.data[0].download_url).toBe(`https://api.lingua.test${EXPORTS}/${ids[0]}/download`);
    const activity = await callJson(`${EXPORTS}?type=activity&status=queued`, { token: admin.token });
    expect(activity.body.data.map((j: any) => j.id)).toEqual([ids[3]]);

    const bad = await callJson(`${EXPORTS}?status=done&type=grades`, { token: admin.token });
    expect(bad.res.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(["status", "type"]);
  });

  it("shows a completed export past expires_at as expired, without download_url, before the sweep has run; the status filter agrees", async () => {
    const { admin } = await createTenant();
    const due = await exportAndWait(admin.token, { type: "activity" });
    const kept = await exportAndWait(admin.token, { type: "activity" });
    const expiresAt = nowIso(Date.now() - 1000);
    await updateJob(due.id, { expiresAt });
    expect((await jobRow(due.id))!.status).toBe("completed");

    const one = await callJson(`${EXPORTS}/${due.id}`, { token: admin.token });
    expect(one.body).toEqual({ ...due, status: "expired", expires_at: expiresAt, download_url: null });
    const list = await callJson(EXPORTS, { token: admin.token });
    expect(list.body.data.map((j: any) => [j.id, j.status, j.download_url])).toEqual([
      [kept.id, "completed", kept.download_url],
      [due.id, "expired", null],
    ]);
    const completed = await callJson(`${EXPORTS}?status=completed`, { token: admin.token });
    expect(completed.body.data.map((j: any) => j.id)).toEqual([kept.id]);
    expect(completed.body.meta.total).toBe(1);
    const expired = await callJson(`${EXPORTS}?status=expired&type=activity`, { token: admin.token });
    expect(expired.body.data.map((j: any) => [j.id, j.status])).toEqual([[due.id, "expired"]]);
    expect(expired.body.meta.total).toBe(1);
    expect((await call(`${EXPORTS}/${due.id}/download`, { token: admin.token })).status).toBe(410);
    // Nothing was written by reading: the sweep still finds it completed and deletes its file.
    expect((await jobRow(due.id))!.status).toBe("completed");
  });

  it("shows another institution's export as 404", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const job = await exportAndWait(a.admin.token, { type: "activity" });
    for (const path of [`${EXPORTS}/${job.id}`, `${EXPORTS}/${job.id}/download`]) {
      const { res, body } = await callJson(path, { token: b.admin.token });
      expect(res.status).toBe(404);
      expect(body.code).toBe("not_found");
    }
    expect((await callJson(EXPORTS, { token: b.admin.token })).body.meta.total).toBe(0);
    expect((await callJson(`${EXPORTS}/exp_unknown`, { token: a.admin.token })).res.status).toBe(404);
  });
});

describe("GET /api/integrations/exports/{id}/download", () => {
  it("is 409 with the status while queued or processing, then streams the file with its headers", async () => {
    const { admin, learner, institution } = await createTenant();
    const course = await createPublishedCourse();
    await record(learner.token, [attempt(course.items[0]!), attempt(course.items[1]!)]);
    const queue = new HeldQueue();
    const bindings = heldBindings(queue);
    const { body: job } = await requestExport(admin.token, { type: "activity" }, { bindings });

    const early = await callJson(`${EXPORTS}/${job.id}/download`, { token: admin.token });
    expect(early.res.status).toBe(409);
    expect(early.res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(early.res.headers.get("Retry-After")).toBe("5");
    expect(early.body).toEqual({
      type: "https://api.lingua.test/api/docs/errors#export_not_ready",
      title: "Export not ready",
      status: 409,
      code: "export_not_ready",
      detail: expect.stringContaining("is queued"),
      export_status: "queued",
      progress: 0,
      request_id: expect.any(String),
    });

    await updateJob(job.id, { status: "processing", progress: 1234 });
    const busy = await callJson(`${EXPORTS}/${job.id}/download`, { token: admin.token });
    expect(busy.res.status).toBe(409);
    expect(busy.body.detail).toContain("is processing (1,234 rows written so far)");
    expect(busy.body).toMatchObject({ status: 409, export_status: "processing", progress: 1234 });
    await updateJob(job.id, { status: "queued", progress: 0 });

    await drain(bindings, queue);
    const res = await call(`${EXPORTS}/${job.id}/download`, { token: admin.token });
    expect(res.status).toBe(200);
    const text = await res.text();
    const day = job.created_at.slice(0, 10);
    expect(res.headers.get("Content-Type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("Content-Disposition")).toBe(
      `attachment; filename="lingua-activity-${institution.slug}-${day}-${job.id.slice(-8)}.csv"`,
    );
    expect(res.headers.get("Content-Length")).toBe(String(new TextEncoder().encode(text).length));
    expect(res.headers.get("ETag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(text.split("\r\n")).toHaveLength(4);

    // Conditional request: 304 without a body.
    const again = await call(`${EXPORTS}/${job.id}/download`, {
      token: admin.token,
      headers: { "If-None-Match": `W/"x", ${res.headers.get("ETag")}` },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");

    // bom=true: a UTF-8 byte-order mark in front, three bytes more, another ETag.
    const bom = await call(`${EXPORTS}/${job.id}/download?bom=true`, { token: admin.token });
    const bytes = new Uint8Array(await bom.arrayBuffer());
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(new TextDecoder().decode(bytes.slice(3))).toBe(text);
    expect(bom.headers.get("Content-Length")).toBe(String(bytes.length));
    expect(bom.headers.get("ETag")).not.toBe(res.headers.get("ETag"));
    const bomAgain = await call(`${EXPORTS}/${job.id}/download?bom=true`, {
      token: admin.token,
      headers: { "If-None-Match": bom.headers.get("ETag")! },
    });
    expect(bomAgain.status).toBe(304);
  });

  it("names two exports of the same type on the same day apart", async () => {
    const { admin, institution } = await createTenant();
    const first = await exportAndWait(admin.token, { type: "learner_progress" });
    const second = await exportAndWait(admin.token, { type: "learner_progress" });
    const names = [];
    for (const job of [first, second]) {
      const res = await call(`${EXPORTS}/${job.id}/download`, { token: admin.token });
      expect(res.status).toBe(200);
      await res.body?.cancel();
      const name = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition")!)![1]!;
      expect(name).toMatch(
        new RegExp(`^lingua-learner-progress-${institution.slug}-\\d{4}-\\d\\d-\\d\\d-[0-9A-Z]{8}\\.csv$`),
      );
      expect(job.id.endsWith(name.slice(-12, -4))).toBe(true);
      names.push(name);
    }
    expect(names[0]).not.toBe(names[1]);
  });

  it("is 409 with the reason for a failed export and 410 for an expired one", async () => {
    const { admin } = await createTenant();
    const failed = await exportAndWait(admin.token, { type: "activity" });
    await updateJob(failed.id, { status: "failed", error: "The disk was full." });
    const f = await callJson(`${EXPORTS}/${failed.id}/download`, { token: admin.token });
    expect(f.res.status).toBe(409);
    expect(f.body).toMatchObject({
      code: "export_failed",
      status: 409,
      detail: expect.stringContaining("The disk was full."),
      export_status: "failed",
      progress: 0,
    });
    expect((await callJson(`${EXPORTS}/${failed.id}`, { token: admin.token })).body).toMatchObject({
      status: "failed",
      error: "The disk was full.",
    });

    const expired = await exportAndWait(admin.token, { type: "activity" });
    await updateJob(expired.id, { status: "expired" });
    const e = await callJson(`${EXPORTS}/${expired.id}/download`, { token: admin.token });
    expect(e.res.status).toBe(410);
    expect(e.body).toMatchObject({ code: "export_expired", status: 410 });
    expect(e.body).not.toHaveProperty("export_status");

    // Past its retention but not yet swept: already 410.
    const due = await exportAndWait(admin.token, { type: "activity" });
    await updateJob(due.id, { expiresAt: "2020-01-01T00:00:00Z" });
    expect((await call(`${EXPORTS}/${due.id}/download`, { token: admin.token })).status).toBe(410);
  });

  it("needs exports:read", async () => {
    const { admin } = await createTenant();
    const job = await exportAndWait(admin.token, { type: "activity" });
    const writeOnly = await mintToken(admin, ["exports:write"]);
    const { res, body } = await callJson(`${EXPORTS}/${job.id}/download`, { token: writeOnly.token });
    expect(res.status).toBe(403);
    expect(body.detail).toContain("exports:read");
  });
});

describe("export events", () => {
  it("writes exactly one export.completed event to the outbox, with the figures and the download path", async () => {
    const { admin, institution } = await createTenant();
    const job = await exportAndWait(admin.token, { type: "learner_progress" });
    expect(await outboxFor(job.id)).toEqual([
      {
        type: "export.completed",
        institution_id: institution.id,
        user_id: admin.id,
        payload: {
          export_id: job.id,
          type: "learner_progress",
          row_count: 0,
          byte_size: job.byte_size,
          download_url: `${EXPORTS}/${job.id}/download`,
          expires_at: job.expires_at,
        },
      },
    ]);
    expect(Date.parse(job.expires_at) - Date.parse(job.completed_at)).toBe(7 * 86_400_000);
  });
});

describe("the OpenAPI document", () => {
  it("describes the four operations, their 202/304/409/410 answers and every CSV column", async () => {
    const { body: doc } = await callJson("/api/openapi.json");
    const list = doc.paths[EXPORTS];
    const one = doc.paths[`${EXPORTS}/{id}`];
    const download = doc.paths[`${EXPORTS}/{id}/download`];
    expect(list.get["x-required-ability"]).toBe("exports:read");
    expect(list.post["x-required-ability"]).toBe("exports:write");
    expect(one.get.operationId).toBe("getExport");
    expect(Object.keys(list.post.responses)).toEqual(expect.arrayContaining(["202", "409", "422"]));
    expect(list.post.responses["202"].headers.Location).toBeDefined();
    expect(list.post.parameters.map((p: any) => p.name)).toContain("Idempotency-Key");
    expect(Object.keys(download.get.responses)).toEqual(expect.arrayContaining(["200", "304", "409", "410"]));
    expect(Object.keys(download.get.responses["200"].content)).toEqual(["text/csv; charset=utf-8"]);
    // The 409's extension members, in its schema and its description.
    const conflict = download.get.responses["409"];
    expect(conflict.description).toContain("`export_status`");
    expect(conflict.content["application/problem+json"].schema).toEqual({
      $ref: "#/components/schemas/ExportConflictProblem",
    });
    const [base, extension] = doc.components.schemas.ExportConflictProblem.allOf;
    expect(base).toEqual({ $ref: "#/components/schemas/Problem" });
    expect(extension.properties.export_status.enum).toEqual(["queued", "processing", "failed"]);
    expect(extension.properties.progress.type).toBe("integer");
    expect(extension.required).toEqual(["export_status", "progress"]);
    expect(list.get.parameters.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(["page", "per_page", "status", "type"]),
    );
    for (const column of [
      "attempt_id",
      "xp_awarded",
      "progress_percent",
      "cefr_level",
      "lesson_title",
      "kind",
    ]) {
      expect(list.post.description).toContain(`\`${column}\``);
      expect(download.get.description).toContain(`\`${column}\``);
    }
    expect(doc.tags.map((t: any) => t.name)).toContain("Exports");
    for (const op of [list.get, list.post, one.get, download.get]) expect(op.tags).toEqual(["Exports"]);
  });
});
