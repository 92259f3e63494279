import { env } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { databaseIndexStatements } from "../../scripts/database-index.mjs";
import { courses, institutions, lessons, trainingItems, users } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createPublishedCourse } from "../helpers/progress-fixture";
import {
  createPlatformAdmin,
  createTenant,
  insertUser,
  type TestDatabase,
  type TestUser,
} from "../helpers/tenants";

/**
 * The numbers that the rows kept for good carry instead of ids (docs/design/capacity.md, "Integer
 * keys"): a learner's and an institution's are `sequence × 128 + the database's index`, allocated by
 * the statement that inserts the row; the catalogue's are written where it is and copied with it.
 */
const inDb = (name: TestDatabase) => database(env[name]);

async function numbersOf(name: TestDatabase, ids: string[]) {
  const rows = await inDb(name)
    .select({ id: users.id, number: users.number })
    .from(users)
    .where(inArray(users.id, ids));
  return new Map(rows.map((row) => [row.id, row.number]));
}

async function institutionNumber(name: TestDatabase, id: string) {
  const row = await inDb(name)
    .select({ number: institutions.number })
    .from(institutions)
    .where(eq(institutions.id, id))
    .get();
  return row?.number;
}

let staff: TestUser;
beforeAll(async () => {
  staff = await createPlatformAdmin();
});

describe("learners' and institutions' numbers", () => {
  it("are given by the insert itself, each database its own residue of 128, never the same twice", async () => {
    const here = await createTenant();
    const there = await createTenant({ database: "DB_1" });
    const members = (t: typeof here) => [t.admin.id, t.instructor.id, t.learner.id];
    const inFirst = [...(await numbersOf("DB", members(here))).values()];
    const inSecond = [...(await numbersOf("DB_1", members(there))).values()];
    expect(inFirst).toHaveLength(3);
    expect(inSecond).toHaveLength(3);
    for (const n of inFirst) expect(n! % 128).toBe(0);
    for (const n of inSecond) expect(n! % 128).toBe(1);
    expect(await institutionNumber("DB", here.institution.id)).toSatisfy((n: number) => n % 128 === 0);
    expect(await institutionNumber("DB_1", there.institution.id)).toSatisfy((n: number) => n % 128 === 1);
    const all = [...inFirst, ...inSecond];
    expect(new Set(all).size).toBe(all.length);
  });

  it("stay distinct when many users are created at once", async () => {
    const { institution } = await createTenant();
    const created = await Promise.all(
      Array.from({ length: 24 }, () => insertUser("learner", institution.id)),
    );
    const numbers = [
      ...(
        await numbersOf(
          "DB",
          created.map((u) => u.id),
        )
      ).values(),
    ];
    expect(numbers).toHaveLength(24);
    expect(numbers.every((n) => Number.isInteger(n) && n! % 128 === 0)).toBe(true);
    expect(new Set(numbers).size).toBe(24);
  });

  it("move with their institution, and the target's new learners never take one of them", async () => {
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const members = [tenant.admin.id, tenant.instructor.id, tenant.learner.id];
    const before = await numbersOf("DB", members);
    const institutionBefore = await institutionNumber("DB", id);

    const { res, body } = await callJson(`/api/institutions/${id}/move`, {
      token: staff.token,
      body: { database: "DB_1" },
    });
    expect(res.status, JSON.stringify(body)).toBe(202);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { body: now } = await callJson(`/api/institutions/${id}/move`, { token: staff.token });
      if (now.move.state === "completed") break;
      expect(now.move.state).not.toBe("failed");
      if (Date.now() > deadline) throw new Error(`move not done: ${JSON.stringify(now)}`);
      await new Promise((r) => setTimeout(r, 200));
    }

    expect(await numbersOf("DB_1", members)).toEqual(before);
    expect(await institutionNumber("DB_1", id)).toBe(institutionBefore);
    const newcomers = await Promise.all(
      Array.from({ length: 5 }, () => insertUser("learner", id, undefined, "DB_1")),
    );
    const fresh = [
      ...(
        await numbersOf(
          "DB_1",
          newcomers.map((u) => u.id),
        )
      ).values(),
    ];
    expect(fresh.every((n) => n! % 128 === 1)).toBe(true);
    expect(fresh.filter((n) => [...before.values()].includes(n))).toEqual([]);
  });

  it("never change, and a database without its index refuses to create a user", async () => {
    const { learner } = await createTenant();
    await expect(
      env.DB.prepare("UPDATE users SET number = number + 128 WHERE id = ?").bind(learner.id).run(),
    ).rejects.toThrow(/users\.number never changes/);
    await expect(
      env.DB.prepare("UPDATE users SET number = NULL WHERE id = ?").bind(learner.id).run(),
    ).rejects.toThrow(/users\.number never changes/);

    const saved = await env.DB.prepare("SELECT * FROM database_numbering").first();
    await env.DB.prepare("DELETE FROM database_numbering").run();
    try {
      await expect(
        env.DB.prepare(
          "INSERT INTO users (id, email, name, role, password_hash) VALUES ('usr_no_index', 'no.index@example.test', 'No index', 'learner', 'x')",
        ).run(),
      ).rejects.toThrow(/this database has no index/);
    } finally {
      await env.DB.prepare(
        "INSERT INTO database_numbering (id, database_index, next_sequence) VALUES (?1, ?2, ?3)",
      )
        .bind(saved!.id, saved!.database_index, saved!.next_sequence)
        .run();
    }
  });
});

