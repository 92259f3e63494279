import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../prefixes";
import { presentScimSettings } from "../present";
import { InstitutionParams, ScimSettingsSchema } from "../schemas";
import { readScimSettings } from "../tokens";

export const getScimSettingsRoute = tokenRoute("sso:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}/scim`,
  tags: ["Institutions"],
  operationId: "getScimSettings",
  summary: "SCIM provisioning settings",
  description:
    "The SCIM base URL to enter in the identity provider, how many SCIM tokens are live, and whether the enterprise extension's `department` becomes a group. Another institution's id: 404.",
  request: { params: InstitutionParams },
  responses: { 200: jsonResponse(ScimSettingsSchema, "The SCIM settings.") },
});

export function registerGetScimSettings(app: OpenAPIHono<AppEnv>) {
  app.openapi(getScimSettingsRoute, async (c) => {
    const settings = await readScimSettings(principalContext(c), { institutionId: c.req.valid("param").id });
    return c.json(presentScimSettings(settings, new URL(c.req.url).origin), 200);
  });
}
