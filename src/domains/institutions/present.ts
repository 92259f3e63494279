import type { z } from "@hono/zod-openapi";
import type { MemberStatus, Role } from "../../db/schema";
import { rateLimitFor } from "../../platform/auth/principal";
import type { MemberSchema } from "../members/schemas";
import type { InstitutionRow } from "./access";
import type { InstitutionSchema } from "./schemas";

export function presentInstitution(
  row: InstitutionRow,
  memberCount: number,
): z.infer<typeof InstitutionSchema> {
  const branding = row.branding ?? {};
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    plan: row.plan,
    rate_limit_per_minute: rateLimitFor("institution_admin", row),
    seats: row.seats,
    member_count: memberCount,
    branding: {
      display_name: branding.display_name ?? null,
      logo_url: branding.logo_url ?? null,
      primary_color: branding.primary_color ?? null,
      accent_color: branding.accent_color ?? null,
    },
    locale: row.locale,
    time_zone: row.timeZone,
    created_at: row.createdAt,
    updated_at: row.updatedAt ?? row.createdAt,
  };
}

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
