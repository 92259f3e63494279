import type { z } from "@hono/zod-openapi";
import type { apiTokens } from "../../db/schema";
import type { TokenSchema } from "./schemas";

export function presentToken(row: typeof apiTokens.$inferSelect): z.infer<typeof TokenSchema> {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    abilities: row.abilities,
    prefix: row.prefix,
    user_id: row.userId,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
    expires_at: row.expiresAt,
  };
}
