import type { Hono } from "hono";
import type { AppEnv } from "../../../env";
import { ERROR_DOCS_PATH } from "../../../platform/error-catalogue";
import { limitByIpAtEdge } from "../../../platform/ratelimit/edge-ip-limit";
import { errorsPage } from "../errors-page";

/**
 * The error reference, where every problem's `type` points (`/api/docs/errors#<code>`); below the
 * reference page's prefix, so it needs no route group of its own. The public catalogue's per-IP limit.
 */
export function registerErrorsPage(app: Hono<AppEnv>) {
  app.get(ERROR_DOCS_PATH, limitByIpAtEdge("PUBLIC_RATE_LIMITER"), () => errorsPage());
}
