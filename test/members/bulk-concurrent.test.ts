import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { users } from "../../src/db/schema";
import { parseMemberCsv } from "../../src/domains/members/bulk/csv";
import { findJob } from "../../src/domains/members/bulk/jobs";
import { runJob } from "../../src/domains/members/bulk/runner";
import { backgroundContext } from "../../src/platform/service/context";
import { overtakenAtEveryWrite, overtakenBy, renamedAtEveryWrite } from "../helpers/held-write";
import { createTenant, type Tenant } from "../helpers/tenants";
import { callJson, db, insertBulkJob, membersPath, memberUpdates, uploadCsv } from "./support";

/**
 * A bulk upload whose chunk another change of a member overtakes between the chunk's read and its
 * write: the chunk is planned again on the member as the other change left it, so the events chain;
 * a row that keeps losing is rejected as a row, and the others land.
 */

const CRLF = "\r\n";

/** A PATCH of a member by an admin (`token`), which must succeed. */
async function patched(token: string, path: string, body: Record<string, unknown>) {
  const { res, body: answer } = await callJson(path, { method: "PATCH", token, body });
  expect(res.status, JSON.stringify(answer)).toBe(200);
}

it("an upload overtaken by a PATCH applies its row to the member as the PATCH left it", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const path = `${membersPath(id)}/${tenant.learner.id}`;
  const before = (await callJson(path, { token: tenant.admin.token })).body;

  // The upload plans its chunk and is held before writing it, while an admin renames the member and
  // sets its external_id.
  const csv = `email,name,groups${CRLF}${tenant.learner.email},Ana Bulk,french${CRLF}`;
  const upload = await overtakenBy(
    (DB) => uploadCsv(tenant.admin.token, id, csv, "", { DB }),
    () => patched(tenant.admin.token, path, { name: "Bea Second", external_id: "SIS-2" }),
  );
  expect(upload.res.status, JSON.stringify(upload.body)).toBe(200);
  expect(upload.body.counts).toMatchObject({ updated: 1, rejected: 0 });

  const after = (await callJson(path, { token: tenant.admin.token })).body;
  expect(after).toMatchObject({ name: "Ana Bulk", external_id: "SIS-2", groups: ["french"] });
  expect(await memberUpdates(id, tenant.learner.id)).toEqual([
    { name: { from: before.name, to: "Bea Second" }, external_id: { from: before.external_id, to: "SIS-2" } },
    { name: { from: "Bea Second", to: "Ana Bulk" }, groups: { from: before.groups, to: ["french"] } },
  ]);
});

it("a row whose member changes at every attempt is rejected as a row; the other rows land", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const { binding, renames } = renamedAtEveryWrite(tenant.learner.id, "Moved");
  const csv = `email,name${CRLF}${tenant.learner.email},Ana Bulk${CRLF}${tenant.instructor.email},Ivo Bulk${CRLF}`;
  const upload = await uploadCsv(tenant.admin.token, id, csv, "", { DB: binding });
  expect(upload.res.status, JSON.stringify(upload.body)).toBe(200);
  expect(upload.body.counts).toMatchObject({ updated: 1, rejected: 1 });
  expect(upload.body.rows.map((r: any) => [r.line, r.outcome])).toEqual([
    [2, "rejected"],
    [3, "updated"],
  ]);
  expect(upload.body.rows[0].errors).toEqual([
    "conflict: the member kept changing while this row was applied (4 attempts); upload the row again",
  ]);
  const learner = (await callJson(`${membersPath(id)}/${tenant.learner.id}`, { token: tenant.admin.token }))
    .body;
  expect(learner.name).toBe(`Moved ${renames()}`);
  expect(await memberUpdates(id, tenant.learner.id)).toEqual([]);
  expect(await memberUpdates(id, tenant.instructor.id)).toEqual([
    { name: { from: "Test instructor", to: "Ivo Bulk" } },
  ]);
});

it("a sync overtaken by the suspension of an absent member does not suspend (or report) it again", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const path = `${membersPath(id)}/${tenant.learner.id}`;
  // Only the instructor (unchanged) is in the file: the learner is absent, to be suspended at the
  // end, while an admin suspends it first.
  const csv = `email${CRLF}${tenant.instructor.email}${CRLF}`;
  const sync = await overtakenBy(
    (DB) => uploadCsv(tenant.admin.token, id, csv, "mode=sync&force=true", { DB }),
    () => patched(tenant.admin.token, path, { status: "suspended" }),
  );
  expect(sync.res.status, JSON.stringify(sync.body)).toBe(200);
  expect(sync.body.counts).toMatchObject({ unchanged: 1, suspended: 0 });
  expect(await memberUpdates(id, tenant.learner.id)).toEqual([
    { status: { from: "active", to: "suspended" } },
  ]);
});

