import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  attempts,
  courses,
  courseTags,
  directoryKeys,
  idempotencyKeys,
  institutionDatabases,
  institutions,
  ssoDomains,
  users,
} from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { runSweeps } from "../../src/scheduled";
import { Browser, csrfOf, textOf } from "../dashboard/support";
import { call, callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import { receiverEndpoint } from "../helpers/receiver";
import { createPlatformAdmin, createTenant, mintToken, type Tenant } from "../helpers/tenants";
import { acceptInvitation, invitationToken } from "../members/support";
import { createWebhook } from "../webhooks/support";

/**
 * Institutions over several D1 databases (docs/design/multi-database.md): Acme lives in DB, Globex in
 * DB_1. Each works as if it were alone; what Globex writes is in DB_1 only; its tokens and e-mails
 * are found through DB's directory; its queue work and sweeps run in DB_1.
 */
let acme: Tenant;
let globex: Tenant;

beforeAll(async () => {
  [acme, globex] = await Promise.all([createTenant(), createTenant({ database: "DB_1" })]);
});

const inDb = (name: "DB" | "DB_1") => database(env[name]);

describe("an institution in DB_1", () => {
  it("lives there, and DB's directory says so", async () => {
    expect(
      await inDb("DB_1").select().from(institutions).where(eq(institutions.id, globex.institution.id)).get(),
    ).toBeDefined();
    expect(
      await inDb("DB").select().from(institutions).where(eq(institutions.id, globex.institution.id)).get(),
    ).toBeUndefined();
    expect(await inDb("DB").select().from(users).where(eq(users.id, globex.admin.id)).get()).toBeUndefined();
  });

  it("signs in by e-mail and password: the session is found through its directory key", async () => {
    // createTenant signed each member in over HTTP; the session token's key is in DB, the token in DB_1.
    const key = await inDb("DB")
      .select()
      .from(directoryKeys)
      .where(eq(directoryKeys.institutionId, globex.institution.id))
      .all();
    expect(key.filter((k) => k.kind === "email")).toHaveLength(3);
    expect(key.filter((k) => k.kind === "token").length).toBeGreaterThanOrEqual(3);
    const { res, body } = await callJson("/api/auth/me", { token: globex.admin.token });
    expect(res.status).toBe(200);
    expect(body.user.id).toBe(globex.admin.id);
    expect(body.institution.id).toBe(globex.institution.id);
  });

  it("answers bookmarks of DB_1, and reads its own writes when the bookmark is sent back", async () => {
    const res = await call(`/api/institutions/${globex.institution.id}/members`, {
      token: globex.admin.token,
    });
    const bookmark = res.headers.get("X-D1-Bookmark");
    expect(bookmark).toMatch(/^DB_1:[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/);
    const again = await call(`/api/institutions/${globex.institution.id}/members`, {
      token: globex.admin.token,
      headers: { "X-D1-Bookmark": bookmark as string },
    });
    expect(again.status).toBe(200);
    expect((again.headers.get("X-D1-Bookmark") ?? "").startsWith("DB_1:")).toBe(true);
    // Acme's answers keep the bare bookmark of DB.
    const acmes = await call(`/api/institutions/${acme.institution.id}/members`, { token: acme.admin.token });
    expect(acmes.headers.get("X-D1-Bookmark")).toMatch(/^[0-9a-f]{8}-/);
  });

  it("refuses a bookmark of a database this deployment does not have", async () => {
    const res = await call("/api/integrations/tokens", {
      token: globex.admin.token,
      headers: { "X-D1-Bookmark": "DB_7:00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683" },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_bookmark");
  });

  it("mints API tokens that work, and lists only its own", async () => {
    const minted = await mintToken(globex.admin, ["members:read"]);
    const { res, body } = await callJson(`/api/institutions/${globex.institution.id}/members`, {
      token: minted.token,
    });
    expect(res.status).toBe(200);
    const ids = body.data.map((m: { id: string }) => m.id).sort();
    expect(ids).toEqual([globex.admin.id, globex.instructor.id, globex.learner.id].sort());
    const other = await call(`/api/institutions/${acme.institution.id}/members`, {
      token: minted.token,
    });
    expect(other.status).toBe(404);
  });

  it("records attempts in DB_1 only, and its webhooks receive the events (queues run in DB_1)", async () => {
    const receiver = receiverEndpoint();
    const hook = await createWebhook(globex.admin, { url: receiver.url, events: ["lesson.completed"] });
    await receiver.configure({ secrets: [hook.secret] });
    const course = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 2,
      databases: ["DB", "DB_1"],
    });
    const occurredAt = new Date(Date.now() - 60_000).toISOString();
    const sent = course.items.map((id) => ({
      id: crypto.randomUUID(),
      training_item_id: id,
      score: 1,
      correct: true,
      duration_seconds: 20,
      occurred_at: occurredAt,
    }));
    const { res, body } = await callJson("/api/progress/attempts", {
      token: globex.learner.token,
      body: { attempts: sent },
    });
    expect(res.status).toBe(200);
    expect(body.summary.events.map((e: { type: string }) => e.type)).toContain("lesson.completed");
    const ids = sent.map((a) => a.id);
    const there = await inDb("DB_1")
      .select({ id: attempts.id })
      .from(attempts)
      .where(eq(attempts.userId, globex.learner.id))
      .all();
    expect(there.map((a) => a.id).sort()).toEqual([...ids].sort());
    expect(
      await inDb("DB").select().from(attempts).where(eq(attempts.userId, globex.learner.id)).all(),
    ).toEqual([]);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.standard_valid).toEqual([true]);
    expect(JSON.parse(delivery?.body ?? "{}").type).toBe("lesson.completed");
  });

  it("counts its activity in the platform statistics, summed over every database", async () => {
    const staff = await createPlatformAdmin();
    const stats = async () =>
      (await callJson("/api/stats", { token: staff.token })).body as { activity: { attempts: number } };
    const before = (await stats()).activity.attempts;
    const course = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 3,
      databases: ["DB", "DB_1"],
    });
    const occurredAt = new Date(Date.now() - 60_000).toISOString();
    const record = (learner: Tenant["learner"], items: string[]) =>
      callJson("/api/progress/attempts", {
        token: learner.token,
        body: {
          attempts: items.map((id) => ({
            id: crypto.randomUUID(),
            training_item_id: id,
            score: 1,
            correct: true,
            duration_seconds: 5,
            occurred_at: occurredAt,
          })),
        },
      });
    expect((await record(globex.learner, course.items)).res.status).toBe(200);
    expect((await record(acme.learner, course.items.slice(0, 2))).res.status).toBe(200);
    expect((await stats()).activity.attempts - before).toBe(5);
  });

  it("sees the catalogue as staff edit it: an edit made in DB is copied to every database", async () => {
    const staff = await createPlatformAdmin();
    const course = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 1,
      databases: ["DB", "DB_1"],
    });
    const { res } = await callJson(`/api/courses/${course.courseId}`, {
      method: "PATCH",
      token: staff.token,
      body: { title: "Renamed everywhere", tags: ["travel", "business"] },
    });
    expect(res.status).toBe(200);
    for (const name of ["DB", "DB_1"] as const) {
      const row = await inDb(name).select().from(courses).where(eq(courses.id, course.courseId)).get();
      expect(row?.title).toBe("Renamed everywhere");
      const tags = await inDb(name)
        .select()
        .from(courseTags)
        .where(eq(courseTags.courseId, course.courseId))
        .all();
      expect(tags.map((t) => t.tag).sort()).toEqual(["business", "travel"]);
    }
    // Globex's learners read the edit from DB_1.
    const seen = await callJson(`/api/courses/${course.courseId}`, { token: globex.learner.token });
    expect(seen.body.title).toBe("Renamed everywhere");
  });

  it("keeps an e-mail address unique across databases, both ways, and changes nothing when refusing", async () => {
    const invite = (tenant: Tenant, email: string) =>
      callJson(`/api/institutions/${tenant.institution.id}/members`, {
        token: tenant.admin.token,
        body: { email, name: "Someone", role: "learner" },
      });
    // An address of DB (Acme's learner) cannot be given to a member in DB_1, and no key is left.
    const intoGlobex = await invite(globex, acme.learner.email);
    expect(intoGlobex.res.status).toBe(409);
    expect(intoGlobex.body.code).toBe("email_taken");
    expect(
      await inDb("DB").select().from(directoryKeys).where(eq(directoryKeys.key, acme.learner.email)).all(),
    ).toEqual([]);
    // An address of DB_1 (Globex's learner, found by its key) cannot be given to a member in DB.
    const intoAcme = await invite(acme, globex.learner.email);
    expect(intoAcme.res.status).toBe(409);
    expect(intoAcme.body.code).toBe("email_taken");
    expect(await inDb("DB").select().from(users).where(eq(users.email, globex.learner.email)).all()).toEqual(
      [],
    );
    // A fresh address: the member lives in DB_1, its address is claimed in DB.
    const fresh = `fresh.${crypto.randomUUID()}@example.test`;
    const created = await invite(globex, fresh);
    expect(created.res.status).toBe(201);
    expect(
      await inDb("DB_1").select({ id: users.id }).from(users).where(eq(users.email, fresh)).get(),
    ).toEqual({
      id: created.body.id,
    });
    const [key] = await inDb("DB").select().from(directoryKeys).where(eq(directoryKeys.key, fresh)).all();
    expect(key?.institutionId).toBe(globex.institution.id);
    expect((await invite(acme, fresh)).body.code).toBe("email_taken");
  });

  it("lets a member invited in DB_1 accept the invitation: its token names the institution", async () => {
    const email = `invited.${crypto.randomUUID()}@example.test`;
    const invited = await callJson(`/api/institutions/${globex.institution.id}/members`, {
      token: globex.admin.token,
      body: { email, name: "Invited", role: "learner" },
    });
    expect(invited.res.status).toBe(201);
    const token = invitationToken(invited.body.invitation_url);
    expect(token.startsWith(`inv_${globex.institution.id}.`)).toBe(true);
    const accepted = await acceptInvitation(token);
    expect(accepted.res.status).toBe(200);
    const me = await callJson("/api/auth/me", { token: accepted.body.token });
    expect(me.body.user.email).toBe(email);
    expect(me.body.institution.id).toBe(globex.institution.id);
    const row = await inDb("DB_1")
      .select({ status: users.status })
      .from(users)
      .where(eq(users.email, email))
      .get();
    expect(row?.status).toBe("active");
    // Once only, as in DB.
    expect((await acceptInvitation(token)).body.code).toBe("invalid_invitation");
  });

  it("takes over an address whose key leads to no member (a write that failed after its claim)", async () => {
    const other = await createTenant({ database: "DB_1" });
    const orphan = `orphan.${crypto.randomUUID()}@example.test`;
    await inDb("DB")
      .insert(directoryKeys)
      .values({ kind: "email", key: orphan, institutionId: globex.institution.id });
    const { res, body } = await callJson(`/api/institutions/${other.institution.id}/members`, {
      token: other.admin.token,
      body: { email: orphan, name: "Claimed again", role: "learner" },
    });
    expect(res.status).toBe(201);
    const [key] = await inDb("DB").select().from(directoryKeys).where(eq(directoryKeys.key, orphan)).all();
    expect(key?.institutionId).toBe(other.institution.id);
    expect(body.email).toBe(orphan);
  });

  it("runs every sweep in each database", async () => {
    const old = Date.now() - 3 * 86_400_000;
    for (const name of ["DB", "DB_1"] as const)
      await inDb(name)
        .insert(idempotencyKeys)
        .values({
          scope: "test",
          key: `old-${name}`,
          method: "POST",
          path: "/x",
          requestHash: "x",
          lockedUntil: old,
          createdAt: old,
          expiresAt: old + 1000,
        });
    const execution = createExecutionContext();
    await runSweeps(env, execution);
    await waitOnExecutionContext(execution);
    for (const name of ["DB", "DB_1"] as const)
      expect(
        await inDb(name)
          .select()
          .from(idempotencyKeys)
          .where(eq(idempotencyKeys.key, `old-${name}`))
          .all(),
      ).toEqual([]);
  });
});

