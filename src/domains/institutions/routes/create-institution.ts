import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { createInstitution } from "../creation";
import { INSTITUTIONS } from "../prefixes";
import { presentInstitution } from "../present";
import { CreatedInstitutionSchema, CreateInstitutionBody } from "../schemas";

export const createInstitutionRoute = tokenRoute("institutions:write", {
  method: "post",
  path: INSTITUTIONS,
  tags: ["Institutions"],
  operationId: "createInstitution",
  summary: "Create an institution",
  description:
    "Platform staff only. `slug` is derived from the name when left out; a slug already taken is `409 slug_taken`. `rate_limit_per_minute` only with the `enterprise` plan. With `admin`, the first institution admin is created (invited) in the same step and its invitation URL is in the answer. The institution lives in one D1 database: `database` as sent, or the least full one; the answer's `database` says which.",
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateInstitutionBody) },
  responses: {
    201: jsonResponse(CreatedInstitutionSchema, "The institution."),
    409: { ...errorResponses[409], description: "`slug_taken`, `email_taken` (the admin's e-mail)." },
  },
});

export function registerCreateInstitution(app: OpenAPIHono<AppEnv>) {
  app.openapi(createInstitutionRoute, async (c) => {
    const origin = new URL(c.req.url).origin;
    const created = await createInstitution(principalContext(c), { input: c.req.valid("json"), origin });
    c.header("Location", `${origin}/api/institutions/${created.institution.id}`);
    const admin = created.admin
      ? {
          id: created.admin.id,
          invitation_url: created.admin.invitationUrl,
          invitation_expires_at: created.admin.invitationExpiresAt,
        }
      : null;
    return c.json(
      { ...presentInstitution(created.institution, created.memberCount), admin, database: created.database },
      201,
    );
  });
}
