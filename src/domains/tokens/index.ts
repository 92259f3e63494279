import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerCreateToken } from "./routes/create-token";
import { registerListTokens } from "./routes/list-tokens";
import { registerRevokeToken } from "./routes/revoke-token";

export function registerTokens(app: OpenAPIHono<AppEnv>) {
  registerListTokens(app);
  registerCreateToken(app);
  registerRevokeToken(app);
}
