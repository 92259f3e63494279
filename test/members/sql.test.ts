import { env } from "cloudflare:test";
import { and, asc, eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiTokens, bulkJobRows, invitations, memberGroups, users } from "../../src/db/schema";
import {
  ADVANCE,
  CHECKPOINT_GUARD,
  CLEAR_DUE,
  COMPLETE,
  DELETE_GROUPS,
  EMAILS_TAKEN,
  FINISH_GUARD,
  INSERT_GROUPS,
  INSERT_INVITATIONS,
  INSERT_REPORT,
  INSERT_USERS,
  type IndexedMemberRow,
  MEMBER_INDEX,
  MINT_DUE,
  type MintedDueRow,
  REISSUE_MARK,
  REISSUE_REVOKE,
  REISSUE_SKIPPED,
  REVOKE_TOKENS,
  type ReissuedRow,
  type ReissueSkippedRow,
  SEAT_GUARD,
  SUSPEND,
  type TakenEmailRow,
  UPDATE_USERS,
} from "../../src/domains/members/bulk/sql";
import { isBatchGuardFailure } from "../../src/platform/batch";
import {
  db,
  findBulkJob,
  insertBulkJob,
  insertInstitution,
  insertInvitation,
  insertLiveToken,
  insertMember,
  insertReportRow,
} from "./support";

const run = (sql: string, ...values: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...values)
    .run();

/** Whether running the guard alone fails as a batch guard does. */
async function guardFails(sql: string, ...values: unknown[]): Promise<boolean> {
  try {
    await env.DB.prepare(sql)
      .bind(...values)
      .first();
    return false;
  } catch (error) {
    if (isBatchGuardFailure(error)) return true;
    throw error;
  }
}

const usersOf = (institutionId: string) =>
  db().select().from(users).where(eq(users.institutionId, institutionId)).orderBy(asc(users.id)).all();

describe("the planner's reads", () => {
  it("MEMBER_INDEX reads every member of the institution with its groups in alphabetical order", async () => {
    const institution = await insertInstitution();
    const other = await insertInstitution();
    const ana = await insertMember(institution.id, { externalId: "SIS-1" }, ["french", "class-7b"]);
    const bo = await insertMember(institution.id, { role: "instructor", status: "invited" });
    await insertMember(other.id);
    const { results } = await env.DB.prepare(MEMBER_INDEX).bind(institution.id).all<IndexedMemberRow>();
    const byId = new Map(results.map((r) => [r.id, r]));
    expect(results).toHaveLength(2);
    expect(byId.get(ana.id)).toEqual({
      id: ana.id,
      email: ana.email,
      name: ana.name,
      role: "learner",
      status: "active",
      externalId: "SIS-1",
      groups: JSON.stringify(["class-7b", "french"]),
    });
    expect(byId.get(bo.id)).toMatchObject({ role: "instructor", status: "invited", groups: "[]" });
  });

  it("EMAILS_TAKEN answers which of the addresses belong to any account", async () => {
    const institution = await insertInstitution();
    const a = await insertMember(institution.id);
    const { results } = await env.DB.prepare(EMAILS_TAKEN)
      .bind(JSON.stringify([a.email, "nobody.here@school.test"]))
      .all<TakenEmailRow>();
    expect(results).toEqual([{ email: a.email }]);
  });
});

describe("a chunk's guards", () => {
  it("CHECKPOINT_GUARD passes only for a processing job at that checkpoint, held by that lease", async () => {
    const institution = await insertInstitution();
    const uploader = await insertMember(institution.id, { role: "institution_admin" });
    const job = await insertBulkJob(institution.id, uploader.id, { nextRow: 4, leaseId: "lse_a" });
    expect(await guardFails(CHECKPOINT_GUARD, job.id, 4, "lse_a")).toBe(false);
    expect(await guardFails(CHECKPOINT_GUARD, job.id, 0, "lse_a")).toBe(true);
    expect(await guardFails(CHECKPOINT_GUARD, job.id, 4, "lse_b")).toBe(true);
    const done = await insertBulkJob(institution.id, uploader.id, {
      nextRow: 4,
      status: "completed",
      leaseId: "lse_a",
    });
    expect(await guardFails(CHECKPOINT_GUARD, done.id, 4, "lse_a")).toBe(true);
  });

  it("SEAT_GUARD fails once invited and active members outnumber the seats, never without seats", async () => {
    const limited = await insertInstitution(2);
    await insertMember(limited.id);
    await insertMember(limited.id, { status: "invited" });
    await insertMember(limited.id, { status: "suspended" });
    expect(await guardFails(SEAT_GUARD, limited.id)).toBe(false);
    await insertMember(limited.id, { status: "invited" });
    expect(await guardFails(SEAT_GUARD, limited.id)).toBe(true);
    const unlimited = await insertInstitution(null);
    for (let i = 0; i < 3; i++) await insertMember(unlimited.id);
    expect(await guardFails(SEAT_GUARD, unlimited.id)).toBe(false);
  });
});

