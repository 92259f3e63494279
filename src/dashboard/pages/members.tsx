import type { Role } from "../../db/schema";
import { MEMBER_STATUSES } from "../../db/schema";
import { MEMBER_ROLES, type MemberRole, mayGrant } from "../../domains/members/policy";
import type { MemberRow } from "../../domains/members/present";
import {
  ActionForm,
  Col,
  ConfirmForm,
  CopyField,
  EmptyState,
  FilterBar,
  ListTable,
  Notice,
  Select,
  StatusBadge,
} from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import { MEMBERS_PATH } from "../prefixes";
import type { DashboardSession } from "../session";

/** The members section's views and form reading; routes/members.tsx holds the handlers. */

export const MEMBERS_PER_PAGE = 25;
export const LABELS = {
  email: "E-mail",
  name: "Name",
  role: "Role",
  groups: "Groups",
  external_id: "External id",
  status: "Status",
  q: "Search",
  group: "Group",
};
export const ROLE_LABELS: Record<MemberRole, string> = {
  institution_admin: "Institution admin",
  instructor: "Instructor",
  learner: "Learner",
};
export const STATUS_LABELS: Record<(typeof MEMBER_STATUSES)[number], string> = {
  invited: "Invited",
  active: "Active",
  suspended: "Suspended",
};
export const NOTICES: Record<string, string> = {
  role: "The role was changed; it applies from the member's next request.",
  suspended: "The member was suspended: every session and token of theirs stopped working.",
  active: "The member was reactivated and can sign in again.",
  removed: "The member was removed from the institution; their learning history stays in your reports.",
};

export const memberPath = (id: string) => `${MEMBERS_PATH}/${encodeURIComponent(id)}`;

/** The roles this person may give (the members policy's ceiling), as form options. */
export function grantableRoles(session: DashboardSession): { value: MemberRole; label: string }[] {
  return MEMBER_ROLES.filter((r) => mayGrant(session.principal.user.role, r)).map((r) => ({
    value: r,
    label: ROLE_LABELS[r],
  }));
}

function roleLabel(role: Role): string {
  return ROLE_LABELS[role as MemberRole] ?? role;
}

export interface MemberFilterForm {
  q: string;
  role: string;
  status: string;
  group: string;
}

export function MemberList({
  session,
  rows,
  total,
  page,
  filters,
  errors,
  notice,
  mayWrite,
}: {
  session: DashboardSession;
  rows: MemberRow[];
  total: number;
  page: number;
  filters: MemberFilterForm;
  errors: string[];
  notice?: string;
  mayWrite: boolean;
}) {
  const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== ""));
  const filtered = Object.keys(query).length > 0;
  return (
    <>
      <h1>Members</h1>
      <Notice text={notice} />
      <p>
        The people of {session.institution?.name ?? "your institution"}: learners, instructors and
        administrators. Invited members take a seat until they are removed.
      </p>
      {mayWrite ? (
        <div class="actions">
          <a class="button" href={`${MEMBERS_PATH}/new`}>
            Invite member
          </a>
          <a class="button secondary" href={`${MEMBERS_PATH}/bulk`}>
            Upload a CSV
          </a>
        </div>
      ) : null}
      <ErrorSummary errors={errors} />
      <FilterBar path={MEMBERS_PATH} label="Filter the members" active={filtered}>
        <div class="field">
          <label for="q">{LABELS.q}</label>
          <input
            id="q"
            name="q"
            type="search"
            maxlength={100}
            value={filters.q}
            placeholder="Name or e-mail"
          />
        </div>
        <Select
          id="role"
          label={LABELS.role}
          any="Every role"
          value={filters.role}
          options={MEMBER_ROLES.map((r) => ({ value: r, label: ROLE_LABELS[r] }))}
        />
        <Select
          id="status"
          label={LABELS.status}
          any="Every status"
          value={filters.status}
          options={MEMBER_STATUSES.map((s) => ({ value: s, label: STATUS_LABELS[s] }))}
        />
        <div class="field">
          <label for="group">{LABELS.group}</label>
          <input id="group" name="group" type="text" maxlength={100} value={filters.group} />
        </div>
      </FilterBar>
      <ListTable
        label="Members"
        count={rows.length}
        total={total}
        path={MEMBERS_PATH}
        query={query}
        page={page}
        perPage={MEMBERS_PER_PAGE}
        empty={
          filtered ? (
            <EmptyState title="No member matches these filters">
              <p>
                Change the filters, or <a href={MEMBERS_PATH}>show every member</a>.
              </p>
            </EmptyState>
          ) : (
            <EmptyState title="No members yet">
              <p>Invite your first member, or upload a CSV file from your SIS or HR system.</p>
            </EmptyState>
          )
        }
        head={
          <>
            <Col>Name</Col>
            <Col>Role</Col>
            <Col>Status</Col>
            <Col>Groups</Col>
            <Col>Last active</Col>
          </>
        }
        rows={rows.map((m) => (
          <tr>
            <th scope="row">
              <a href={memberPath(m.id)}>{m.name}</a>
              <span class="hint"> {m.email}</span>
            </th>
            <td>{roleLabel(m.role)}</td>
            <td>
              <StatusBadge text={STATUS_LABELS[m.status]} warn={m.status === "suspended"} />
            </td>
            <td>
              {m.groups.map((g) => (
                <span class="badge">{g}</span>
              ))}
            </td>
            <td>
              <When iso={m.lastActiveAt} never="Never" />
            </td>
          </tr>
        ))}
      />
    </>
  );
}

