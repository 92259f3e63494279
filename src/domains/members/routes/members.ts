import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { idempotencyHeaderShape, idempotent } from "../../../platform/http/idempotency";
import { paginate } from "../../../platform/http/pagination";
import { errorResponses, jsonBody, jsonResponse, tokenRoute } from "../../../platform/openapi";
import { INSTITUTIONS } from "../../institutions/prefixes";
import { presentMember } from "../../institutions/present";
import { InstitutionIdParam } from "../../institutions/schemas";
import { reinviteMember } from "../reinvite";
import {
  CreatedMemberSchema,
  CreateMemberBody,
  ListMembersQuery,
  MemberPageSchema,
  MemberParams,
  MemberSchema,
  ReinviteBody,
  UpdateMemberBody,
} from "../schemas";
import { createMember, getMember, listMembers, removeMember, updateMember } from "../service";

const TAGS = ["Members"];
const MEMBERS = `${INSTITUTIONS}/{id}/members` as const;

export const listMembersRoute = tokenRoute("members:read", {
  method: "get",
  path: MEMBERS,
  tags: TAGS,
  operationId: "listMembers",
  summary: "List an institution's members",
  description:
    "Filters `role`, `status`, `group`, `external_id` and `q` (name or e-mail contains); ordered by `name` (then id) unless `sort` says otherwise. Institution admins and instructors read their own institution's members, platform staff any institution's; another institution's id is 404.",
  request: { params: InstitutionIdParam, query: ListMembersQuery },
  responses: { 200: jsonResponse(MemberPageSchema, "A page of members.") },
});

export const createMemberRoute = tokenRoute("members:write", {
  method: "post",
  path: MEMBERS,
  tags: TAGS,
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

export const getMemberRoute = tokenRoute("members:read", {
  method: "get",
  path: `${MEMBERS}/{member}`,
  tags: TAGS,
  operationId: "getMember",
  summary: "Get a member",
  request: { params: MemberParams },
  responses: { 200: jsonResponse(MemberSchema, "The member.") },
});

export const updateMemberRoute = tokenRoute("members:write", {
  method: "patch",
  path: `${MEMBERS}/{member}`,
  tags: TAGS,
  operationId: "updateMember",
  summary: "Change a member",
  description:
    "Changes `name`, `role`, `status` (`active` or `suspended`), `external_id` or `groups` (replaced as a whole); fields left out keep their value. A role change applies to every session and token of the member from its very next request; a suspension revokes them all at once (the next request is 401). Nobody grants a role above their own (403); demoting or suspending the last active institution admin is `409 last_admin`; re-activating a suspended member needs a free seat (`409 seat_limit_reached`). Emits `member.updated` with the `changes`.",
  request: { params: MemberParams, body: jsonBody(UpdateMemberBody) },
  responses: {
    200: jsonResponse(MemberSchema, "The member as changed."),
    409: { ...errorResponses[409], description: "`last_admin`, `external_id_taken`, `seat_limit_reached`." },
  },
});

export const removeMemberRoute = tokenRoute("members:write", {
  method: "delete",
  path: `${MEMBERS}/{member}`,
  tags: TAGS,
  operationId: "removeMember",
  summary: "Remove a member",
  description:
    "Removes the member from the institution and revokes every session and token it holds at once (the next request with one is 401). Its learning history stays in the institution's reports. Removing the last active institution admin is `409 last_admin`. Emits `member.removed`.",
  request: { params: MemberParams },
  responses: {
    204: { description: "Removed." },
    409: { ...errorResponses[409], description: "`last_admin`." },
  },
});

export const reinviteMemberRoute = tokenRoute("members:write", {
  method: "post",
  path: `${INSTITUTIONS}/{id}/invitations`,
  tags: TAGS,
  operationId: "reinviteMember",
  summary: "Send a member a new invitation",
  description:
    "For an `invited` member (`member_id`) whose invitation was lost or expired: a new single-use `invitation_url`, valid 7 days, shown once; the previous one stops working. A member who is not `invited` is `409 conflict`; another institution's member 404.",
  request: { params: InstitutionIdParam, body: jsonBody(ReinviteBody) },
  responses: {
    201: jsonResponse(CreatedMemberSchema, "The member, with its new invitation URL."),
    409: { ...errorResponses[409], description: "The member is not `invited`." },
  },
});

/** A member as created or re-invited: with its invitation URL, shown this once. */
function withInvitation(created: {
  member: Parameters<typeof presentMember>[0];
  invitationUrl: string;
  invitationExpiresAt: string;
}) {
  return {
    ...presentMember(created.member),
    invitation_url: created.invitationUrl,
    invitation_expires_at: created.invitationExpiresAt,
  };
}

export function registerMemberRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(listMembersRoute, async (c) => {
    const { page, per_page, sort, ...filters } = c.req.valid("query");
    const { rows, total } = await listMembers({
      env: c.env,
      principal: c.var.principal,
      institutionId: c.req.valid("param").id,
      filters,
      sort,
      page: { page, per_page },
    });
    return c.json(paginate(c, { page, per_page }, total, rows.map(presentMember)), 200);
  });

  app.openapi(createMemberRoute, async (c) => {
    const body = c.req.valid("json");
    const institutionId = c.req.valid("param").id;
    const origin = new URL(c.req.url).origin;
    const created = await createMember({
      env: c.env,
      principal: c.var.principal,
      institutionId,
      input: {
        email: body.email,
        name: body.name,
        role: body.role,
        externalId: body.external_id ?? null,
        groups: body.groups ?? [],
      },
      origin,
    });
    c.header("Location", `${origin}/api/institutions/${institutionId}/members/${created.member.id}`);
    return c.json(withInvitation(created), 201);
  });

  app.openapi(getMemberRoute, async (c) => {
    const { id, member } = c.req.valid("param");
    return c.json(presentMember(await getMember(c.env, c.var.principal, id, member)), 200);
  });

  app.openapi(updateMemberRoute, async (c) => {
    const { id, member } = c.req.valid("param");
    const row = await updateMember({
      env: c.env,
      principal: c.var.principal,
      institutionId: id,
      memberId: member,
      patch: c.req.valid("json"),
    });
    return c.json(presentMember(row), 200);
  });

  app.openapi(reinviteMemberRoute, async (c) => {
    const created = await reinviteMember({
      env: c.env,
      principal: c.var.principal,
      institutionId: c.req.valid("param").id,
      memberId: c.req.valid("json").member_id,
      origin: new URL(c.req.url).origin,
    });
    return c.json(withInvitation(created), 201);
  });

  app.openapi(removeMemberRoute, async (c) => {
    const { id, member } = c.req.valid("param");
    await removeMember({ env: c.env, principal: c.var.principal, institutionId: id, memberId: member });
    return c.body(null, 204);
  });
}
