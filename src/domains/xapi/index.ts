import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerCreateXapiEndpoint } from "./routes/create-endpoint";
import { registerDeleteXapiEndpoint } from "./routes/delete-endpoint";
import { registerGetXapiEndpoint } from "./routes/get-endpoint";
import { registerListXapiEndpoints } from "./routes/list-endpoints";
import { registerListXapiStatements } from "./routes/list-statements";
import { registerTestXapiEndpoint } from "./routes/test-endpoint";
import { registerUpdateXapiEndpoint } from "./routes/update-endpoint";

/** The endpoints' API (the xAPI profile's page is registered beside it). */
export function registerXapi(app: OpenAPIHono<AppEnv>) {
  registerListXapiEndpoints(app);
  registerCreateXapiEndpoint(app);
  registerGetXapiEndpoint(app);
  registerUpdateXapiEndpoint(app);
  registerDeleteXapiEndpoint(app);
  registerTestXapiEndpoint(app);
  registerListXapiStatements(app);
}
