import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../env";
import { principalContext } from "../../../../platform/http/context-middleware";
import { paginate } from "../../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../../platform/openapi";
import { LTI_DEEP_LINKING } from "../../prefixes";
import { presentItem } from "../present";
import { DeepLinkingItemPageSchema, DeepLinkingLaunchParam, ListItemsQuery } from "../schemas";
import { listItems } from "../service";

export const listDeepLinkingItemsRoute = tokenRoute("content:read", {
  method: "get",
  path: `${LTI_DEEP_LINKING}/{launch}/items`,
  tags: ["LTI"],
  operationId: "listLtiDeepLinkingItems",
  summary: "List what a deep-linking launch may link",
  description:
    "The published courses, each with its lessons in order: what an instructor may link into the platform from this deep-linking launch (a course or a single lesson). Filters and order are those of `GET /api/courses` (`language`, `level`, `q`, `tag`, `sort`; default `title`, ties by id), paginated by course. Only the launch's own session token may call it (the `session.token` its callback answered, or the one its browser code was exchanged for): another token is 403, and a launch that is not a succeeded deep-linking launch of the caller's institution is 404. A deep-linking launch made in a learner's role is 403.",
  request: { params: DeepLinkingLaunchParam, query: ListItemsQuery },
  responses: { 200: jsonResponse(DeepLinkingItemPageSchema, "A page of courses with their lessons.") },
});

export function registerListDeepLinkingItems(app: OpenAPIHono<AppEnv>) {
  app.openapi(listDeepLinkingItemsRoute, async (c) => {
    const { page, per_page, ...filters } = c.req.valid("query");
    const { total, rows } = await listItems(principalContext(c), {
      launchId: c.req.valid("param").launch,
      filters,
      page: { page, per_page },
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentItem)), 200);
  });
}
