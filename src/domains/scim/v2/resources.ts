/** SCIM's URNs and the shapes of the resources this service answers (RFC 7643). */
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const ENTERPRISE_USER_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const LIST_RESPONSE_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const PATCH_OP_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/** The most resources one list answers (`count` above it is cut to it, as RFC 7644 §3.4.2.4 allows). */
export const MAX_COUNT = 100;

export type Json = Record<string, unknown>;

export interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

/** Who is calling the SCIM service: the institution its token belongs to, and where the service is. */
export interface ScimCaller {
  institutionId: string;
  tokenId: string;
  /** The SCIM base URL (`https://…/scim/v2`), for `meta.location` and `$ref`. */
  base: string;
}

export function listResponse(resources: Json[], total: number, startIndex: number): Json {
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: total,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

/** `"True"`, `"false"`, `true`: Entra sends booleans as strings in PATCH. Undefined when absent; throws otherwise. */
export function booleanOf(value: unknown): boolean | undefined | "invalid" {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "boolean") return value;
  if (typeof value === "string") {
    const text = value.trim().toLowerCase();
    if (text === "true") return true;
    if (text === "false") return false;
  }
  return "invalid";
}

/** The value of `key` in `object`, the key matched without regard to case (SCIM attribute names are case-insensitive). */
export function attribute(object: Json | undefined, key: string): unknown {
  if (!object) return undefined;
  if (key in object) return object[key];
  const lower = key.toLowerCase();
  for (const [k, v] of Object.entries(object)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