describe("placing a new institution (POST /api/institutions)", () => {
  let staff: Awaited<ReturnType<typeof createPlatformAdmin>>;
  beforeAll(async () => {
    staff = await createPlatformAdmin();
  });

  const create = (body: Record<string, unknown>) =>
    callJson("/api/institutions", {
      token: staff.token,
      body: { name: "Placed", slug: `placed-${crypto.randomUUID().slice(0, 8)}`, plan: "pro", ...body },
    });
  const sizeOf = async (name: "DB" | "DB_1") =>
    Number((await env[name].prepare("SELECT 1").run()).meta.size_after);
  const livesIn = async (id: string) => {
    const found: string[] = [];
    for (const name of ["DB", "DB_1"] as const)
      if (await inDb(name).select().from(institutions).where(eq(institutions.id, id)).get()) found.push(name);
    return found;
  };
  /** Some 256 KB of rows in `name`, so that it reports itself the fuller. */
  const fill = async (name: "DB" | "DB_1") => {
    const now = Date.now();
    for (let i = 0; i < 4; i++)
      await inDb(name)
        .insert(idempotencyKeys)
        .values(
          Array.from({ length: 8 }, (_, j) => ({
            scope: "fill",
            key: crypto.randomUUID(),
            method: "POST",
            path: "/fill",
            requestHash: "x".repeat(8_000 + i + j),
            lockedUntil: now,
            createdAt: now,
            expiresAt: now + 86_400_000,
          })),
        );
  };

  it("goes to the least full database by D1's reported size, and says where in `database`", async () => {
    const used = new Set<string>();
    for (let round = 0; round < 2; round++) {
      const [db, db1] = [await sizeOf("DB"), await sizeOf("DB_1")];
      const expected = db1 < db ? "DB_1" : "DB";
      const { res, body } = await create({});
      expect(res.status).toBe(201);
      expect(body.database).toBe(expected);
      expect(await livesIn(body.id)).toEqual([expected]);
      const [placement] = await inDb("DB")
        .select()
        .from(institutionDatabases)
        .where(eq(institutionDatabases.institutionId, body.id))
        .all();
      // DB needs no directory entry; any other database has one.
      expect(placement?.binding).toBe(expected === "DB" ? undefined : expected);
      used.add(body.database);
      // The one just chosen becomes the fuller: the next goes to the other.
      while ((await sizeOf(expected)) <= (await sizeOf(expected === "DB" ? "DB_1" : "DB")))
        await fill(expected);
    }
    expect([...used].sort()).toEqual(["DB", "DB_1"]);
  });

  it("goes where staff say with `database`; a database not bound is 422 and creates nothing", async () => {
    for (const database of ["DB", "DB_1"] as const) {
      const { res, body } = await create({ database });
      expect(res.status).toBe(201);
      expect(body.database).toBe(database);
      expect(await livesIn(body.id)).toEqual([database]);
    }
    const slug = `nowhere-${crypto.randomUUID().slice(0, 8)}`;
    for (const database of ["DB_7", "db1"]) {
      const { res, body } = await create({ database, slug });
      expect(res.status).toBe(422);
      expect(body.errors.map((e: { path: string }) => e.path)).toEqual(["database"]);
    }
    for (const name of ["DB", "DB_1"] as const)
      expect(await inDb(name).select().from(institutions).where(eq(institutions.slug, slug)).all()).toEqual(
        [],
      );
  });

  it("keeps a slug unique across databases, both ways, and leaves no entry or key when refusing", async () => {
    const slug = `twin-${crypto.randomUUID().slice(0, 8)}`;
    const first = await create({ slug, database: "DB_1" });
    expect(first.res.status).toBe(201);
    const again = await create({ slug, database: "DB" });
    expect(again.res.status).toBe(409);
    expect(again.body.code).toBe("slug_taken");
    const other = `twin-${crypto.randomUUID().slice(0, 8)}`;
    expect((await create({ slug: other, database: "DB" })).res.status).toBe(201);
    const adminEmail = `twin.${crypto.randomUUID()}@example.test`;
    const refused = await create({
      slug: other,
      database: "DB_1",
      admin: { email: adminEmail, name: "Twin Admin" },
    });
    expect(refused.res.status).toBe(409);
    expect(refused.body.code).toBe("slug_taken");
    // Neither its slug's key nor its admin's address is left claimed, nor a directory entry.
    for (const key of [other, adminEmail])
      expect(await inDb("DB").select().from(directoryKeys).where(eq(directoryKeys.key, key)).all()).toEqual(
        [],
      );
    const entries = await inDb("DB").select().from(institutionDatabases).all();
    for (const entry of entries) expect(await livesIn(entry.institutionId)).toEqual([entry.binding]);
    expect(entries.map((e) => e.institutionId)).toContain(first.body.id);
  });

  it("is fully usable in DB_1: its admin signs in, invites a member, mints a token, records attempts", async () => {
    const adminEmail = `placed.admin.${crypto.randomUUID()}@example.test`;
    const created = await create({ database: "DB_1", admin: { email: adminEmail, name: "Placed Admin" } });
    expect(created.res.status).toBe(201);
    const institutionId = created.body.id;
    const accepted = await acceptInvitation(invitationToken(created.body.admin.invitation_url));
    expect(accepted.res.status).toBe(200);
    const adminToken = accepted.body.token;
    const learnerEmail = `placed.learner.${crypto.randomUUID()}@example.test`;
    const invited = await callJson(`/api/institutions/${institutionId}/members`, {
      token: adminToken,
      body: { email: learnerEmail, name: "Placed Learner", role: "learner" },
    });
    expect(invited.res.status).toBe(201);
    const learner = await acceptInvitation(invitationToken(invited.body.invitation_url));
    expect(learner.res.status).toBe(200);
    const minted = await callJson("/api/integrations/tokens", {
      token: adminToken,
      body: { name: "placed", abilities: ["members:read"] },
    });
    expect(minted.res.status).toBe(201);
    const members = await callJson(`/api/institutions/${institutionId}/members`, {
      token: minted.body.token,
    });
    expect(members.res.status).toBe(200);
    expect(members.body.data.map((m: { email: string }) => m.email).sort()).toEqual(
      [adminEmail, learnerEmail].sort(),
    );
    const course = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 1,
      databases: ["DB", "DB_1"],
    });
    const recorded = await callJson("/api/progress/attempts", {
      token: learner.body.token,
      body: {
        attempts: course.items.map((id) => ({
          id: crypto.randomUUID(),
          training_item_id: id,
          score: 1,
          correct: true,
          duration_seconds: 20,
          occurred_at: new Date(Date.now() - 60_000).toISOString(),
        })),
      },
    });
    expect(recorded.res.status).toBe(200);
    const learnerId = invited.body.id;
    expect(
      await inDb("DB_1").select().from(attempts).where(eq(attempts.userId, learnerId)).all(),
    ).toHaveLength(1);
    expect(await inDb("DB").select().from(users).where(eq(users.institutionId, institutionId)).all()).toEqual(
      [],
    );
  });
});

