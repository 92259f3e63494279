import type { Hono } from "hono";
import type { AppEnv } from "../../../env";
import { limitByIpAtEdge } from "../../../platform/ratelimit/edge-ip-limit";
import { docsPage } from "../docs-page";
import { DOCS } from "../prefixes";

/** The reference page over the OpenAPI document; the public catalogue's per-IP limit. */
export function registerDocsPage(app: Hono<AppEnv>) {
  app.get(DOCS, limitByIpAtEdge("PUBLIC_RATE_LIMITER"), () => docsPage());
}
