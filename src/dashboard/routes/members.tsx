import type { Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { CreateMemberBody, ListMembersQuery, UpdateMemberBody } from "../../domains/members/schemas";
import {
  createMember,
  getMember,
  listMembers,
  reinviteMember,
  removeMember,
  updateMember,
} from "../../domains/members/service";
import type { AppEnv } from "../../env";
import { enforce, holdsAbility } from "../../platform/auth/policy";
import { institutionOf, sectionPage } from "../components";
import { field, fieldMessages, formOf, formRefusal, issuesOf, pageNumber } from "../forms";
import { groupsOf, InvitationShown, type InviteForm, InviteMemberForm, MemberDetail } from "../pages/member";
import {
  LABELS,
  MEMBERS_PER_PAGE,
  type MemberFilterForm,
  MemberList,
  memberPath,
  NOTICES,
} from "../pages/members";
import { MEMBERS_PATH } from "../prefixes";
import { checkCsrf, signedIn } from "../session";

export const SECTION = "members";

export function page(c: Context<AppEnv>, title: string, children: Child, status = 200) {
  return sectionPage(c, { title, section: SECTION, status }, children);
}

async function renderDetail(
  c: Context<AppEnv>,
  memberId: string,
  options: { errors?: string[]; status?: number } = {},
) {
  const session = c.var.dashboard;
  const member = await getMember(session.ctx, {
    institutionId: institutionOf(session).id,
    memberId,
  });
  return page(
    c,
    member.name,
    <MemberDetail
      session={session}
      member={member}
      notice={NOTICES[c.req.query("notice") ?? ""]}
      errors={options.errors ?? []}
      mayWrite={holdsAbility(session.principal, "members:write").allowed}
    />,
    options.status,
  );
}

/**
 * A change of one member through `updateMember` (the members policy and rules: role ceiling, last
 * admin, seats), validated by the API's own `UpdateMemberBody`; a refusal is shown on the member's
 * page and changes nothing.
 */
async function changeMember(c: Context<AppEnv>, patch: Record<string, unknown>, notice: string) {
  const session = c.var.dashboard;
  enforce(holdsAbility(session.principal, "members:write"));
  const memberId = c.req.param("id") ?? "";
  const parsed = UpdateMemberBody.safeParse(patch);
  if (!parsed.success)
    return renderDetail(c, memberId, {
      errors: fieldMessages(issuesOf(parsed.error.issues), LABELS),
      status: 422,
    });
  try {
    await updateMember(session.ctx, {
      institutionId: institutionOf(session).id,
      memberId,
      patch: parsed.data,
    });
  } catch (error) {
    const refused = formRefusal(error, LABELS);
    if (!refused || refused.status === 404) throw error;
    return renderDetail(c, memberId, { errors: refused.messages, status: refused.status });
  }
  return c.redirect(`${memberPath(memberId)}?notice=${notice}`, 303);
}

/**
 * Members: the members domain's services behind the abilities of `/api/institutions/{id}/members`
 * — search and filter, invite (the invitation link shown once), change the role, suspend and
 * reactivate, re-invite, remove. Bulk uploads are routes/bulk-upload.tsx.
 */
export function registerMembers(app: Hono<AppEnv>) {
  app.get(MEMBERS_PATH, signedIn, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:read"));
    const institution = institutionOf(session);
    const pageNo = pageNumber(c.req.query("page"));
    const filters: MemberFilterForm = {
      q: (c.req.query("q") ?? "").trim(),
      role: c.req.query("role") ?? "",
      status: c.req.query("status") ?? "",
      group: (c.req.query("group") ?? "").trim(),
    };
    // The API's own query schema: the same filters, the same messages.
    const parsed = ListMembersQuery.safeParse(
      Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== "")),
    );
    const errors = parsed.success ? [] : fieldMessages(issuesOf(parsed.error.issues), LABELS);
    const { q, role, status, group } = parsed.success ? parsed.data : {};
    const { rows, total } = await listMembers(session.ctx, {
      institutionId: institution.id,
      filters: { q, role, status, group },
      sort: "name",
      page: { page: pageNo, per_page: MEMBERS_PER_PAGE },
    });
    return page(
      c,
      "Members",
      <MemberList
        session={session}
        rows={rows}
        total={total}
        page={pageNo}
        filters={filters}
        errors={errors}
        notice={NOTICES[c.req.query("notice") ?? ""]}
        mayWrite={holdsAbility(session.principal, "members:write").allowed}
      />,
      errors.length > 0 ? 422 : 200,
    );
  });

  const inviteForm = (c: Context<AppEnv>, form: InviteForm, errors: string[], status = 200) =>
    page(
      c,
      "Invite a member",
      <InviteMemberForm session={c.var.dashboard} form={form} errors={errors} />,
      status,
    );

  app.get(`${MEMBERS_PATH}/new`, signedIn, (c) => {
    enforce(holdsAbility(c.var.dashboard.principal, "members:write"));
    institutionOf(c.var.dashboard);
    return inviteForm(c, { email: "", name: "", role: "learner", groups: "", externalId: "" }, []);
  });

  app.post(MEMBERS_PATH, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:write"));
    const institution = institutionOf(session);
    const posted = await formOf(c);
    const form: InviteForm = {
      email: field(posted, "email").trim(),
      name: field(posted, "name").trim(),
      role: field(posted, "role"),
      groups: field(posted, "groups"),
      externalId: field(posted, "external_id").trim(),
    };
    const parsed = CreateMemberBody.safeParse({
      email: form.email,
      name: form.name,
      role: form.role,
      groups: groupsOf(form.groups),
      ...(form.externalId ? { external_id: form.externalId } : {}),
    });
    if (!parsed.success)
      return inviteForm(c, form, fieldMessages(issuesOf(parsed.error.issues), LABELS), 422);
    try {
      const created = await createMember(session.ctx, {
        institutionId: institution.id,
        member: {
          email: parsed.data.email,
          name: parsed.data.name,
          role: parsed.data.role,
          externalId: parsed.data.external_id ?? null,
          groups: parsed.data.groups ?? [],
        },
        origin: new URL(c.req.url).origin,
      });
      return page(
        c,
        "Member invited",
        <InvitationShown
          title="Member invited"
          member={created.member}
          url={created.invitationUrl}
          expiresAt={created.invitationExpiresAt}
        />,
        201,
      );
    } catch (error) {
      const refused = formRefusal(error, LABELS);
      if (!refused) throw error;
      return inviteForm(c, form, refused.messages, refused.status);
    }
  });

  app.get(`${MEMBERS_PATH}/:id`, signedIn, (c) => {
    enforce(holdsAbility(c.var.dashboard.principal, "members:read"));
    return renderDetail(c, c.req.param("id"));
  });

  app.post(`${MEMBERS_PATH}/:id/role`, signedIn, checkCsrf, async (c) =>
    changeMember(c, { role: field(await formOf(c), "role") }, "role"),
  );

  app.post(`${MEMBERS_PATH}/:id/status`, signedIn, checkCsrf, async (c) => {
    const status = field(await formOf(c), "status");
    return changeMember(c, { status }, status === "active" ? "active" : "suspended");
  });

  app.post(`${MEMBERS_PATH}/:id/reinvite`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:write"));
    const memberId = c.req.param("id");
    try {
      const again = await reinviteMember(session.ctx, {
        institutionId: institutionOf(session).id,
        memberId,
        origin: new URL(c.req.url).origin,
      });
      return page(
        c,
        "New invitation link",
        <InvitationShown
          title="New invitation link"
          member={again.member}
          url={again.invitationUrl}
          expiresAt={again.invitationExpiresAt}
        />,
      );
    } catch (error) {
      const refused = formRefusal(error, LABELS);
      if (!refused || refused.status === 404) throw error;
      return renderDetail(c, memberId, { errors: refused.messages, status: refused.status });
    }
  });

  app.post(`${MEMBERS_PATH}/:id/remove`, signedIn, checkCsrf, async (c) => {
    const session = c.var.dashboard;
    enforce(holdsAbility(session.principal, "members:write"));
    const memberId = c.req.param("id");
    try {
      await removeMember(session.ctx, { institutionId: institutionOf(session).id, memberId });
    } catch (error) {
      const refused = formRefusal(error, LABELS);
      if (!refused || refused.status === 404) throw error;
      return renderDetail(c, memberId, { errors: refused.messages, status: refused.status });
    }
    return c.redirect(`${MEMBERS_PATH}?notice=removed`, 303);
  });
}