describe("the orphan-key sweep", () => {
  it("removes keys leading to nothing once past the grace period; keeps fresh and live ones", async () => {
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
    const orphan = `orphan.old.${crypto.randomUUID()}@example.test`;
    const fresh = `orphan.fresh.${crypto.randomUUID()}@example.test`;
    const orphanToken = `hash-${crypto.randomUUID()}`;
    const ghostSlug = `ghost-${crypto.randomUUID().slice(0, 8)}`;
    const liveDomain = `live-${crypto.randomUUID().slice(0, 8)}.example.test`;
    const entryKinds = [
      "scim_token",
      "stripe_customer",
      "sso_domain",
      "lti_registration",
      "lti_client",
    ] as const;
    // Globex's live keys (its members' addresses and tokens), dated as old as the orphans.
    await inDb("DB")
      .update(directoryKeys)
      .set({ createdAt: hoursAgo(3) })
      .where(eq(directoryKeys.institutionId, globex.institution.id));
    const live = await inDb("DB")
      .select()
      .from(directoryKeys)
      .where(eq(directoryKeys.institutionId, globex.institution.id))
      .all();
    await inDb("DB")
      .insert(directoryKeys)
      .values([
        { kind: "email", key: orphan, institutionId: globex.institution.id, createdAt: hoursAgo(3) },
        { kind: "email", key: fresh, institutionId: globex.institution.id, createdAt: hoursAgo(0) },
        { kind: "token", key: orphanToken, institutionId: globex.institution.id, createdAt: hoursAgo(3) },
        // A slug claimed by a creation that crashed before its institution was written.
        { kind: "slug", key: ghostSlug, institutionId: "ins_never_written", createdAt: hoursAgo(3) },
        // The entry points' kinds, each leading to nothing in DB_1.
        ...entryKinds.map((kind) => ({
          kind,
          key: `${kind}-orphan-${crypto.randomUUID()}`,
          institutionId: globex.institution.id,
          createdAt: hoursAgo(3),
        })),
        // A verified SSO domain of Globex, in DB_1: live.
        { kind: "sso_domain", key: liveDomain, institutionId: globex.institution.id, createdAt: hoursAgo(3) },
      ]);
    await inDb("DB_1")
      .insert(ssoDomains)
      .values({ institutionId: globex.institution.id, domain: liveDomain, status: "verified" });
    const invite = (email: string) =>
      callJson(`/api/institutions/${acme.institution.id}/members`, {
        token: acme.admin.token,
        body: { email, name: "Reclaimed", role: "learner" },
      });
    // While the orphan stays, DB's triggers refuse its address.
    expect((await invite(orphan)).body.code).toBe("email_taken");
    const execution = createExecutionContext();
    await runSweeps(env, execution);
    await waitOnExecutionContext(execution);
    const left = await inDb("DB")
      .select({ key: directoryKeys.key })
      .from(directoryKeys)
      .where(eq(directoryKeys.institutionId, globex.institution.id))
      .all();
    const keys = new Set(left.map((k) => k.key));
    expect(keys.has(orphan)).toBe(false);
    expect(keys.has(orphanToken)).toBe(false);
    expect(keys.has(fresh)).toBe(true);
    expect(keys.has(liveDomain)).toBe(true);
    expect(left.filter((k) => k.key.includes("-orphan-"))).toEqual([]);
    expect(
      await inDb("DB").select().from(directoryKeys).where(eq(directoryKeys.key, ghostSlug)).all(),
    ).toEqual([]);
    for (const key of live)
      if (key.key !== orphan && key.key !== orphanToken) expect(keys.has(key.key)).toBe(true);
    // Globex's members still sign in through their keys, and DB now takes the freed address.
    expect((await call("/api/auth/me", { token: globex.learner.token })).status).toBe(200);
    const reclaimed = await invite(orphan);
    expect(reclaimed.res.status).toBe(201);
    expect(await inDb("DB").select().from(users).where(eq(users.email, orphan)).all()).toHaveLength(1);
  });
});

