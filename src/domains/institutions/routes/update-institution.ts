import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../prefixes";
import { presentInstitution } from "../present";
import { InstitutionIdParam, InstitutionSchema, UpdateInstitutionBody } from "../schemas";
import { updateInstitution } from "../service";

// `members:write`: an institution's settings go with administering it (its admins hold this ability;
// `institutions:write` is platform staff's). Changing plan, limit or seats also needs
// `institutions:write`: a rule of `mayUpdateInstitution` (policy.ts).
export const updateInstitutionRoute = tokenRoute("members:write", {
  method: "patch",
  path: `${INSTITUTIONS}/{id}`,
  tags: ["Institutions"],
  operationId: "updateInstitution",
  summary: "Change an institution",
  description:
    "An institution admin changes `name`, `branding` (fields set to null are cleared, fields left out kept), `locale` and `time_zone`. `plan`, `rate_limit_per_minute` (Enterprise only) and `seats` only platform staff, whose token must also hold `institutions:write` to change them (403 otherwise). A plan or limit change applies to every token of the institution from its very next request. Lowering `seats` below the members already invited or active keeps them, but no new member can be added until enough seats are free.",
  request: { params: InstitutionIdParam, body: jsonBody(UpdateInstitutionBody) },
  responses: { 200: jsonResponse(InstitutionSchema, "The institution as changed.") },
});

export function registerUpdateInstitution(app: OpenAPIHono<AppEnv>) {
  app.openapi(updateInstitutionRoute, async (c) => {
    const { institution, memberCount } = await updateInstitution(principalContext(c), {
      id: c.req.valid("param").id,
      input: c.req.valid("json"),
    });
    return c.json(presentInstitution(institution, memberCount), 200);
  });
}
