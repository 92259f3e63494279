import type { Role } from "../../db/schema";
import { domainEvent, type OutboxRow } from "../../platform/events";

/** A changed field of a member: what it was and what it is now. */
export type MemberChanges = Record<string, { from: unknown; to: unknown }>;

export interface CreatedMemberFacts {
  id: string;
  email: string;
  name: string;
  role: Role;
  status: string;
  externalId: string | null;
  groups: string[];
}

/** `member.created`: the catalogue's fields, plus status, external_id and groups. */
export function memberCreated(institutionId: string, member: CreatedMemberFacts, at: string): OutboxRow {
  return domainEvent(
    "member.created",
    { institutionId, userId: member.id },
    {
      user_id: member.id,
      email: member.email,
      name: member.name,
      role: member.role,
      status: member.status,
      external_id: member.externalId,
      groups: member.groups,
      created_at: at,
    },
    at,
  );
}

export function memberUpdated(
  institutionId: string | null,
  userId: string,
  changes: MemberChanges,
  at: string,
): OutboxRow {
  return domainEvent(
    "member.updated",
    { institutionId, userId },
    { user_id: userId, changes, updated_at: at },
    at,
  );
}

export function memberRemoved(institutionId: string, userId: string, at: string): OutboxRow {
  return domainEvent("member.removed", { institutionId, userId }, { user_id: userId, removed_at: at }, at);
}

export function sameGroups(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((g, i) => g === b[i]);
}

/** Groups as stored and shown: trimmed, de-duplicated, sorted. */
export function normaliseGroups(groups: readonly string[]): string[] {
  return [...new Set(groups.map((g) => g.trim()).filter(Boolean))].sort();
}