describe("platform staff", () => {
  let staff: Awaited<ReturnType<typeof createPlatformAdmin>>;
  beforeAll(async () => {
    staff = await createPlatformAdmin();
  });

  it("list the members of an institution in DB_1, and read its analytics, in its database", async () => {
    const members = await callJson(`/api/institutions/${globex.institution.id}/members`, {
      token: staff.token,
    });
    expect(members.res.status).toBe(200);
    expect(members.body.data.map((m: { id: string }) => m.id)).toEqual(
      expect.arrayContaining([globex.admin.id, globex.instructor.id, globex.learner.id]),
    );
    // The answer is DB_1's: its bookmark says so.
    expect(members.res.headers.get("X-D1-Bookmark")).toMatch(/^DB_1:/);
    const institution = await callJson(`/api/institutions/${globex.institution.id}`, { token: staff.token });
    expect(institution.res.status).toBe(200);
    expect(institution.body.member_count).toBe(members.body.meta.total);
    const analytics = await call(`/api/institutions/${globex.institution.id}/analytics`, {
      token: staff.token,
    });
    expect(analytics.status).toBe(200);
    // Acme's, in DB, as before; an unknown institution is still 404.
    const acmes = await call(`/api/institutions/${acme.institution.id}/members`, { token: staff.token });
    expect(acmes.status).toBe(200);
    expect((await call("/api/institutions/ins_nowhere/members", { token: staff.token })).status).toBe(404);
  });

  it("edit its SSO settings there, which its admins and its public metadata then show", async () => {
    const domain = `staff-${crypto.randomUUID().slice(0, 8)}.school.test`;
    const put = await callJson(`/api/institutions/${globex.institution.id}/sso`, {
      method: "PUT",
      token: staff.token,
      body: {
        type: "saml",
        state: "draft",
        domains: [domain],
        saml: { idp_entity_id: "https://idp.globex.test", sso_url: "https://idp.globex.test/sso" },
      },
    });
    expect(put.res.status).toBe(200);
    const read = await callJson(`/api/institutions/${globex.institution.id}/sso`, {
      token: globex.admin.token,
    });
    expect(read.res.status).toBe(200);
    expect(read.body.type).toBe("saml");
    expect(read.body.domains).toEqual([domain]);
    // A public route by the institution's path (the IdP fetching our metadata) finds it in DB_1 too.
    const metadata = await call(`/api/institutions/${globex.institution.id}/sso/saml/metadata`);
    expect(metadata.status).toBe(200);
    const log = await call(`/api/institutions/${globex.institution.id}/sso/log`, { token: staff.token });
    expect(log.status).toBe(200);
  });

  it("create a member of an institution in DB_1: written there, its address claimed in DB", async () => {
    const email = `by-staff.${crypto.randomUUID()}@example.test`;
    const created = await callJson(`/api/institutions/${globex.institution.id}/members`, {
      token: staff.token,
      body: { email, name: "Made by staff", role: "learner" },
    });
    expect(created.res.status).toBe(201);
    expect(
      await inDb("DB_1").select({ id: users.id }).from(users).where(eq(users.email, email)).get(),
    ).toEqual({ id: created.body.id });
    expect(await inDb("DB").select().from(users).where(eq(users.email, email)).all()).toEqual([]);
    const [key] = await inDb("DB").select().from(directoryKeys).where(eq(directoryKeys.key, email)).all();
    expect(key?.institutionId).toBe(globex.institution.id);
    // The address is Globex's in every database: Acme cannot have it, whoever asks.
    const again = await callJson(`/api/institutions/${acme.institution.id}/members`, {
      token: staff.token,
      body: { email, name: "Twice", role: "learner" },
    });
    expect(again.res.status).toBe(409);
    expect(again.body.code).toBe("email_taken");
  });
});

