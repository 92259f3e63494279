import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonResponse, tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../prefixes";
import { presentInstitution } from "../present";
import { InstitutionIdParam, InstitutionSchema } from "../schemas";
import { getInstitution } from "../service";

export const getInstitutionRoute = tokenRoute("institutions:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}`,
  tags: ["Institutions"],
  operationId: "getInstitution",
  summary: "Get an institution",
  description: "Your own institution (platform staff: any). Another institution's id: 404.",
  request: { params: InstitutionIdParam },
  responses: { 200: jsonResponse(InstitutionSchema, "The institution.") },
});

export function registerGetInstitution(app: OpenAPIHono<AppEnv>) {
  app.openapi(getInstitutionRoute, async (c) => {
    const { institution, memberCount } = await getInstitution(principalContext(c), c.req.valid("param").id);
    return c.json(presentInstitution(institution, memberCount), 200);
  });
}
