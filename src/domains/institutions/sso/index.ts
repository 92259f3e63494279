import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { registerGetSso } from "./routes/get-sso";
import { registerPutSso } from "./routes/put-sso";
import { registerVerifySsoDomain } from "./routes/verify-domain";

export function registerSso(app: OpenAPIHono<AppEnv>) {
  registerGetSso(app);
  registerPutSso(app);
  registerVerifySsoDomain(app);
}