export interface InviteForm {
  email: string;
  name: string;
  role: string;
  groups: string;
  externalId: string;
}

/** Groups as typed in one field: separated by commas, semicolons or lines. */
export function groupsOf(text: string): string[] {
  return text
    .split(/[,;\n]/)
    .map((g) => g.trim())
    .filter((g) => g !== "");
}

export function InviteMemberForm({
  session,
  form,
  errors,
}: {
  session: DashboardSession;
  form: InviteForm;
  errors: string[];
}) {
  return (
    <>
      <h1>Invite a member</h1>
      <ErrorSummary errors={errors} />
      <form method="post" action={MEMBERS_PATH}>
        <CsrfField token={session.csrf} />
        <label for="email">{LABELS.email}</label>
        <input id="email" name="email" type="email" required maxlength={254} value={form.email} />
        <label for="name">{LABELS.name}</label>
        <input id="name" name="name" type="text" required maxlength={200} value={form.name} />
        <Select id="role" label={LABELS.role} value={form.role} options={grantableRoles(session)} />
        <label for="groups">{LABELS.groups}</label>
        <p class="hint" id="groups-hint">
          Optional: classes or departments, separated by commas, e.g. “Year 7, French”.
        </p>
        <input id="groups" name="groups" type="text" value={form.groups} aria-describedby="groups-hint" />
        <label for="external_id">{LABELS.external_id}</label>
        <p class="hint" id="external-id-hint">
          Optional: the member's id in your SIS or HR system, unique within the institution.
        </p>
        <input
          id="external_id"
          name="external_id"
          type="text"
          maxlength={200}
          value={form.externalId}
          aria-describedby="external-id-hint"
        />
        <div class="actions">
          <button type="submit">Invite member</button>
          <a class="button secondary" href={MEMBERS_PATH}>
            Cancel
          </a>
        </div>
      </form>
    </>
  );
}

