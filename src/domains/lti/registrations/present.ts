import type { z } from "@hono/zod-openapi";
import type { ConsumerSchema } from "./schemas";
import type { ConsumerRow } from "./service";
import { toolUrls } from "./tool-urls";

export function presentConsumer(row: ConsumerRow, origin: string): z.infer<typeof ConsumerSchema> {
  return {
    id: row.id,
    institution_id: row.institutionId,
    name: row.name,
    issuer: row.issuer,
    client_id: row.clientId,
    deployment_ids: row.deploymentIds,
    auth_login_url: row.authLoginUrl,
    auth_token_url: row.authTokenUrl,
    jwks_url: row.jwksUrl,
    auth_token_audience: row.authTokenAudience,
    tool: toolUrls(origin, row.id),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
