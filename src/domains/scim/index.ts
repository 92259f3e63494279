import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerCreateScimToken } from "./routes/create-scim-token";
import { registerGetScimSettings } from "./routes/get-scim-settings";
import { registerListScimTokens } from "./routes/list-scim-tokens";
import { registerPutScimSettings } from "./routes/put-scim-settings";
import { registerRevokeScimToken } from "./routes/revoke-scim-token";

/**
 * SCIM tokens and settings (documented API routes below `/api/institutions/{id}`, loaded in the
 * institutions route group). The SCIM service itself is `scimApp` (v2/app.ts), its own route group.
 */
export function registerScim(app: OpenAPIHono<AppEnv>) {
  registerListScimTokens(app);
  registerCreateScimToken(app);
  registerRevokeScimToken(app);
  registerGetScimSettings(app);
  registerPutScimSettings(app);
}
