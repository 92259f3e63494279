import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerGetEvent } from "./routes/get-event";
import { registerListEvents } from "./routes/list-events";

export function registerEvents(app: OpenAPIHono<AppEnv>) {
  registerListEvents(app);
  registerGetEvent(app);
}
