import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";

export function registerBulkRoutes(_app: OpenAPIHono<AppEnv>) {}
