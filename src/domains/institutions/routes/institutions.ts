import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { paginate } from "../../../platform/http/pagination";
import { errorResponses, jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../prefixes";
import { presentInstitution } from "../present";
import {
  CreateInstitutionBody,
  InstitutionIdParam,
  InstitutionPageSchema,
  InstitutionSchema,
  ListInstitutionsQuery,
  UpdateInstitutionBody,
} from "../schemas";
import { createInstitution, getInstitution, listInstitutions, updateInstitution } from "../service";

const TAGS = ["Institutions"];

export const listInstitutionsRoute = tokenRoute("institutions:read", {
  method: "get",
  path: INSTITUTIONS,
  tags: TAGS,
  operationId: "listInstitutions",
  summary: "List institutions",
  description:
    "Platform staff see every institution (filters `q`, `plan`); everybody else only their own. Ordered by name, ties by id.",
  request: { query: ListInstitutionsQuery },
  responses: { 200: jsonResponse(InstitutionPageSchema, "A page of institutions.") },
});

const CreatedInstitutionSchema = InstitutionSchema.extend({
  admin: z
    .object({
      id: z.string(),
      invitation_url: z.url().openapi({ description: "Shown once; single-use, valid 7 days." }),
      invitation_expires_at: z.string(),
    })
    .nullable()
    .openapi({ description: "The first admin, when `admin` was sent; null otherwise." }),
}).openapi("CreatedInstitution");

export const createInstitutionRoute = tokenRoute("institutions:write", {
  method: "post",
  path: INSTITUTIONS,
  tags: TAGS,
  operationId: "createInstitution",
  summary: "Create an institution",
  description:
    "Platform staff only. `slug` is derived from the name when left out; a slug already taken is `409 slug_taken`. `rate_limit_per_minute` only with the `enterprise` plan. With `admin`, the first institution admin is created (invited) in the same step and its invitation URL is in the answer.",
  middleware: [idempotent],
  request: { headers: z.object(idempotencyHeaderShape), body: jsonBody(CreateInstitutionBody) },
  responses: {
    201: jsonResponse(CreatedInstitutionSchema, "The institution."),
    409: { ...errorResponses[409], description: "`slug_taken`, `email_taken` (the admin's e-mail)." },
  },
});

export const getInstitutionRoute = tokenRoute("institutions:read", {
  method: "get",
  path: `${INSTITUTIONS}/{id}`,
  tags: TAGS,
  operationId: "getInstitution",
  summary: "Get an institution",
  description: "Your own institution (platform staff: any). Another institution's id: 404.",
  request: { params: InstitutionIdParam },
  responses: { 200: jsonResponse(InstitutionSchema, "The institution.") },
});

export const updateInstitutionRoute = tokenRoute("institutions:read", {
  method: "patch",
  path: `${INSTITUTIONS}/{id}`,
  tags: TAGS,
  operationId: "updateInstitution",
  summary: "Change an institution",
  description:
    "An institution admin changes `name`, `branding` (fields set to null are cleared, fields left out kept), `locale` and `time_zone` with a token that also holds `members:write`; `plan`, `rate_limit_per_minute` (Enterprise only) and `seats` only platform staff, with `institutions:write` (403 otherwise). A plan or limit change applies to every token of the institution from its very next request. Lowering `seats` below the members already invited or active keeps them, but no new member can be added until enough seats are free.",
  request: { params: InstitutionIdParam, body: jsonBody(UpdateInstitutionBody) },
  responses: { 200: jsonResponse(InstitutionSchema, "The institution as changed.") },
});

export function registerInstitutionRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listInstitutionsRoute, async (c) => {
    const { page, per_page, q, plan } = c.req.valid("query");
    const { rows, total } = await listInstitutions({
      env: c.env,
      principal: c.var.principal,
      page: { page, per_page },
      q,
      plan,
    });
    const data = rows.map((r) => presentInstitution(r.institution, r.memberCount));
    return c.json(paginate(c, { page, per_page }, total, data), 200);
  });

  app.openapi(createInstitutionRoute, async (c) => {
    const origin = new URL(c.req.url).origin;
    const created = await createInstitution({
      env: c.env,
      principal: c.var.principal,
      input: c.req.valid("json"),
      origin,
    });
    c.header("Location", `${origin}/api/institutions/${created.institution.id}`);
    const admin = created.admin
      ? {
          id: created.admin.id,
          invitation_url: created.admin.invitationUrl,
          invitation_expires_at: created.admin.invitationExpiresAt,
        }
      : null;
    return c.json({ ...presentInstitution(created.institution, created.memberCount), admin }, 201);
  });

  app.openapi(getInstitutionRoute, async (c) => {
    const { institution, memberCount } = await getInstitution(
      c.env,
      c.var.principal,
      c.req.valid("param").id,
    );
    return c.json(presentInstitution(institution, memberCount), 200);
  });

  app.openapi(updateInstitutionRoute, async (c) => {
    const { institution, memberCount } = await updateInstitution({
      env: c.env,
      principal: c.var.principal,
      id: c.req.valid("param").id,
      input: c.req.valid("json"),
    });
    return c.json(presentInstitution(institution, memberCount), 200);
  });
}
