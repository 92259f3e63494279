import type { z } from "@hono/zod-openapi";
import type { MemberStatus, Role } from "../../db/schema";
import type { MemberSchema } from "./schemas";

/** A member as read by the member queries: the user's columns and its groups. */
export interface MemberRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  status: MemberStatus;
  externalId: string | null;
  groups: string[];
  createdAt: string;
  updatedAt: string | null;
  lastActiveAt: string | null;
}

export function presentMember(row: MemberRow): z.infer<typeof MemberSchema> {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role as z.infer<typeof MemberSchema>["role"],
    status: row.status,
    external_id: row.externalId,
    groups: row.groups,
    created_at: row.createdAt,
    updated_at: row.updatedAt ?? row.createdAt,
    last_active_at: row.lastActiveAt,
  };
}

/** A member as created or re-invited: with its invitation URL, shown this once. */
export function presentWithInvitation(created: {
  member: MemberRow;
  invitationUrl: string;
  invitationExpiresAt: string;
}) {
  return {
    ...presentMember(created.member),
    invitation_url: created.invitationUrl,
    invitation_expires_at: created.invitationExpiresAt,
  };
}
