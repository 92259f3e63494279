import type { z } from "@hono/zod-openapi";
import { rateLimitFor } from "../../platform/auth/principal";
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
