// The bench tenant: written straight into D1 (institution, admin user), then everything else over
// HTTP through the worker itself (sign-in, API tokens), the way a client would.
import { randomBytes } from "node:crypto";
import { hashPassword } from "../demo-data.mjs";
import { requestJson } from "./lib.mjs";

/** Enterprise institutions carry their own per-token limit; this one can never be reached in a run. */
export const BENCH_RATE_LIMIT_PER_MINUTE = 1_000_000_000;

export const BENCH_TENANT = {
  institution: {
    id: "ins_bench",
    slug: "bench",
    name: "Bench Institute",
    plan: "enterprise",
    rateLimitPerMinute: BENCH_RATE_LIMIT_PER_MINUTE,
  },
  admin: {
    id: "usr_bench_admin",
    email: "admin@bench.lingua.test",
    name: "Bench Admin",
    role: "institution_admin",
  },
};

/**
 * Seeds the tenant (`institutionId` replaces the institution's short id, as the capacity bench's
 * long ids do) and returns { token, tokenCount, extraTokens }: a session bearer token of the
 * admin, how many active tokens the institution holds (the session plus `extraTokens` API tokens),
 * and the plain values of those API tokens.
 */
export async function seedBenchTenant({ d1, baseUrl, extraTokens = 30, institutionId }) {
  const { admin } = BENCH_TENANT;
  const institution = { ...BENCH_TENANT.institution, id: institutionId ?? BENCH_TENANT.institution.id };
  const password = randomBytes(18).toString("base64url");
  await d1.batch([
    d1
      .prepare(
        "INSERT INTO institutions (id, slug, name, plan, rate_limit_per_minute) VALUES (?, ?, ?, ?, ?)",
      )
      .bind(
        institution.id,
        institution.slug,
        institution.name,
        institution.plan,
        institution.rateLimitPerMinute,
      ),
    d1
      .prepare(
        "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .bind(admin.id, admin.email, admin.name, admin.role, institution.id, hashPassword(password)),
  ]);

  const signIn = await requestJson(new URL("/api/auth/sign-in", baseUrl), {
    method: "POST",
    body: { email: admin.email, password },
  });
  const token = signIn.body.token;
  const auth = { Authorization: `Bearer ${token}` };

  const extraPlain = [];
  for (let i = 1; i <= extraTokens; i++) {
    const created = await requestJson(new URL("/api/integrations/tokens", baseUrl), {
      method: "POST",
      headers: auth,
      body: { name: `bench token ${String(i).padStart(2, "0")}`, abilities: ["tokens:read"] },
      expect: 201,
    });
    extraPlain.push(created.body.token);
  }

  // The tenant must look as intended before anything is measured.
  const me = await requestJson(new URL("/api/auth/me", baseUrl), { headers: auth });
  if (me.body.rate_limit?.limit !== BENCH_RATE_LIMIT_PER_MINUTE) {
    throw new Error(
      `bench token's rate limit is ${JSON.stringify(me.body.rate_limit)}, expected ${BENCH_RATE_LIMIT_PER_MINUTE}`,
    );
  }
  const list = await requestJson(new URL("/api/integrations/tokens", baseUrl), { headers: auth });
  const tokenCount = extraTokens + 1;
  if (list.body.meta?.total !== tokenCount || list.body.data?.length !== Math.min(25, tokenCount)) {
    throw new Error(
      `token list shows ${list.body.data?.length} of ${list.body.meta?.total}, expected a page of 25 of ${tokenCount}`,
    );
  }
  return { token, tokenCount, pageSize: list.body.data.length, extraTokens: extraPlain };
}

/**
 * The learning-activity scenario's course, as D1 statements: published, one lesson, one training
 * block of `itemCount` vocabulary items. `key` names its rows (`crs_bench_<course>`, `les_<key>_1`,
 * `trn_<key>_1`, `itm_<key>_000`…), as the xapi and baseline scenarios each seed one. Answers the
 * statements and the item ids in order.
 */
export function benchCourse(d1, { key, course, slug, itemCount = 100 }) {
  const lesson = `les_${key}_1`;
  const training = `trn_${key}_1`;
  const items = benchCourseItems(key, itemCount);
  const statements = [
    d1
      .prepare(
        "INSERT INTO courses (id, slug, title, description, target_language, source_language, cefr_from, cefr_to, published, published_at, lesson_count, item_count, estimated_minutes, tags) VALUES (?, ?, 'Spanish for beginners', 'Bench course.', 'es', 'en', 'A1', 'A1', 1, ?, 1, ?, ?, '[]')",
      )
      .bind(course, slug, new Date().toISOString(), itemCount, itemCount * 2),
    d1
      .prepare(
        "INSERT INTO lessons (id, course_id, position, title, cefr_level, objectives, item_count, estimated_minutes) VALUES (?, ?, 1, 'Greetings and introductions', 'A1', '[]', ?, ?)",
      )
      .bind(lesson, course, itemCount, itemCount * 2),
    d1
      .prepare(
        "INSERT INTO trainings (id, lesson_id, course_id, position, kind, title, item_count) VALUES (?, ?, ?, 1, 'practice', 'Block', ?)",
      )
      .bind(training, lesson, course, itemCount),
    ...items.map((id, i) =>
      d1
        .prepare(
          "INSERT INTO training_items (id, training_id, lesson_id, course_id, position, type, skill, cefr_level, xp, content) VALUES (?, ?, ?, ?, ?, 'vocabulary', 'reading', 'A1', 10, ?)",
        )
        .bind(
          id,
          training,
          lesson,
          course,
          i + 1,
          JSON.stringify({
            prompt: `What does «la palabra ${i}» mean?`,
            options: ["the word", "the world", "the sword"],
            answer: "the word",
          }),
        ),
    ),
  ];
  return { statements, items };
}

/** The item ids of `benchCourse` with the same `key`, in order. */
export function benchCourseItems(key, itemCount = 100) {
  return Array.from({ length: itemCount }, (_, i) => `itm_${key}_${String(i).padStart(3, "0")}`);
}

/**
 * The learning-activity write's body: one attempt per item for `userId`, a minute ago. Every attempt
 * passes (scores vary), so each request completes the lesson.
 */
export function attemptsBody(userId, items) {
  const occurredAt = new Date(Date.now() - 60_000).toISOString();
  return {
    user_id: userId,
    attempts: items.map((id, i) => ({
      id: crypto.randomUUID(),
      training_item_id: id,
      score: i % 5 === 4 ? 0.8 : 1,
      correct: true,
      duration_seconds: 15 + (i % 40),
      occurred_at: occurredAt,
    })),
  };
}
