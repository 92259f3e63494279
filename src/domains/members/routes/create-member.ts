import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { principalContext } from "../../../platform/http/context-middleware";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { errorResponses } from "../../../platform/openapi-problems";
import { MEMBERS } from "../paths";
import { presentWithInvitation } from "../present";
import { CreatedMemberSchema, CreateMemberBody, InstitutionIdParam } from "../schemas";
import { createMember } from "../service";

export const createMemberRoute = tokenRoute("members:write", {
  method: "post",
  path: MEMBERS,
  tags: ["Members"],
  operationId: "createMember",
  summary: "Add a member",
  description:
    "Creates an `invited` member with no usable password; the answer carries its single-use `invitation_url` (valid 7 days, shown once). Members who sign in through SSO never need it. Nobody grants a role above their own (403). An e-mail address that already belongs to an account is `409 email_taken`, an external_id another member has `409 external_id_taken`, no free seat `409 seat_limit_reached`.",
  middleware: [idempotent],
  request: {
    params: InstitutionIdParam,
    headers: z.object(idempotencyHeaderShape),
    body: jsonBody(CreateMemberBody),
  },
  responses: {
    201: jsonResponse(CreatedMemberSchema, "The member, with its invitation URL."),
    409: {
      ...errorResponses[409],
      description:
        "`email_taken`, `external_id_taken`, `seat_limit_reached`, or an Idempotency-Key in flight.",
    },
  },
});

export function registerCreateMember(app: OpenAPIHono<AppEnv>) {
  app.openapi(createMemberRoute, async (c) => {
    const body = c.req.valid("json");
    const institutionId = c.req.valid("param").id;
    const origin = new URL(c.req.url).origin;
    const created = await createMember(principalContext(c), {
      institutionId,
      member: {
        email: body.email,
        name: body.name,
        role: body.role,
        externalId: body.external_id ?? null,
        groups: body.groups ?? [],
      },
      origin,
    });
    c.header("Location", `${origin}/api/institutions/${institutionId}/members/${created.member.id}`);
    return c.json(presentWithInvitation(created), 201);
  });
}