describe("platform staff in the dashboard", () => {
  it("choose an institution in DB_1 and see its members and settings; their own tokens stay theirs", async () => {
    const staff = await createPlatformAdmin();
    const browser = new Browser();
    expect((await browser.signIn(staff.email)).status).toBe(303);
    const picker = await browser.get(`/dashboard/institutions?q=${globex.institution.slug}`);
    const html = await picker.text();
    expect(textOf(html)).toContain(globex.institution.slug);
    const chosen = await browser.post("/dashboard/institutions/choose", {
      _csrf: csrfOf(html),
      institution_id: globex.institution.id,
    });
    expect(chosen.status).toBe(303);
    const members = await browser.get("/dashboard/members");
    expect(members.status).toBe(200);
    expect(await members.text()).toContain(globex.learner.email);
    expect((await browser.get("/dashboard/settings/institution")).status).toBe(200);
    // Staff's own API tokens (in DB) are listed on their tokens page, whichever institution is chosen.
    const name = `staff-${crypto.randomUUID().slice(0, 8)}`;
    await mintToken(staff, ["members:read"], { name });
    const tokens = await browser.get("/dashboard/settings/integrations/tokens");
    expect(tokens.status).toBe(200);
    expect(textOf(await tokens.text())).toContain(name);
  });
});

