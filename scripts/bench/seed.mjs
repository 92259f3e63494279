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
