import type { BulkOutcome, MemberStatus, Role } from "../../../db/schema";
import { newId } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { PERSON_NAME, sanitizeDisplayText } from "../../../platform/text";
import { type MemberChanges, sameGroups } from "../events";
import { ATTEMPTS } from "../member-change";
import { type MemberRole, mayGrant } from "../policy";
import type { CsvRow } from "./csv";
import { EMAILS_TAKEN, type IndexedMemberRow, MEMBER_INDEX, type TakenEmailRow } from "./sql";

/** A member as the planner sees it: what a row is compared with and what it changes. */
export interface IndexedMember {
  id: string;
  email: string;
  name: string;
  role: Role;
  status: MemberStatus;
  externalId: string | null;
  groups: string[];
}

/**
 * The institution's members in memory, by e-mail and external_id, with the counts the rules need.
 * Planning a row updates it, so the rows after it see its effect (as a real run would).
 */
export class MemberIndex {
  readonly byEmail = new Map<string, IndexedMember>();
  readonly byExternalId = new Map<string, IndexedMember>();
  seatTakers = 0;
  activeAdmins = 0;

  static async load(ctx: ServiceContext, institutionId: string): Promise<MemberIndex> {
    const index = new MemberIndex();
    const result = await ctx.d1.prepare(MEMBER_INDEX).bind(institutionId).all<IndexedMemberRow>();
    for (const row of result.results) index.put({ ...row, groups: JSON.parse(row.groups) as string[] });
    return index;
  }

  put(member: IndexedMember): void {
    this.byEmail.set(member.email, member);
    if (member.externalId) this.byExternalId.set(member.externalId, member);
    if (member.status !== "suspended") this.seatTakers += 1;
    if (member.role === "institution_admin" && member.status === "active") this.activeAdmins += 1;
  }

  replace(before: IndexedMember, after: IndexedMember): void {
    this.byEmail.delete(before.email);
    if (before.externalId) this.byExternalId.delete(before.externalId);
    if (before.status !== "suspended") this.seatTakers -= 1;
    if (before.role === "institution_admin" && before.status === "active") this.activeAdmins -= 1;
    this.put(after);
  }

  /** Every member, by id. */
  membersById(): Map<string, IndexedMember> {
    return new Map([...this.byEmail.values()].map((m) => [m.id, m]));
  }

  /** Invited and active members named by no row of the file (by e-mail or external_id), `keep` excepted. */
  absentActive(rows: readonly CsvRow[], keep: string): IndexedMember[] {
    const emails = new Set(rows.map((r) => r.email));
    const externalIds = new Set(rows.map((r) => r.externalId).filter(Boolean));
    const absent: IndexedMember[] = [];
    for (const member of this.byEmail.values()) {
      if (member.status === "suspended" || member.id === keep) continue;
      if (emails.has(member.email) || (member.externalId && externalIds.has(member.externalId))) continue;
      absent.push(member);
    }
    return absent;
  }
}

/** E-mail addresses among `emails` that belong to accounts outside the institution (or to nobody here). */
export async function emailsTakenElsewhere(
  ctx: ServiceContext,
  input: { index: MemberIndex; emails: readonly (string | null)[] },
): Promise<Set<string>> {
  const { index } = input;
  const unknown = [...new Set(input.emails.filter((e): e is string => !!e && !index.byEmail.has(e)))];
  if (unknown.length === 0) return new Set();
  const result = await ctx.d1.prepare(EMAILS_TAKEN).bind(JSON.stringify(unknown)).all<TakenEmailRow>();
  return new Set(result.results.map((r) => r.email));
}

export interface PlannedRow {
  row: CsvRow;
  outcome: BulkOutcome;
  errors: string[];
  /** The member after this row (created or updated); null when rejected or unchanged. */
  member: IndexedMember | null;
  /** An updated member as it was read: the row is written only while it still is (apply.ts). */
  before: IndexedMember | null;
  changes: MemberChanges | null;
}

export interface PlanContext {
  uploaderRole: Role;
  seats: number | null;
  /** Domains the institution routes through enforced SSO: no invitation for a new member there. */
  ssoEnforcedDomains?: ReadonlySet<string>;
}

function rejected(row: CsvRow, errors: string[]): PlannedRow {
  return { row, outcome: "rejected", errors, member: null, before: null, changes: null };
}

function diff(before: IndexedMember, after: IndexedMember): MemberChanges {
  const changes: MemberChanges = {};
  for (const field of ["email", "name", "role", "status", "externalId"] as const) {
    if (before[field] !== after[field]) {
      changes[field === "externalId" ? "external_id" : field] = { from: before[field], to: after[field] };
    }
  }
  if (!sameGroups(before.groups, after.groups)) changes.groups = { from: before.groups, to: after.groups };
  return changes;
}

