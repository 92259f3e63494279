import { eq } from "drizzle-orm";
import { apiTokens, institutions, users } from "../../db/schema";
import type { Database } from "../db";
import { effectiveAbilities } from "./abilities";
import { type Principal, rateLimitFor } from "./principal";

export type TokenRecord = { state: "active"; principal: Principal } | { state: "revoked" | "unknown" };

/** The one D1 read behind authentication, made by a token's Durable Object on a cache miss. */
export async function loadTokenRecord(db: Database, tokenHash: string): Promise<TokenRecord> {
  const row = await db
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
    })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .leftJoin(institutions, eq(institutions.id, apiTokens.institutionId))
    .where(eq(apiTokens.tokenHash, tokenHash))
    .get();
  if (!row) return { state: "unknown" };
  if (row.token.revokedAt) return { state: "revoked" };
  const { token, user, institution } = row;
  return {
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
  };
}
