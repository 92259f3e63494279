import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { paginate } from "../../../platform/http/pagination";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { listSignIns, presentSignIn } from "../log";
import { INSTITUTIONS } from "../prefixes";
import { reasonsText, SsoLogParams, SsoLogQuery, SsoSignInPageSchema } from "../schemas";

export const listSsoSignInsRoute = tokenRoute("sso:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/sso/log`,
  tags: ["Institutions"],
  operationId: "listSsoSignIns",
  summary: "List SSO sign-ins (the SSO log)",
  description: `Every sign-in through the institution's identity provider, accepted or refused, newest first (ties by id): so an administrator can see why a colleague was turned away. A refusal carries \`reason\` and \`detail\`. Reasons: ${reasonsText}. Refusals before the institution is known (a \`state\` nobody issued) belong to no institution and are not listed. Another institution's id: 404.`,
  request: { params: SsoLogParams, query: SsoLogQuery },
  responses: { 200: jsonResponse(SsoSignInPageSchema, "A page of sign-ins.") },
});

export function registerListSsoSignIns(app: OpenAPIHono<AppEnv>) {
  app.openapi(listSsoSignInsRoute, async (c) => {
    const { page, per_page, ...filters } = c.req.valid("query");
    const { rows, total } = await listSignIns(principalContext(c), {
      institutionId: c.req.valid("param").id,
      filters,
      page: { page, per_page },
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentSignIn)), 200);
  });
}