describe("the catalogue's numbers", () => {
  it("are given where it is written and copied with it: the same row has the same number in every database", async () => {
    // Another course in DB only first, so that the two databases' catalogues differ in length.
    await createPublishedCourse();
    const course = await createPublishedCourse({ databases: ["DB", "DB_1"] });
    for (const table of [courses, lessons, trainingItems]) {
      const read = (name: TestDatabase) =>
        inDb(name)
          .select({ id: table.id, number: table.number })
          .from(table)
          .where(eq(table === courses ? courses.id : (table as typeof lessons).courseId, course.courseId))
          .orderBy(table.id);
      const first = await read("DB");
      expect(first.length).toBeGreaterThan(0);
      expect(first.every((row) => Number.isInteger(row.number) && row.number! > 0)).toBe(true);
      expect(await read("DB_1")).toEqual(first);
    }
    await expect(
      env.DB.prepare("UPDATE training_items SET number = number + 1000 WHERE id = ?")
        .bind(course.items[0])
        .run(),
    ).rejects.toThrow(/training_items\.number never changes/);
  });
});

describe("a move between databases that number the catalogue differently", () => {
  async function moveTo(id: string, database: TestDatabase) {
    const { res, body } = await callJson(`/api/institutions/${id}/move`, {
      token: staff.token,
      body: { database },
    });
    expect(res.status, JSON.stringify(body)).toBe(202);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { body: now } = await callJson(`/api/institutions/${id}/move`, { token: staff.token });
      if (now.move.state === "completed" || now.move.state === "failed") return now.move;
      if (Date.now() > deadline) throw new Error(`move not done: ${JSON.stringify(now)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it("is refused before anything is copied, and goes through once the numbering agrees", async () => {
    // A course DB has and DB_1 does not: DB_1 gives its number to another course.
    const course = await createPublishedCourse();
    const tenant = await createTenant();
    const id = tenant.institution.id;
    const row = await inDb("DB").select().from(courses).where(eq(courses.id, course.courseId)).get();
    await inDb("DB_1")
      .insert(courses)
      .values({ ...row!, id: "crs_numbered_elsewhere", slug: "numbered-elsewhere" });

    const failed = await moveTo(id, "DB_1");
    expect(failed.state).toBe("failed");
    expect(failed.error).toContain(
      `courses number ${row!.number} is ${course.courseId} in DB and crs_numbered_elsewhere in DB_1`,
    );
    const copied = await env.DB_1.prepare("SELECT count(*) AS n FROM users WHERE institution_id = ?")
      .bind(id)
      .first<{ n: number }>();
    expect(copied?.n).toBe(0);
    const { res } = await callJson("/api/auth/me", { token: tenant.admin.token });
    expect(res.status).toBe(200);

    // The conflicting course gone (a row only one side has is no conflict): the move goes through.
    await inDb("DB_1").delete(courses).where(eq(courses.id, "crs_numbered_elsewhere"));
    const done = await moveTo(id, "DB_1");
    expect(done.state, JSON.stringify(done)).toBe("completed");
    expect((await numbersOf("DB_1", [tenant.learner.id])).size).toBe(1);
  });
});

describe("the migration that adds the numbers", () => {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.endsWith("_numbers.sql"));
  const NUMBERED = ["users", "institutions", "courses", "lessons", "training_items"];

  /** DB_1 as it was before the migration: no numbers, no index. */
  async function unmigrate(d1: D1Database) {
    const { results } = await d1
      .prepare(
        // Every trigger that names a number (the allocation's, and the analytics' on the rows kept for
        // good: a column they name cannot be dropped) and the numbers' indexes.
        "SELECT type, name FROM sqlite_schema WHERE (type = 'trigger' AND sql LIKE '%number%') OR (type = 'index' AND name LIKE '%_number_%')",
      )
      .all<{ type: string; name: string }>();
    await d1.batch([
      ...results.map((r) => d1.prepare(`DROP ${r.type.toUpperCase()} "${r.name}"`)),
      ...NUMBERED.map((t) => d1.prepare(`ALTER TABLE "${t}" DROP COLUMN number`)),
      d1.prepare("DROP TABLE database_numbering"),
    ]);
  }

  it("numbers the rows already there from the runner's index, and refuses a database without one", async () => {
    expect(migration).toBeDefined();
    const d1 = env.DB_1;
    await unmigrate(d1);
    const run = () => d1.batch(migration!.queries.map((q) => d1.prepare(q)));
    const institution = `ins_mig_${crypto.randomUUID().slice(0, 8)}`;
    await d1.batch([
      d1
        .prepare("INSERT INTO institutions (id, slug, name) VALUES (?, ?, 'Before')")
        .bind(institution, institution),
      ...[0, 1, 2].map((i) =>
        d1
          .prepare(
            "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, 'Before', 'learner', ?, 'x')",
          )
          .bind(`${institution}_u${i}`, `${institution}.${i}@example.test`, institution),
      ),
    ]);
    const { count: usersBefore } = (await d1.prepare("SELECT count(*) AS count FROM users").first<{
      count: number;
    }>())!;
    const { count: institutionsBefore } = (await d1
      .prepare("SELECT count(*) AS count FROM institutions")
      .first<{ count: number }>())!;

    // No index written by a runner: the migration fails whole, and the schema is as it was.
    await expect(run()).rejects.toThrow(/NOT NULL constraint failed: database_numbering\.database_index/);
    const columns = await d1
      .prepare("SELECT name FROM pragma_table_info('users') WHERE name = 'number'")
      .all();
    expect(columns.results).toEqual([]);

    await d1.batch(databaseIndexStatements("DB_1").map((s) => d1.prepare(s)));
    await run();
    const numbered = await d1
      .prepare("SELECT number FROM users UNION ALL SELECT number FROM institutions")
      .all<{ number: number | null }>();
    const numbers = numbered.results.map((r) => r.number);
    expect(numbers).toHaveLength(usersBefore + institutionsBefore);
    expect(numbers.every((n) => n !== null && n % 128 === 1)).toBe(true);
    expect(new Set(numbers).size).toBe(numbers.length);
    const sequence = await d1
      .prepare("SELECT next_sequence FROM database_numbering")
      .first<number>("next_sequence");
    expect(sequence).toBe(numbers.length);
    for (const table of ["courses", "lessons", "training_items"]) {
      const { results } = await d1
        .prepare(`SELECT number FROM "${table}" ORDER BY rowid`)
        .all<{ number: number }>();
      expect(results.map((r) => r.number)).toEqual(results.map((_, i) => i + 1));
    }

    // A user created after it gets the next number of the sequence.
    const after = await insertUser("learner", institution, undefined, "DB_1");
    expect((await numbersOf("DB_1", [after.id])).get(after.id)).toBe(sequence! * 128 + 1);
  });
});
