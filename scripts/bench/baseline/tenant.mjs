// The tenants of BENCH_ONLY=baseline and the learning-activity write it measures (../baseline.mjs).
import { hashPassword } from "../../demo-data.mjs";
import { randomKey, requestJson } from "../lib.mjs";
import { attemptsBody, BENCH_RATE_LIMIT_PER_MINUTE, benchCourse, benchCourseItems } from "../seed.mjs";

export const ATTEMPTS_PER_REQUEST = 100;
export const EXTRA_TOKENS = 30;
/** The scenario's course (scripts/bench/seed.mjs's `benchCourse`, as scripts/bench/xapi.mjs seeds one). */
const COURSE = { key: "bb", course: "crs_bench_base", slug: "bench-base" };
const ITEMS = benchCourseItems(COURSE.key, ATTEMPTS_PER_REQUEST);

/**
 * One bench tenant in `d1` (DB or another database of the current worker, placed there through the
 * directory in `home`): an enterprise institution, its admin signed in, EXTRA_TOKENS API tokens,
 * `memberCount` learners, and the 100-item course (the catalogue is in every database).
 */
export async function seedTenant({ home, d1, baseUrl, id, binding, memberCount, withCourse }) {
  const password = `bench-${randomKey().slice(0, 12)}`;
  const slug = id.replace(/_/g, "-");
  const admin = { id: `usr_${id}_admin`, email: `admin@${slug}.lingua.test` };
  const members = Array.from({ length: memberCount }, (_, i) => ({
    id: `usr_${id}_m${String(i).padStart(3, "0")}`,
    email: `m${String(i).padStart(3, "0")}@${slug}.lingua.test`,
  }));
  if (binding !== "DB") {
    // As test/helpers/tenants.ts places one: the directory entry first, each address's key in DB.
    const now = new Date().toISOString();
    await home.batch([
      home
        .prepare("INSERT INTO institution_databases (institution_id, binding, updated_at) VALUES (?, ?, ?)")
        .bind(id, binding, now),
      ...[admin, ...members].map((u) =>
        home
          .prepare("INSERT INTO directory_keys (kind, key, institution_id) VALUES ('email', ?, ?)")
          .bind(u.email, id),
      ),
    ]);
  }
  const statements = [
    d1
      .prepare(
        "INSERT INTO institutions (id, slug, name, plan, rate_limit_per_minute) VALUES (?, ?, ?, 'enterprise', ?)",
      )
      .bind(id, slug, `Bench ${binding}`, BENCH_RATE_LIMIT_PER_MINUTE),
    d1
      .prepare(
        "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, 'Bench Admin', 'institution_admin', ?, ?)",
      )
      .bind(admin.id, admin.email, id, hashPassword(password)),
    ...members.map((m, i) =>
      d1
        .prepare(
          "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, ?, 'learner', ?, 'x')",
        )
        .bind(m.id, m.email, `Learner ${i}`, id),
    ),
  ];
  if (withCourse) statements.push(...courseStatements(d1));
  for (let i = 0; i < statements.length; i += 200) await d1.batch(statements.slice(i, i + 200));

  const signIn = await requestJson(new URL("/api/auth/sign-in", baseUrl), {
    method: "POST",
    body: { email: admin.email, password },
  });
  const auth = { Authorization: `Bearer ${signIn.body.token}` };
  for (let i = 1; i <= EXTRA_TOKENS; i++)
    await requestJson(new URL("/api/integrations/tokens", baseUrl), {
      method: "POST",
      headers: auth,
      body: { name: `bench token ${String(i).padStart(2, "0")}`, abilities: ["tokens:read"] },
      expect: 201,
    });
  // The tenant must look as intended, wherever it lives, before anything is measured.
  const me = await requestJson(new URL("/api/auth/me", baseUrl), { headers: auth });
  if (me.body.rate_limit?.limit !== BENCH_RATE_LIMIT_PER_MINUTE)
    throw new Error(`${id}: rate limit ${JSON.stringify(me.body.rate_limit)}`);
  const tokens = await requestJson(new URL("/api/integrations/tokens", baseUrl), { headers: auth });
  if (tokens.body.meta?.total !== EXTRA_TOKENS + 1)
    throw new Error(`${id}: token list total ${tokens.body.meta?.total}, expected ${EXTRA_TOKENS + 1}`);
  const list = await requestJson(new URL(`/api/institutions/${id}/members`, baseUrl), { headers: auth });
  if (list.body.meta?.total !== memberCount + 1)
    throw new Error(`${id}: member list total ${list.body.meta?.total}, expected ${memberCount + 1}`);
  return {
    id,
    binding,
    d1,
    base: baseUrl,
    auth,
    members: members.map((m) => m.id),
    tokensShown: `${tokens.body.data.length} of ${tokens.body.meta.total}`,
    membersShown: `${list.body.data.length} of ${list.body.meta.total}`,
  };
}

/** The scenario's published course of one lesson with 100 items, as D1 statements. */
export function courseStatements(d1) {
  return benchCourse(d1, { ...COURSE, itemCount: ATTEMPTS_PER_REQUEST }).statements;
}

/** The learning-activity write: 100 attempts for a member, as the admin; its latency in ms. */
export async function recordAttempts(tenant, userId) {
  const body = attemptsBody(userId, ITEMS);
  const started = performance.now();
  const response = await fetch(new URL("/api/progress/attempts", tenant.base), {
    method: "POST",
    headers: { ...tenant.auth, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200)
    throw new Error(`${tenant.id}: attempts answered ${response.status}: ${text.slice(0, 300)}`);
  return ms;
}

/** Waits until every outbox event of the tenant's database is dispatched (at most 30 s). */
export async function drained(tenant) {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const row = await tenant.d1
      .prepare("SELECT count(*) AS n FROM outbox_events WHERE dispatched_at IS NULL")
      .first();
    if (row.n === 0) return;
    if (performance.now() > deadline)
      throw new Error(`${tenant.id}: ${row.n} outbox event(s) still undispatched after 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