describe("a chunk's writes", () => {
  it("INSERT_USERS inserts the array's members into the institution with the given hash and time", async () => {
    const institution = await insertInstitution();
    const rows = [
      {
        id: "usr_sql_a",
        email: "sql.a@school.test",
        name: "A",
        role: "learner",
        status: "invited",
        external_id: "X1",
      },
      {
        id: "usr_sql_b",
        email: "sql.b@school.test",
        name: "B",
        role: "instructor",
        status: "suspended",
        external_id: null,
      },
    ].map((r) => ({ ...r, id: `${r.id}_${institution.id}`, email: `${institution.id}.${r.email}` }));
    const result = await run(
      INSERT_USERS,
      JSON.stringify(rows),
      institution.id,
      "decoy",
      "2026-05-01T00:00:00Z",
    );
    // D1's meta.changes also counts what the analytics triggers write (member counts): the rows are checked instead.
    expect(result.success).toBe(true);
    const stored = await usersOf(institution.id);
    expect(stored.map((u) => [u.id, u.email, u.name, u.role, u.status, u.externalId])).toEqual(
      rows.map((r) => [r.id, r.email, r.name, r.role, r.status, r.external_id]),
    );
    expect(stored.every((u) => u.passwordHash === "decoy" && u.createdAt === "2026-05-01T00:00:00Z")).toBe(
      true,
    );
    expect(stored.every((u) => u.updatedAt === "2026-05-01T00:00:00Z")).toBe(true);
  });

  it("INSERT_INVITATIONS inserts an open invitation per member of the array", async () => {
    const institution = await insertInstitution();
    const member = await insertMember(institution.id, { status: "invited" });
    const rows = [{ id: member.id, hash: `hash_${member.id}`, expires_at: "2026-05-08T00:00:00Z" }];
    await run(INSERT_INVITATIONS, JSON.stringify(rows), institution.id, "2026-05-01T00:00:00Z");
    const stored = await db().select().from(invitations).where(eq(invitations.userId, member.id)).get();
    expect(stored).toEqual({
      userId: member.id,
      institutionId: institution.id,
      tokenHash: `hash_${member.id}`,
      expiresAt: "2026-05-08T00:00:00Z",
      acceptedAt: null,
      createdAt: "2026-05-01T00:00:00Z",
    });
  });

  it("UPDATE_USERS sets the array's fields on the institution's members only", async () => {
    const institution = await insertInstitution();
    const other = await insertInstitution();
    const mine = await insertMember(institution.id);
    const theirs = await insertMember(other.id);
    const change = (id: string) => ({
      id,
      email: `new.${id}@school.test`,
      name: "Renamed",
      role: "instructor",
      status: "suspended",
      external_id: `EXT-${id}`,
    });
    const result = await run(
      UPDATE_USERS,
      JSON.stringify([change(mine.id), change(theirs.id)]),
      institution.id,
      "2026-06-01T00:00:00Z",
    );
    // D1's meta.changes also counts what the analytics triggers write (member counts): the rows are checked instead.
    expect(result.success).toBe(true);
    const [updated] = await usersOf(institution.id);
    expect(updated).toMatchObject({
      email: `new.${mine.id}@school.test`,
      name: "Renamed",
      role: "instructor",
      status: "suspended",
      externalId: `EXT-${mine.id}`,
      updatedAt: "2026-06-01T00:00:00Z",
    });
    const [untouched] = await usersOf(other.id);
    expect(untouched).toMatchObject({ email: theirs.email, name: theirs.name });
  });

  it("DELETE_GROUPS and INSERT_GROUPS replace the groups of the array's members", async () => {
    const institution = await insertInstitution();
    const a = await insertMember(institution.id, {}, ["old", "older"]);
    const b = await insertMember(institution.id, {}, ["kept"]);
    await run(DELETE_GROUPS, JSON.stringify([a.id]));
    await run(
      INSERT_GROUPS,
      JSON.stringify([
        [a.id, "new"],
        [a.id, "newer"],
      ]),
      institution.id,
    );
    const groups = await db()
      .select({
        userId: memberGroups.userId,
        group: memberGroups.groupName,
        institutionId: memberGroups.institutionId,
      })
      .from(memberGroups)
      .where(eq(memberGroups.institutionId, institution.id))
      .orderBy(asc(memberGroups.userId), asc(memberGroups.groupName))
      .all();
    expect(groups).toEqual(
      [
        { userId: a.id, group: "new", institutionId: institution.id },
        { userId: a.id, group: "newer", institutionId: institution.id },
        { userId: b.id, group: "kept", institutionId: institution.id },
      ].sort((x, y) => (x.userId === y.userId ? 0 : x.userId < y.userId ? -1 : 1)),
    );
  });

  it("REVOKE_TOKENS revokes the live tokens of the array's users, and no others", async () => {
    const institution = await insertInstitution();
    const a = await insertMember(institution.id);
    const b = await insertMember(institution.id);
    const aToken = await insertLiveToken(a.id, institution.id);
    const bToken = await insertLiveToken(b.id, institution.id);
    const result = await run(REVOKE_TOKENS, JSON.stringify([a.id]), "2026-06-02T00:00:00Z");
    expect(result.meta.changes).toBe(1);
    const revokedAt = async (id: string) =>
      (await db().select({ at: apiTokens.revokedAt }).from(apiTokens).where(eq(apiTokens.id, id)).get())?.at;
    expect(await revokedAt(aToken.id)).toBe("2026-06-02T00:00:00Z");
    expect(await revokedAt(bToken.id)).toBeNull();
  });

  it("INSERT_REPORT writes the job's report rows once, errors and cells as JSON", async () => {
    const institution = await insertInstitution();
    const uploader = await insertMember(institution.id, { role: "institution_admin" });
    const job = await insertBulkJob(institution.id, uploader.id);
    const report = [
      {
        line: 2,
        email: "a@x.test",
        external_id: "E1",
        outcome: "created",
        errors: [],
        user_id: "usr_1",
        due: 1,
        cells: null,
      },
      {
        line: 3,
        email: null,
        external_id: null,
        outcome: "rejected",
        errors: ["email: missing"],
        user_id: null,
        due: 0,
        cells: ["", "B"],
      },
    ];
    await run(INSERT_REPORT, JSON.stringify(report), job.id);
    await run(INSERT_REPORT, JSON.stringify([{ ...report[0], outcome: "unchanged" }]), job.id);
    const rows = await db()
      .select()
      .from(bulkJobRows)
      .where(eq(bulkJobRows.jobId, job.id))
      .orderBy(asc(bulkJobRows.line))
      .all();
    expect(rows).toEqual([
      {
        jobId: job.id,
        line: 2,
        email: "a@x.test",
        externalId: "E1",
        outcome: "created",
        errors: [],
        cells: null,
        userId: "usr_1",
        invitationDue: true,
      },
      {
        jobId: job.id,
        line: 3,
        email: null,
        externalId: null,
        outcome: "rejected",
        errors: ["email: missing"],
        cells: ["", "B"],
        userId: null,
        invitationDue: false,
      },
    ]);
  });

  it("ADVANCE moves the checkpoint, adds the counts and renews the lease only from the expected checkpoint", async () => {
    const institution = await insertInstitution();
    const uploader = await insertMember(institution.id, { role: "institution_admin" });
    const job = await insertBulkJob(institution.id, uploader.id, { nextRow: 0, leaseUntil: 1 });
    expect((await run(ADVANCE, job.id, 0, 5, 1, 2, 1, 1, 12345, 102345)).meta.changes).toBe(1);
    expect((await run(ADVANCE, job.id, 0, 10, 9, 9, 9, 9, 99999, 199999)).meta.changes).toBe(0);
    expect(await findBulkJob(job.id)).toMatchObject({
      nextRow: 5,
      created: 1,
      updated: 2,
      unchanged: 1,
      rejected: 1,
      heartbeatAt: 12345,
      leaseUntil: 102345,
    });
  });
});

