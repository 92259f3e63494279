import { z } from "@hono/zod-openapi";
import type { SsoMapping } from "../../../db/schema";

/**
 * The field mappings of SSO settings: which SAML attribute or ID-token claim carries each member
 * field, as a PUT sends it (with its defaults) and as the settings answer it, and the mapping as it
 * is stored.
 */

const mappedName = z.string().min(1).max(256);
/** The member fields an IdP may carry; only `email` is needed to know who signs in. */
const MAPPED_FIELDS = {
  email: "the member's e-mail address (required: it says who signs in)",
  name: "the member's name (not mapped: a new member is named after the e-mail, an existing one keeps theirs)",
  role: "the member's role, `institution_admin`, `instructor` or `learner` (not mapped: new members are learners, existing ones keep theirs)",
  groups: "the member's groups (not mapped: groups are left as they are)",
} as const;
export const DEFAULT_ATTRIBUTE_MAPPING: SsoMapping = {
  email: "email",
  name: "name",
  role: null,
  groups: null,
};
export const DEFAULT_CLAIM_MAPPING: SsoMapping = {
  email: "email",
  name: "name",
  role: null,
  groups: "groups",
};

const MappingInput = (name: string, what: string, defaults: SsoMapping) =>
  z
    .strictObject({
      email: mappedName.openapi({ description: `The ${what} that carries ${MAPPED_FIELDS.email}.` }),
      name: mappedName
        .nullable()
        .optional()
        .openapi({ description: `The ${what} that carries ${MAPPED_FIELDS.name}.` }),
      role: mappedName
        .nullable()
        .optional()
        .openapi({ description: `The ${what} that carries ${MAPPED_FIELDS.role}.` }),
      groups: mappedName
        .nullable()
        .optional()
        .openapi({ description: `The ${what} that carries ${MAPPED_FIELDS.groups}.` }),
    })
    .openapi(name, {
      description: `Which ${what} carries each member field. Only \`email\` is required; a key left out or null is not mapped (that field is not taken from SSO). Leave the whole mapping out for the defaults: ${mappingText(defaults)}.`,
    });

/** As the settings answer it: every key present, null where not mapped. */
const Mapping = (name: string, what: string) =>
  z
    .object({
      email: z.string().openapi({ description: `The ${what} that carries ${MAPPED_FIELDS.email}.` }),
      name: z
        .string()
        .nullable()
        .openapi({ description: `The ${what} that carries ${MAPPED_FIELDS.name}.` }),
      role: z
        .string()
        .nullable()
        .openapi({ description: `The ${what} that carries ${MAPPED_FIELDS.role}.` }),
      groups: z
        .string()
        .nullable()
        .openapi({ description: `The ${what} that carries ${MAPPED_FIELDS.groups}.` }),
    })
    .openapi(name, {
      description: `Which ${what} carries each member field; null: not mapped (the field is not taken from SSO).`,
    });

function mappingText(mapping: SsoMapping): string {
  return Object.entries(mapping)
    .map(([field, from]) => `${field} ← ${from === null ? "not mapped" : `\`${from}\``}`)
    .join(", ");
}

export const AttributeMappingInput = MappingInput(
  "SamlAttributeMappingInput",
  "SAML attribute",
  DEFAULT_ATTRIBUTE_MAPPING,
);
export const ClaimMappingInput = MappingInput(
  "OidcClaimMappingInput",
  "ID-token claim",
  DEFAULT_CLAIM_MAPPING,
);
export const AttributeMapping = Mapping("SamlAttributeMapping", "SAML attribute");
export const ClaimMapping = Mapping("OidcClaimMapping", "ID-token claim");

/** A mapping as sent, as stored: every key, null where it was left out. */
export function storedMapping(
  input: z.infer<typeof AttributeMappingInput> | undefined,
  defaults: SsoMapping,
): SsoMapping {
  if (!input) return defaults;
  return {
    email: input.email,
    name: input.name ?? null,
    role: input.role ?? null,
    groups: input.groups ?? null,
  };
}
