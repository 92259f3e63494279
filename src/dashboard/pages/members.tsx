import type { Role } from "../../db/schema";
import { MEMBER_STATUSES } from "../../db/schema";
import { MEMBER_ROLES, type MemberRole, mayGrant } from "../../domains/members/policy";
import type { MemberRow } from "../../domains/members/present";
import { Col, EmptyState, FilterBar, ListTable, Notice, Select, StatusBadge } from "../components";
import { ErrorSummary, When } from "../layout";
import { MEMBERS_PATH } from "../prefixes";
import type { DashboardSession } from "../session";

/** The members section's list and shared names; member.tsx holds one member's views, routes/members.tsx the handlers. */

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

export function roleLabel(role: Role): string {
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