/** The invitation URL of a new or re-invited member: shown once, to send through your own channel. */
export function InvitationShown({
  member,
  url,
  expiresAt,
  title,
}: {
  member: MemberRow;
  url: string;
  expiresAt: string;
  title: string;
}) {
  return (
    <>
      <h1>{title}</h1>
      <p class="notice" role="status">
        {`${member.name} (${member.email}) is invited. Copy the invitation link now and send it to them: it is shown only this once.`}
      </p>
      <div class="card">
        <CopyField
          id="invitation-url"
          label="Invitation link"
          value={url}
          hint={
            <>
              Single use, valid until <When iso={expiresAt} />. The person opens it and chooses a password.
            </>
          }
        />
      </div>
      <div class="actions">
        <a class="button" href={memberPath(member.id)}>
          Go to the member
        </a>
        <a class="button secondary" href={`${MEMBERS_PATH}/new`}>
          Invite another
        </a>
      </div>
    </>
  );
}

export function MemberDetail({
  session,
  member,
  notice,
  errors,
  mayWrite,
}: {
  session: DashboardSession;
  member: MemberRow;
  notice?: string;
  errors: string[];
  mayWrite: boolean;
}) {
  const path = memberPath(member.id);
  // What this person may change: the members policy's ceiling (the service checks it again).
  const changeable = mayWrite && mayGrant(session.principal.user.role, member.role);
  const self = member.id === session.principal.user.id;
  return (
    <>
      <h1>{member.name}</h1>
      <Notice text={notice} />
      <ErrorSummary errors={errors} />
      <div class="card">
        <dl class="values">
          <dt>{LABELS.email}</dt>
          <dd>{member.email}</dd>
          <dt>{LABELS.role}</dt>
          <dd>{roleLabel(member.role)}</dd>
          <dt>{LABELS.status}</dt>
          <dd>
            <StatusBadge text={STATUS_LABELS[member.status]} warn={member.status === "suspended"} />
          </dd>
          <dt>{LABELS.groups}</dt>
          <dd>{member.groups.length > 0 ? member.groups.join(", ") : "None"}</dd>
          <dt>{LABELS.external_id}</dt>
          <dd>{member.externalId ? <code>{member.externalId}</code> : "None"}</dd>
          <dt>Member since</dt>
          <dd>
            <When iso={member.createdAt} />
          </dd>
          <dt>Last active</dt>
          <dd>
            <When iso={member.lastActiveAt} never="Never" />
          </dd>
        </dl>
      </div>
      {changeable ? (
        <>
          <section aria-labelledby="role-h" class="card">
            <h2 id="role-h">Change the role</h2>
            <form method="post" action={`${path}/role`}>
              <CsrfField token={session.csrf} />
              <Select id="role" label="New role" value={member.role} options={grantableRoles(session)} />
              <div class="actions">
                <button type="submit" class="secondary">
                  Change role
                </button>
              </div>
            </form>
          </section>
          <section aria-labelledby="access-h" class="card">
            <h2 id="access-h">Access</h2>
            {member.status === "invited" ? (
              <ActionForm
                action={`${path}/reinvite`}
                csrf={session.csrf}
                button="New invitation link"
                secondary
              />
            ) : null}
            {member.status === "suspended" ? (
              <ActionForm action={`${path}/status`} csrf={session.csrf} button="Reactivate member" secondary>
                <input type="hidden" name="status" value="active" />
              </ActionForm>
            ) : (
              <ConfirmForm
                action={`${path}/status`}
                csrf={session.csrf}
                summary="Suspend…"
                text={`Suspend ${member.name}? Every session and API token of theirs stops working at once; you can reactivate them later.${self ? " This is you: you will be signed out." : ""}`}
                button="Suspend member"
              >
                <input type="hidden" name="status" value="suspended" />
              </ConfirmForm>
            )}
            <ConfirmForm
              action={`${path}/remove`}
              csrf={session.csrf}
              summary="Remove from the institution…"
              text={`Remove ${member.name} from the institution? They can no longer sign in and their tokens are revoked; their learning history stays in your reports. This cannot be undone.`}
              button="Remove member"
            />
          </section>
        </>
      ) : null}
      <div class="actions">
        <a class="button secondary" href={MEMBERS_PATH}>
          Back to members
        </a>
      </div>
    </>
  );
}
