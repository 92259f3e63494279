import { and, eq } from "drizzle-orm";
import { apiTokens, directoryKeys, institutionDatabases, institutions, users } from "../../db/schema";
import type { Env } from "../../env";
import { type Database, database } from "../db";
import { type DatabaseBinding, databaseBinding, isDatabaseBindingName } from "../service/databases";
import { effectiveAbilities } from "./abilities";
import { type Principal, rateLimitFor } from "./principal";

export type TokenRecord = { state: "active"; principal: Principal } | { state: "revoked" | "unknown" };

/** A database's session at its primary: a token created or revoked a moment ago is what counts. */
function atPrimary(env: Env, name: DatabaseBinding): Database {
  return database(databaseBinding(env, name).withSession("first-primary"));
}

/**
 * The D1 reads behind authentication, made by a token's Durable Object on a cache miss. One read
 * for a token of `DB` (the usual case): the token, its user and institution, and where that
 * institution lives. A token of an institution in another database (design/multi-database.md) is
 * not in `DB`: its directory key says which institution, and the token is read there.
 */
export async function loadTokenRecord(env: Env, tokenHash: string): Promise<TokenRecord> {
  const home = atPrimary(env, "DB");
  // Both at once in `DB`: the token there, and where its directory key says it lives otherwise.
  // (Not one drizzle batch: D1's batch answers rows as objects, where a join's same-named columns collide.)
  const [row, key] = await Promise.all([
    tokenQuery(home, tokenHash).get(),
    home
      .select({ binding: institutionDatabases.binding })
      .from(directoryKeys)
      .innerJoin(institutionDatabases, eq(institutionDatabases.institutionId, directoryKeys.institutionId))
      .where(and(eq(directoryKeys.kind, "token"), eq(directoryKeys.key, tokenHash)))
      .get(),
  ]);
  const found = toRead(row);
  // Found where its institution lives (an institution being moved away is read from `DB` until the switch).
  if (found.state !== "unknown" && found.placement === "DB") return placedIn(found.record, "DB");
  const elsewhere = found.state !== "unknown" ? found.placement : (key?.binding ?? null);
  if (!elsewhere || elsewhere === "DB" || !isDatabaseBindingName(elsewhere)) return { state: "unknown" };
  const there = toRead(await tokenQuery(atPrimary(env, elsewhere), tokenHash).get());
  return there.state === "unknown" ? { state: "unknown" } : placedIn(there.record, elsewhere);
}

function placedIn(record: TokenRecord, name: DatabaseBinding): TokenRecord {
  return record.state === "active"
    ? { state: "active", principal: { ...record.principal, database: name } }
    : record;
}

type Read = { state: "unknown" } | { state: "found"; record: TokenRecord; placement: string };

function tokenQuery(db: Database, tokenHash: string) {
  return db
    .select({
      token: apiTokens,
      user: {
        id: users.id,
        email: users.email,
        name: users.name,
        role: users.role,
        timeZone: users.timeZone,
      },
      institution: institutions,
      placement: institutionDatabases.binding,
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .leftJoin(institutions, eq(institutions.id, apiTokens.institutionId))
    .leftJoin(institutionDatabases, eq(institutionDatabases.institutionId, apiTokens.institutionId))
    .where(eq(apiTokens.tokenHash, tokenHash));
}

function toRead(row: Awaited<ReturnType<ReturnType<typeof tokenQuery>["get"]>>): Read {
  if (!row) return { state: "unknown" };
  // The directory is DB's: in another database the table is empty, and the token is where it is read.
  const placement = row.placement ?? "DB";
  if (row.token.revokedAt) return { state: "found", record: { state: "revoked" }, placement };
  const { token, user, institution } = row;
  return {
    state: "found",
    placement,
    record: {
      state: "active",
      principal: {
        token: {
          id: token.id,
          kind: token.kind,
          name: token.name,
          abilities: effectiveAbilities(token.abilities, user.role),
          granted: token.abilities,
          expiresAt: token.expiresAt,
        },
        user,
        institution: institution
          ? { id: institution.id, slug: institution.slug, name: institution.name, plan: institution.plan }
          : null,
        rateLimitPerMinute: rateLimitFor(user.role, institution),
      },
    },
  };
}
