import { env } from "cloudflare:test";
import { directoryKeys, institutionDatabases, institutions, type Role, users } from "../../src/db/schema";
import { createSession } from "../../src/domains/auth/service";
import { hashPassword } from "../../src/platform/crypto/passwords";
import { database } from "../../src/platform/db";
import { callJson } from "./api";
import { testContext } from "./context";

export const PASSWORD = "correct horse battery staple";

let passwordHash: Promise<string> | null = null;
let sequence = 0;

function unique(): string {
  sequence += 1;
  return `${Date.now().toString(36)}${sequence}${Math.random().toString(36).slice(2, 6)}`;
}

/** A distinct client address per helper call, so per-IP sign-in limits never couple tests. */
export function freshIp(): string {
  return `198.51.100.${Math.floor(Math.random() * 250) + 1}-${unique()}`;
}

export interface TestUser {
  id: string;
  email: string;
  role: string;
  token: string;
  tokenId: string;
}

export interface Tenant {
  institution: { id: string; slug: string; plan: string };
  admin: TestUser;
  instructor: TestUser;
  learner: TestUser;
}

/** The databases a test may place an institution in (wrangler.toml's bindings). */
export type TestDatabase = "DB" | "DB_1";

export async function insertUser(
  role: string,
  institutionId: string | null,
  tag = unique(),
  databaseName: TestDatabase = "DB",
): Promise<{ id: string; email: string }> {
  passwordHash ??= hashPassword(PASSWORD);
  const id = `usr_test_${tag}_${role}`;
  const email = `${role}.${tag}@example.test`;
  // A member of an institution in another database is found by its e-mail's directory key in DB.
  if (databaseName !== "DB" && institutionId)
    await database(env.DB).insert(directoryKeys).values({ kind: "email", key: email, institutionId });
  await database(env[databaseName])
    .insert(users)
    .values({
      id,
      email,
      name: `Test ${role}`,
      role: role as Role,
      institutionId,
      passwordHash: await passwordHash,
    });
  return { id, email };
}

export async function signIn(
  email: string,
  password = PASSWORD,
): Promise<{ token: string; tokenId: string }> {
  const { res, body } = await callJson("/api/auth/sign-in", {
    body: { email, password },
    headers: { "CF-Connecting-IP": freshIp() },
  });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(body)}`);
  return { token: body.token, tokenId: body.token_id };
}

/**
 * The session token signing in issues (the same `createSession`), for a user a test sets up rather
 * than one whose sign-in it tests: without the sign-in's PBKDF2 and its rate limiters' Durable
 * Objects, which cost the suite minutes (docs/design/testing.md). Sign-in itself is tested over HTTP
 * (test/auth/sign-in.test.ts and the files that call `signIn`).
 */
export async function openSession(user: {
  id: string;
  institutionId: string | null;
}): Promise<{ token: string; tokenId: string }> {
  const { token, tokenId } = await createSession(testContext(), user);
  return { token, tokenId };
}

async function user(
  role: string,
  institutionId: string | null,
  databaseName: TestDatabase = "DB",
): Promise<TestUser> {
  const { id, email } = await insertUser(role, institutionId, undefined, databaseName);
  return { id, email, role, ...(await openSession({ id, institutionId })) };
}

/** A fresh institution with an admin, an instructor and a learner, each signed in. */
export async function createTenant(
  options: { plan?: "free" | "pro" | "enterprise"; rateLimit?: number; database?: TestDatabase } = {},
): Promise<Tenant> {
  const tag = unique();
  const institution = { id: `ins_test_${tag}`, slug: `test-${tag}`, plan: options.plan ?? "pro" };
  const databaseName = options.database ?? "DB";
  // An institution in another database than DB: the directory says where, before anything is written there.
  if (databaseName !== "DB")
    await database(env.DB)
      .insert(institutionDatabases)
      .values({ institutionId: institution.id, binding: databaseName, updatedAt: new Date().toISOString() });
  await database(env[databaseName])
    .insert(institutions)
    .values({
      id: institution.id,
      slug: institution.slug,
      name: `Test institution ${tag}`,
      plan: options.plan ?? "pro",
      rateLimitPerMinute: options.rateLimit ?? null,
    });
  const [admin, instructor, learner] = await Promise.all([
    user("institution_admin", institution.id, databaseName),
    user("instructor", institution.id, databaseName),
    user("learner", institution.id, databaseName),
  ]);
  return { institution, admin: admin!, instructor: instructor!, learner: learner! };
}

export async function createPlatformAdmin(): Promise<TestUser> {
  return user("platform_admin", null);
}

/** An API token with exactly these abilities, minted over HTTP by `owner`. */
export async function mintToken(
  owner: TestUser,
  abilities: string[],
  extra: Record<string, unknown> = {},
): Promise<{ token: string; id: string; body: any }> {
  const { res, body } = await callJson("/api/integrations/tokens", {
    token: owner.token,
    body: { name: `test ${abilities.join(",")}`, abilities, ...extra },
  });
  if (res.status !== 201) throw new Error(`token creation failed: ${res.status} ${JSON.stringify(body)}`);
  return { token: body.token, id: body.id, body };
}
