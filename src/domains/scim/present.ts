import { SCIM_BASE } from "./prefixes";
import type { ScimTokenRow } from "./tokens";

export function presentScimToken(row: ScimTokenRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
  };
}

/** The SCIM base URL on this deployment's origin. */
export function scimBaseUrl(origin: string): string {
  return `${origin}${SCIM_BASE}`;
}

export function presentScimSettings(
  settings: { departmentAsGroup: boolean; activeTokens: number },
  origin: string,
) {
  return {
    scim_base_url: scimBaseUrl(origin),
    department_as_group: settings.departmentAsGroup,
    active_tokens: settings.activeTokens,
  };
}