/** The tenant with a second active admin (its learner, promoted): the two admins U and A. */
async function twoAdmins(tenant: Tenant) {
  const id = tenant.institution.id;
  await patched(tenant.admin.token, `${membersPath(id)}/${tenant.learner.id}`, { role: "institution_admin" });
  return { u: tenant.admin, a: tenant.learner };
}

/** A member as an admin (A, the one left) reads it. */
async function memberOf(tenant: Tenant, userId: string) {
  return (await callJson(`${membersPath(tenant.institution.id)}/${userId}`, { token: tenant.learner.token }))
    .body;
}

it("an upload that demotes an admin while the other admin is demoted meanwhile rejects its row as last_admin", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const { u, a } = await twoAdmins(tenant);
  // The plan sees two admins and demotes A; held before its write, A demotes U (A still active: allowed).
  const csv = `email,role${CRLF}${a.email},learner${CRLF}`;
  const upload = await overtakenBy(
    (DB) => uploadCsv(u.token, id, csv, "", { DB }),
    () => patched(a.token, `${membersPath(id)}/${u.id}`, { role: "learner" }),
  );
  expect(upload.res.status, JSON.stringify(upload.body)).toBe(200);
  expect(upload.body.counts).toMatchObject({ updated: 0, rejected: 1 });
  expect(upload.body.rows[0].errors).toEqual([
    "last_admin: this would leave the institution without an active admin",
  ]);
  expect(await memberOf(tenant, a.id)).toMatchObject({ role: "institution_admin", status: "active" });
  expect(await memberOf(tenant, u.id)).toMatchObject({ role: "learner" });
  expect(await memberUpdates(id, a.id)).toEqual([{ role: { from: "learner", to: "institution_admin" } }]);
});

it("a sync does not suspend an absent admin when the other admin was demoted meanwhile", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const { u, a } = await twoAdmins(tenant);
  // A is absent from the file (U, the uploader, is kept): the sync's finish suspends A, counting two
  // admins; held before its write, A demotes U.
  const csv = `email${CRLF}${tenant.instructor.email}${CRLF}`;
  const sync = await overtakenBy(
    (DB) => uploadCsv(u.token, id, csv, "mode=sync&force=true", { DB }),
    () => patched(a.token, `${membersPath(id)}/${u.id}`, { role: "learner" }),
  );
  expect(sync.res.status, JSON.stringify(sync.body)).toBe(200);
  expect(sync.body.counts).toMatchObject({ unchanged: 1, suspended: 0 });
  expect(await memberOf(tenant, a.id)).toMatchObject({ role: "institution_admin", status: "active" });
  expect(await memberUpdates(id, a.id)).toEqual([{ role: { from: "learner", to: "institution_admin" } }]);
});

it("a sync suspends an absent member renamed before each of its attempts", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const { binding: DB, renames } = renamedAtEveryWrite(tenant.learner.id);
  const csv = `email${CRLF}${tenant.instructor.email}${CRLF}`;
  const sync = await uploadCsv(tenant.admin.token, id, csv, "mode=sync&force=true", { DB });
  expect(sync.res.status, JSON.stringify(sync.body)).toBe(200);
  expect(sync.body.counts).toMatchObject({ unchanged: 1, suspended: 1 });
  expect(renames()).toBe(1);
  expect(await memberUpdates(id, tenant.learner.id)).toEqual([
    { status: { from: "active", to: "suspended" } },
  ]);
});

it("a queued job whose chunk loses a race past its deadline hands over rather than retry", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  let clock = 1_000;
  let writes = 0;
  // The second chunk's write is overtaken (its member renamed) once the budget is spent.
  const DB = overtakenAtEveryWrite(env.DB, async () => {
    writes += 1;
    if (writes !== 2) return;
    clock = 10_000;
    await db().update(users).set({ name: "Moved" }).where(eq(users.id, tenant.instructor.id)).run();
  });
  const ctx = backgroundContext({ ...env, DB }, { waitUntil: () => undefined }, "queue", () => clock);
  const csv = `email,name${CRLF}${tenant.learner.email},Ana Bulk${CRLF}${tenant.instructor.email},Ivo Bulk${CRLF}`;
  const parsed = parseMemberCsv(new TextEncoder().encode(csv));
  const inserted = await insertBulkJob(id, tenant.admin.id, {
    header: ["email", "name"],
    totalRows: 2,
    leaseId: "lease_deadline",
    leaseUntil: 1_000_000,
  });
  const job = await findJob(ctx, inserted.id);
  if (!job) throw new Error("job not inserted");
  const outcome = await runJob(ctx, {
    job,
    parsed,
    options: { chunkRows: 1, deadline: 5_000, invitations: "defer", collect: false },
  });
  expect(outcome.state).toBe("continue");
  expect(outcome.job.nextRow).toBe(1);
  expect(writes).toBe(2);
  expect(await memberUpdates(id, tenant.instructor.id)).toEqual([]);
});
