import { ScimError } from "../errors";
import {
  ENTERPRISE_USER_SCHEMA,
  GROUP_SCHEMA,
  type Json,
  listResponse,
  MAX_COUNT,
  USER_SCHEMA,
} from "./resources";

/**
 * The SCIM service's self-description (RFC 7644 §4): `/ServiceProviderConfig`, `/ResourceTypes` and
 * `/Schemas`. The schemas are scimmy's definitions of RFC 7643's (loaded on first use), cut to the
 * attributes this service stores, so that an identity provider reading them maps only those.
 */

const DOCS = "https://docs.lingua.example/sso#scim";

export function serviceProviderConfig(base: string): Json {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
    documentationUri: DOCS,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "Bearer token",
        description:
          "A SCIM token issued with POST /api/institutions/{id}/scim-tokens, as `Authorization: Bearer <token>`.",
        specUri: "https://www.rfc-editor.org/rfc/rfc6750",
        documentationUri: DOCS,
        primary: true,
      },
    ],
    meta: { resourceType: "ServiceProviderConfig", location: `${base}/ServiceProviderConfig` },
  };
}

function resourceTypes(base: string): Json[] {
  return [
    {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
      id: "User",
      name: "User",
      endpoint: "/Users",
      description:
        "A member of the institution (filters: eq on userName, externalId, emails.value, displayName, active, id).",
      schema: USER_SCHEMA,
      schemaExtensions: [{ schema: ENTERPRISE_USER_SCHEMA, required: false }],
      meta: { resourceType: "ResourceType", location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
      id: "Group",
      name: "Group",
      endpoint: "/Groups",
      description: "A group of the institution's members.",
      schema: GROUP_SCHEMA,
      meta: { resourceType: "ResourceType", location: `${base}/ResourceTypes/Group` },
    },
  ];
}

export function listResourceTypes(base: string): Json {
  const types = resourceTypes(base);
  return listResponse(types, types.length, 1);
}

export function resourceType(base: string, id: string): Json {
  const found = resourceTypes(base).find((t) => t.id === id);
  if (!found) throw new ScimError(404, `No ResourceType ${id}.`);
  return found;
}

/** The attributes (and sub-attributes) each schema keeps. */
const KEPT: Record<string, Record<string, string[] | true>> = {
  [USER_SCHEMA]: {
    userName: true,
    name: ["formatted", "givenName", "familyName"],
    displayName: true,
    emails: ["value", "type", "primary"],
    active: true,
    groups: ["value", "$ref", "display"],
  },
  [GROUP_SCHEMA]: { displayName: true, members: ["value", "$ref", "display"] },
  [ENTERPRISE_USER_SCHEMA]: { department: true },
};

async function schemaDefinitions(base: string): Promise<Json[]> {
  const { default: Schemas } = await import("scimmy/schemas");
  const described = [Schemas.User, Schemas.Group, Schemas.EnterpriseUser].map(
    (schema) => schema.definition.describe(`${base}/Schemas`) as Json,
  );
  return described.map((definition) => {
    const kept = KEPT[definition.id as string] ?? {};
    const attributes = (definition.attributes as Json[])
      .filter((a) => (a.name as string) in kept)
      .map((a) => {
        const sub = kept[a.name as string];
        if (sub === true || !Array.isArray(a.subAttributes)) return a;
        return {
          ...a,
          subAttributes: (a.subAttributes as Json[]).filter((s) => sub?.includes(s.name as string)),
        };
      });
    return { ...definition, attributes };
  });
}

export async function listSchemas(base: string): Promise<Json> {
  const schemas = await schemaDefinitions(base);
  return listResponse(schemas, schemas.length, 1);
}

export async function schema(base: string, id: string): Promise<Json> {
  const found = (await schemaDefinitions(base)).find((s) => s.id === id);
  if (!found) throw new ScimError(404, `No Schema ${id}.`);
  return found;
}
