import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerGetXapiBackfill } from "./backfill/routes/get-backfill";
import { registerListXapiBackfills } from "./backfill/routes/list-backfills";
import { registerStartXapiBackfill } from "./backfill/routes/start-backfill";
import { registerCreateXapiEndpoint } from "./routes/create-endpoint";
import { registerDeleteXapiEndpoint } from "./routes/delete-endpoint";
import { registerGetXapiEndpoint } from "./routes/get-endpoint";
import { registerGetProfile } from "./routes/get-profile";
import { registerListXapiEndpoints } from "./routes/list-endpoints";
import { registerListXapiStatements } from "./routes/list-statements";
import { registerTestXapiEndpoint } from "./routes/test-endpoint";
import { registerUpdateXapiEndpoint } from "./routes/update-endpoint";

/** The endpoints' API, and the Lingua xAPI profile every forwarded statement's IRIs resolve to. */
export function registerXapi(app: OpenAPIHono<AppEnv>) {
  registerListXapiEndpoints(app);
  registerCreateXapiEndpoint(app);
  registerGetXapiEndpoint(app);
  registerUpdateXapiEndpoint(app);
  registerDeleteXapiEndpoint(app);
  registerTestXapiEndpoint(app);
  registerListXapiStatements(app);
  registerStartXapiBackfill(app);
  registerListXapiBackfills(app);
  registerGetXapiBackfill(app);
  registerGetProfile(app);
}
