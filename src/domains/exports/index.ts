import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerCreateExport } from "./routes/create-export";
import { registerDownloadExport } from "./routes/download-export";
import { registerGetExport } from "./routes/get-export";
import { registerListExports } from "./routes/list-exports";

export function registerExports(app: OpenAPIHono<AppEnv>) {
  registerListExports(app);
  registerCreateExport(app);
  registerGetExport(app);
  registerDownloadExport(app);
}