function planNew(row: CsvRow & { email: string }, index: MemberIndex, context: PlanContext): PlannedRow {
  const status: MemberStatus = row.enabled === false ? "suspended" : "invited";
  if (status === "invited" && context.seats !== null && index.seatTakers >= context.seats) {
    return rejected(row, ["seat_limit_reached: every seat of the institution is taken"]);
  }
  const member: IndexedMember = {
    id: newId("usr"),
    email: row.email,
    // Without a name cell, the address's local part, held to the same rule as a name cell (an e-mail
    // may be longer than a name may).
    name: row.name ?? sanitizeDisplayText(row.email.split("@")[0], PERSON_NAME) ?? "Member",
    role: row.role ?? "learner",
    status,
    externalId: row.externalId,
    groups: row.groups ?? [],
  };
  index.put(member);
  return { row, outcome: "created", errors: [], member, before: null, changes: null };
}

function planExisting(
  row: CsvRow & { email: string },
  current: IndexedMember,
  index: MemberIndex,
  context: PlanContext,
  takenElsewhere: Set<string>,
): PlannedRow {
  if (!mayGrant(context.uploaderRole, current.role)) {
    return rejected(row, [`role: a ${context.uploaderRole} cannot change a ${current.role}`]);
  }
  if (row.email !== current.email) {
    const other = index.byEmail.get(row.email);
    if (other && other.id !== current.id)
      return rejected(row, [`email: belongs to another member (${other.id})`]);
    if (takenElsewhere.has(row.email)) return rejected(row, ["email: already belongs to another account"]);
  }
  let status = current.status;
  if (row.enabled === false) status = "suspended";
  else if (row.enabled === true && status === "suspended") status = "active";
  const next: IndexedMember = {
    ...current,
    email: row.email,
    name: row.name ?? current.name,
    role: (row.role as MemberRole | null) ?? current.role,
    status,
    externalId: row.externalId ?? current.externalId,
    groups: row.groups ?? current.groups,
  };
  const changes = diff(current, next);
  if (Object.keys(changes).length === 0)
    return { row, outcome: "unchanged", errors: [], member: null, before: null, changes: null };
  const wasActiveAdmin = current.role === "institution_admin" && current.status === "active";
  const staysActiveAdmin = next.role === "institution_admin" && next.status === "active";
  if (wasActiveAdmin && !staysActiveAdmin && index.activeAdmins <= 1) {
    return rejected(row, ["last_admin: this would leave the institution without an active admin"]);
  }
  if (current.status === "suspended" && status !== "suspended" && context.seats !== null) {
    if (index.seatTakers >= context.seats)
      return rejected(row, ["seat_limit_reached: every seat of the institution is taken"]);
  }
  index.replace(current, next);
  return { row, outcome: "updated", errors: [], member: next, before: current, changes };
}

/** A row whose member other writers changed under it at each of its attempts (runner.ts). */
export const OVERTAKEN_ERROR = `conflict: the member kept changing while this row was applied (${ATTEMPTS} attempts); upload the row again`;

/**
 * What each row does: match by external_id, else by e-mail; create, update, leave unchanged, or
 * reject with the reasons. Nothing is written here. The rows at lines in `overtaken` are rejected
 * (`OVERTAKEN_ERROR`).
 */
export function planRows(
  rows: readonly CsvRow[],
  index: MemberIndex,
  context: PlanContext,
  takenElsewhere: Set<string>,
  overtaken: ReadonlySet<number> = new Set(),
): PlannedRow[] {
  return rows.map((row) => {
    if (row.errors.length > 0 || !row.email) return rejected(row, row.errors);
    if (overtaken.has(row.line)) return rejected(row, [OVERTAKEN_ERROR]);
    if (row.role && !mayGrant(context.uploaderRole, row.role)) {
      return rejected(row, [`role: a ${context.uploaderRole} cannot grant the ${row.role} role`]);
    }
    const withEmail = row as CsvRow & { email: string };
    const current =
      (row.externalId ? index.byExternalId.get(row.externalId) : undefined) ?? index.byEmail.get(row.email);
    if (current) return planExisting(withEmail, current, index, context, takenElsewhere);
    if (takenElsewhere.has(row.email)) return rejected(row, ["email: already belongs to another account"]);
    const domain = row.email.slice(row.email.lastIndexOf("@") + 1);
    if (context.ssoEnforcedDomains?.has(domain))
      return rejected(row, [
        `sso_enforced: the institution enforces single sign-on for ${domain}; members there are created at their first sign-in`,
      ]);
    return planNew(withEmail, index, context);
  });
}