describe("finishing a job", () => {
  it("FINISH_GUARD passes only for a processing job with every row applied, held by that lease", async () => {
    const institution = await insertInstitution();
    const uploader = await insertMember(institution.id, { role: "institution_admin" });
    const lease = { leaseId: "lse_a" };
    const atEnd = await insertBulkJob(institution.id, uploader.id, { totalRows: 3, nextRow: 3, ...lease });
    expect(await guardFails(FINISH_GUARD, atEnd.id, "lse_a")).toBe(false);
    expect(await guardFails(FINISH_GUARD, atEnd.id, "lse_b")).toBe(true);
    await run(COMPLETE, atEnd.id, 0, "2026-06-04T00:00:00Z", 1);
    expect(await guardFails(FINISH_GUARD, atEnd.id, "lse_a")).toBe(true);
    const behind = await insertBulkJob(institution.id, uploader.id, { totalRows: 3, nextRow: 2, ...lease });
    expect(await guardFails(FINISH_GUARD, behind.id, "lse_a")).toBe(true);
  });

  it("SUSPEND suspends the array's invited and active members of the institution", async () => {
    const institution = await insertInstitution();
    const other = await insertInstitution();
    const active = await insertMember(institution.id);
    const invited = await insertMember(institution.id, { status: "invited" });
    const elsewhere = await insertMember(other.id);
    const result = await run(
      SUSPEND,
      JSON.stringify([active.id, invited.id, elsewhere.id]),
      institution.id,
      "2026-06-03T00:00:00Z",
    );
    expect(result.meta.changes).toBe(2);
    expect((await usersOf(institution.id)).map((u) => [u.status, u.updatedAt])).toEqual([
      ["suspended", "2026-06-03T00:00:00Z"],
      ["suspended", "2026-06-03T00:00:00Z"],
    ]);
    expect((await usersOf(other.id))[0]?.status).toBe("active");
  });

  it("COMPLETE completes a processing job with its suspended count and forgets its file and lease", async () => {
    const institution = await insertInstitution();
    const uploader = await insertMember(institution.id, { role: "institution_admin" });
    const job = await insertBulkJob(institution.id, uploader.id, {
      r2Key: "bulk/x.json",
      leaseId: "lse_a",
      leaseUntil: 5,
    });
    expect((await run(COMPLETE, job.id, 4, "2026-06-04T00:00:00Z", 777)).meta.changes).toBe(1);
    expect(await findBulkJob(job.id)).toMatchObject({
      status: "completed",
      suspended: 4,
      completedAt: "2026-06-04T00:00:00Z",
      heartbeatAt: 777,
      r2Key: null,
      leaseId: null,
      leaseUntil: null,
    });
    expect((await run(COMPLETE, job.id, 9, "2026-06-05T00:00:00Z", 778)).meta.changes).toBe(0);
  });
});

