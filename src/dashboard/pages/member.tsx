import { mayGrant } from "../../domains/members/policy";
import type { MemberRow } from "../../domains/members/present";
import { ActionForm, ConfirmForm, CopyField, Notice, Select, StatusBadge } from "../components";
import { CsrfField, ErrorSummary, When } from "../layout";
import { MEMBERS_PATH } from "../prefixes";
import type { DashboardSession } from "../session";
import { grantableRoles, LABELS, memberPath, roleLabel, STATUS_LABELS } from "./members";

/** One member: the invitation form, the invitation link shown once, the member's page and its actions. */

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
