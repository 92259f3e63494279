import { and, asc, count, desc, eq, type SQL, sql } from "drizzle-orm";
import { institutions, type MemberStatus, memberGroups, users } from "../../db/schema";
import type { Database } from "../../platform/db";
import { type PageRequest, pageBounds, parentPageWithTotal } from "../../platform/http/pagination";
import type { MemberRole } from "./policy";
import type { MemberRow } from "./present";
import type { MemberSort } from "./schemas";

/** A member's groups as a JSON array in alphabetical order, read in the same statement as the member. */
const groupsJson = sql<string>`(SELECT json_group_array(group_name) FROM (SELECT g.group_name FROM member_groups AS g WHERE g.user_id = "users"."id" ORDER BY 1))`;

export const memberColumns = {
  id: users.id,
  email: users.email,
  name: users.name,
  role: users.role,
  status: users.status,
  externalId: users.externalId,
  groupsJson,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
  lastActiveAt: users.lastActiveAt,
};

type SelectedMember = Omit<MemberRow, "groups"> & { groupsJson: string };

export function toMemberRow({ groupsJson: json, ...rest }: SelectedMember): MemberRow {
  return { ...rest, groups: JSON.parse(json) as string[] };
}

export interface MemberFilters {
  role?: MemberRole;
  status?: MemberStatus;
  group?: string;
  external_id?: string;
  q?: string;
}

/** LIKE with the caller's text taken literally. */
function contains(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function memberWhere(institutionId: string, filters: MemberFilters): SQL | undefined {
  const conditions: SQL[] = [eq(users.institutionId, institutionId)];
  if (filters.role) conditions.push(eq(users.role, filters.role));
  if (filters.status) conditions.push(eq(users.status, filters.status));
  if (filters.external_id) conditions.push(eq(users.externalId, filters.external_id));
  if (filters.group) {
    conditions.push(
      sql`${users.id} IN (SELECT ${memberGroups.userId} FROM ${memberGroups} WHERE ${memberGroups.institutionId} = ${institutionId} AND ${memberGroups.groupName} = ${filters.group})`,
    );
  }
  if (filters.q) {
    const pattern = contains(filters.q);
    conditions.push(
      sql`(lower(${users.name}) LIKE ${pattern} ESCAPE '\\' OR ${users.email} LIKE ${pattern} ESCAPE '\\')`,
    );
  }
  return and(...conditions);
}

function memberOrder(sort: MemberSort): SQL[] {
  const descending = sort.startsWith("-");
  const direction = descending ? desc : asc;
  switch (sort.replace("-", "")) {
    case "created_at":
      return [direction(users.createdAt), direction(users.id)];
    case "last_active_at":
      // Never-active members last in both directions.
      return [sql`${users.lastActiveAt} IS NULL`, direction(users.lastActiveAt), direction(users.id)];
    default:
      return [direction(sql`lower(${users.name})`), direction(users.id)];
  }
}

/** A page of the institution's members and their total; null when there is no such institution. */
export async function listMemberRows(
  db: Database,
  institutionId: string,
  filters: MemberFilters,
  sort: MemberSort,
  page: PageRequest,
): Promise<{ rows: MemberRow[]; total: number } | null> {
  const where = memberWhere(institutionId, filters);
  const { limit, offset } = pageBounds(page);
  const listed = await parentPageWithTotal(
    db,
    db.select({ id: institutions.id }).from(institutions).where(eq(institutions.id, institutionId)).limit(1),
    db
      .select(memberColumns)
      .from(users)
      .where(where)
      .orderBy(...memberOrder(sort))
      .limit(limit)
      .offset(offset),
    users,
    where,
  );
  return listed && { rows: listed.rows.map(toMemberRow), total: listed.total };
}

export async function findMember(
  db: Database,
  institutionId: string,
  memberId: string,
): Promise<MemberRow | null> {
  const row = await db
    .select(memberColumns)
    .from(users)
    .where(and(eq(users.institutionId, institutionId), eq(users.id, memberId)))
    .get();
  return row ? toMemberRow(row) : null;
}

/** The institution members are asked of: its id and seats (null seats: no limit); null if there is none. */
export async function findInstitution(
  db: Database,
  institutionId: string,
): Promise<{ id: string; seats: number | null } | null> {
  const row = await db
    .select({ id: institutions.id, seats: institutions.seats })
    .from(institutions)
    .where(eq(institutions.id, institutionId))
    .get();
  return row ?? null;
}

export async function memberCount(db: Database, institutionId: string): Promise<number> {
  const row = await db.select({ n: count() }).from(users).where(eq(users.institutionId, institutionId)).get();
  return row?.n ?? 0;
}

/** Members that take a seat: invited and active ones. */
export const seatTakers = (institutionId: string) =>
  sql`(SELECT count(*) FROM ${users} WHERE ${users.institutionId} = ${institutionId} AND ${users.status} IN ('invited', 'active'))`;

/** Whether `extra` more seat-takers fit the institution's seats (null seats: always). */
export const seatsAllow = (institutionId: string, extra: number) =>
  sql`(SELECT seats FROM institutions WHERE id = ${institutionId}) IS NULL OR ${seatTakers(institutionId)} + ${extra} <= (SELECT seats FROM institutions WHERE id = ${institutionId})`;

/**
 * Whether the institution has an active admin other than `userId` (null: any active admin — the
 * guard a batch that demotes or suspends several members places after its writes).
 */
export const anotherActiveAdmin = (institutionId: string, userId: string | null) =>
  sql`EXISTS (SELECT 1 FROM ${users} WHERE ${users.institutionId} = ${institutionId} AND ${users.role} = 'institution_admin' AND ${users.status} = 'active' AND ${users.id} IS NOT ${userId})`;