describe("a queued upload's invitations on first read", () => {
  async function dueRow() {
    const institution = await insertInstitution();
    const uploader = await insertMember(institution.id, { role: "institution_admin" });
    const job = await insertBulkJob(institution.id, uploader.id, { status: "completed" });
    const learner = await insertMember(institution.id, { status: "invited" });
    const admin = await insertMember(institution.id, { status: "invited", role: "institution_admin" });
    await insertReportRow(job.id, { line: 2, userId: learner.id, invitationDue: true });
    await insertReportRow(job.id, { line: 3, userId: admin.id, invitationDue: true });
    return { institution, job, learner, admin };
  }
  const mint = (
    institutionId: string,
    jobId: string,
    members: { line: number; id: string }[],
    roles: string[],
  ) =>
    env.DB.prepare(MINT_DUE)
      .bind(
        JSON.stringify(
          members.map((m) => ({
            line: m.line,
            user_id: m.id,
            hash: `h_${m.id}`,
            expires_at: "2099-01-01T00:00:00Z",
          })),
        ),
        institutionId,
        "2026-06-06T00:00:00Z",
        jobId,
        JSON.stringify(roles),
      )
      .all<MintedDueRow>();

  it("MINT_DUE inserts invitations only for due rows of invited members with an allowed role and none yet", async () => {
    const { institution, job, learner, admin } = await dueRow();
    const { results } = await mint(
      institution.id,
      job.id,
      [
        { line: 2, id: learner.id },
        { line: 3, id: admin.id },
      ],
      ["learner", "instructor"],
    );
    expect(results).toEqual([{ user_id: learner.id }]);
    const stored = await db()
      .select()
      .from(invitations)
      .where(eq(invitations.institutionId, institution.id))
      .all();
    expect(stored).toEqual([
      {
        userId: learner.id,
        institutionId: institution.id,
        tokenHash: `h_${learner.id}`,
        expiresAt: "2099-01-01T00:00:00Z",
        acceptedAt: null,
        createdAt: "2026-06-06T00:00:00Z",
      },
    ]);
    // An invitation already there (a re-invite in between) wins.
    const again = await mint(institution.id, job.id, [{ line: 2, id: learner.id }], ["learner"]);
    expect(again.results).toEqual([]);
  });

  it("CLEAR_DUE clears the lines' due flags, except for members whose role the reader may not grant", async () => {
    const { job, learner, admin } = await dueRow();
    await run(CLEAR_DUE, job.id, JSON.stringify([2, 3]), JSON.stringify(["learner", "instructor"]));
    const rows = await db()
      .select({ line: bulkJobRows.line, due: bulkJobRows.invitationDue, userId: bulkJobRows.userId })
      .from(bulkJobRows)
      .where(eq(bulkJobRows.jobId, job.id))
      .orderBy(asc(bulkJobRows.line))
      .all();
    expect(rows).toEqual([
      { line: 2, due: false, userId: learner.id },
      { line: 3, due: true, userId: admin.id },
    ]);
  });

  /** A finished job of a fresh institution whose rows created one member of each kind the re-issue tells apart. */
  async function reissueFixture() {
    const institution = await insertInstitution();
    const other = await insertInstitution();
    const uploader = await insertMember(institution.id, { role: "institution_admin" });
    const job = await insertBulkJob(institution.id, uploader.id, { status: "completed" });
    const invited = await insertMember(institution.id, { status: "invited" });
    const invitedAdmin = await insertMember(institution.id, { status: "invited", role: "institution_admin" });
    const active = await insertMember(institution.id, { status: "active" });
    const suspended = await insertMember(institution.id, { status: "suspended" });
    const removed = await insertMember(other.id, { status: "invited" });
    const members = [invited, invitedAdmin, active, suspended, removed];
    for (const [i, m] of members.entries()) await insertReportRow(job.id, { line: i + 2, userId: m.id });
    // Another job's row of the same invited member, and a row of this job that updated (not created) one.
    const otherJob = await insertBulkJob(institution.id, uploader.id, { status: "completed" });
    await insertReportRow(otherJob.id, { line: 2, userId: invited.id });
    await insertReportRow(job.id, { line: 9, userId: invited.id, outcome: "updated" });
    await insertInvitation(invited.id, institution.id);
    await insertInvitation(invitedAdmin.id, institution.id);
    await insertInvitation(active.id, institution.id, { acceptedAt: "2026-01-02T00:00:00Z" });
    return { institution, job, otherJob, invited, invitedAdmin, active };
  }

  it("REISSUE_MARK marks due again the created rows of invited members with an allowed role, returning them", async () => {
    const { institution, job, otherJob, invited } = await reissueFixture();
    const { results } = await env.DB.prepare(REISSUE_MARK)
      .bind(job.id, institution.id, JSON.stringify(["learner", "instructor"]))
      .all<ReissuedRow>();
    expect(results).toEqual([{ line: 2, user_id: invited.id }]);
    const due = await db()
      .select({ jobId: bulkJobRows.jobId, line: bulkJobRows.line })
      .from(bulkJobRows)
      .where(and(inArray(bulkJobRows.jobId, [job.id, otherJob.id]), eq(bulkJobRows.invitationDue, true)))
      .all();
    expect(due).toEqual([{ jobId: job.id, line: 2 }]);
  });

  it("REISSUE_REVOKE deletes the open invitations of the members REISSUE_MARK marks, and no others", async () => {
    const { institution, job, invitedAdmin, active } = await reissueFixture();
    await run(REISSUE_REVOKE, job.id, institution.id, JSON.stringify(["learner", "instructor"]));
    const left = await db()
      .select({ userId: invitations.userId })
      .from(invitations)
      .where(eq(invitations.institutionId, institution.id))
      .all();
    expect(left.map((r) => r.userId).sort()).toEqual([active.id, invitedAdmin.id].sort());
  });

  it("REISSUE_SKIPPED counts the created members left alone: removed, accepted, suspended, role above", async () => {
    const { institution, job } = await reissueFixture();
    const skipped = await env.DB.prepare(REISSUE_SKIPPED)
      .bind(job.id, institution.id, JSON.stringify(["learner", "instructor"]))
      .first<ReissueSkippedRow>();
    expect(skipped).toEqual({ removed: 1, accepted: 1, suspended: 1, role_above_yours: 1 });
    const none = await env.DB.prepare(REISSUE_SKIPPED)
      .bind("blk_none", institution.id, JSON.stringify(["learner"]))
      .first<ReissueSkippedRow>();
    expect(none).toEqual({ removed: 0, accepted: 0, suspended: 0, role_above_yours: 0 });
  });
});