describe("platform staff's list of institutions", () => {
  // The same names, once spread over DB and DB_1 and once all in DB: ties in any case (broken by
  // id), accents (SQLite's lower() leaves them), an underscore, which sorts between upper and lower
  // case, and a fullwidth letter before an emoji (code-point order, not UTF-16's).
  const NAMES = ["b", "A", "a", "C", "É", "é", "z", "_x", "Ab", "B", "😀", "\uFF21"];
  let staff: Awaited<ReturnType<typeof createPlatformAdmin>>;
  let spread: string;
  let alone: string;

  async function seed(tag: string, placeOf: (index: number) => "DB" | "DB_1"): Promise<void> {
    const rows = NAMES.map((name, index) => ({
      id: `ins_${tag}_${String(index).padStart(2, "0")}`,
      slug: `${tag}-${index}`,
      name: `${tag} ${name}`,
      plan: index % 3 === 0 ? ("free" as const) : ("pro" as const),
      where: placeOf(index),
    }));
    const placed = rows.filter((row) => row.where !== "DB");
    if (placed.length > 0)
      await inDb("DB")
        .insert(institutionDatabases)
        .values(
          placed.map((row) => ({
            institutionId: row.id,
            binding: row.where,
            updatedAt: new Date().toISOString(),
          })),
        );
    for (const where of ["DB", "DB_1"] as const) {
      const here = rows.filter((row) => row.where === where).map(({ where: _where, ...row }) => row);
      if (here.length > 0) await inDb(where).insert(institutions).values(here);
    }
  }

  beforeAll(async () => {
    staff = await createPlatformAdmin();
    spread = `sp${crypto.randomUUID().slice(0, 8)}`;
    alone = `al${crypto.randomUUID().slice(0, 8)}`;
    await Promise.all([seed(spread, (index) => (index % 3 === 1 ? "DB" : "DB_1")), seed(alone, () => "DB")]);
  });

  interface Listed {
    names: string[];
    pages: { ids: string[]; total: number; page: number }[];
  }

  /** Every page, following `links.next` from the first (or `links.prev` back from `start`). */
  async function pageThrough(start: string, link: "next" | "prev", tag: string): Promise<Listed> {
    const listed: Listed = { names: [], pages: [] };
    let url: string | null = start;
    while (url) {
      const answer: { res: Response; body: any } = await callJson(url.replace(/^https?:\/\/[^/]+/, ""), {
        token: staff.token,
      });
      const { res, body } = answer;
      expect(res.status).toBe(200);
      listed.pages.push({
        ids: body.data.map((i: { id: string }) => i.id.replace(tag, "")),
        total: body.meta.total,
        page: body.meta.current_page,
      });
      listed.names.push(...body.data.map((i: { name: string }) => i.name.slice(tag.length + 1)));
      url = body.links[link];
    }
    return listed;
  }

  it("pages through both databases in the list's order, with no duplicate or gap, as one database would", async () => {
    // SQLite's lower() changes ASCII letters only; BINARY compares code points.
    const sortKey = (name: string) =>
      Array.from(
        name.replace(/[A-Z]/g, (c) => c.toLowerCase()),
        (c) => c.codePointAt(0)!,
      );
    const byCodePoints = (a: number[], b: number[]) => {
      for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
      return a.length - b.length;
    };
    const expected = [...NAMES.keys()]
      .sort((a, b) => byCodePoints(sortKey(NAMES[a]!), sortKey(NAMES[b]!)) || a - b)
      .map((index) => NAMES[index]);
    const spreadPages = await pageThrough(`/api/institutions?q=${spread}&per_page=3`, "next", spread);
    const alonePages = await pageThrough(`/api/institutions?q=${alone}&per_page=3`, "next", alone);
    expect(spreadPages.names).toEqual(expected);
    expect(spreadPages.pages).toEqual(alonePages.pages);
    expect(spreadPages.pages.map((p) => p.page)).toEqual([1, 2, 3, 4]);
    expect(expected.slice(-3)).toEqual(["é", "\uFF21", "😀"]);
    expect(spreadPages.pages.every((p) => p.total === NAMES.length)).toBe(true);
    expect(new Set(spreadPages.pages.flatMap((p) => p.ids)).size).toBe(NAMES.length);
    // Back from the last page by `links.prev`: the same pages.
    const back = await pageThrough(`/api/institutions?q=${spread}&per_page=3&page=4`, "prev", spread);
    expect(back.pages.reverse()).toEqual(spreadPages.pages);
    // A page asked for by number is the page the links lead to.
    const third = await callJson(`/api/institutions?q=${spread}&per_page=3&page=3`, { token: staff.token });
    expect(third.body.data.map((i: { id: string }) => i.id.replace(spread, ""))).toEqual(
      spreadPages.pages[2]?.ids,
    );
  });

  it("filters as one database would, and refuses a cursor it did not send", async () => {
    const free = async (tag: string) => {
      const { body } = await callJson(`/api/institutions?q=${tag}&plan=free&per_page=2`, {
        token: staff.token,
      });
      return { ids: body.data.map((i: { id: string }) => i.id.replace(tag, "")), meta: body.meta };
    };
    expect(await free(spread)).toEqual(await free(alone));
    expect((await free(spread)).meta.total).toBe(4);
    const first = await callJson(`/api/institutions?q=${spread}&per_page=3`, { token: staff.token });
    const next = new URL(first.body.links.next);
    expect(next.searchParams.get("page")).toBe("2");
    expect(next.searchParams.get("cursor")).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(first.body.links.first).not.toContain("cursor=");
    const forged = await callJson(`/api/institutions?q=${spread}&per_page=3&page=2&cursor=nope`, {
      token: staff.token,
    });
    expect(forged.res.status).toBe(422);
    expect(forged.body.errors[0].path).toBe("cursor");
    const elsewhere = await callJson(
      `/api/institutions?q=${spread}&per_page=3&page=3&cursor=${next.searchParams.get("cursor")}`,
      { token: staff.token },
    );
    expect(elsewhere.res.status).toBe(422);
  });
});
