import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../prefixes";
import { presentScimSettings } from "../present";
import { InstitutionParams, PutScimSettingsBody, ScimSettingsSchema } from "../schemas";
import { putScimSettings } from "../tokens";

export const putScimSettingsRoute = tokenRoute("sso:write", {
  method: "put",
  path: `${INSTITUTIONS}/{id}/scim`,
  tags: ["Institutions"],
  operationId: "putScimSettings",
  summary: "Change the SCIM provisioning settings",
  description:
    "Whether the enterprise extension's `department` of a SCIM user becomes one of the member's groups. It applies to what the identity provider sends from now on (Okta and Entra send every user again on their next full sync). Another institution's id: 404.",
  request: { params: InstitutionParams, body: jsonBody(PutScimSettingsBody) },
  responses: { 200: jsonResponse(ScimSettingsSchema, "The SCIM settings.") },
});

export function registerPutScimSettings(app: OpenAPIHono<AppEnv>) {
  app.openapi(putScimSettingsRoute, async (c) => {
    const settings = await putScimSettings(principalContext(c), {
      institutionId: c.req.valid("param").id,
      departmentAsGroup: c.req.valid("json").department_as_group,
    });
    return c.json(presentScimSettings(settings, new URL(c.req.url).origin), 200);
  });
}
