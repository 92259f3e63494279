/** Claim names of LTI 1.3 Core, AGS 2.0 and NRPS 2.0, and the vocabularies the tool reads. */
export const LTI_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/";
export const CLAIMS = {
  deploymentId: `${LTI_CLAIM}deployment_id`,
  version: `${LTI_CLAIM}version`,
  messageType: `${LTI_CLAIM}message_type`,
  roles: `${LTI_CLAIM}roles`,
  resourceLink: `${LTI_CLAIM}resource_link`,
  context: `${LTI_CLAIM}context`,
  custom: `${LTI_CLAIM}custom`,
  targetLinkUri: `${LTI_CLAIM}target_link_uri`,
  ags: "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint",
  nrps: "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice",
  deepLinkingSettings: "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings",
  deepLinkingContentItems: "https://purl.imsglobal.org/spec/lti-dl/claim/content_items",
  deepLinkingData: "https://purl.imsglobal.org/spec/lti-dl/claim/data",
} as const;

export const RESOURCE_LINK_REQUEST = "LtiResourceLinkRequest";
export const DEEP_LINKING_REQUEST = "LtiDeepLinkingRequest";
export const DEEP_LINKING_RESPONSE = "LtiDeepLinkingResponse";
/** The content item type a deep-linking response carries: a link the platform launches later. */
export const RESOURCE_LINK_ITEM = "ltiResourceLink";
export const SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score";
export const LINE_ITEM_READ_SCOPES = [
  "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
  "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
];

/**
 * Lingua's role for a launch: LTI `Instructor` or `Administrator` (context, institution or system
 * role, full URI or short name, sub-roles such as `Instructor#TeachingAssistant` included) map to
 * instructor, everything else to learner.
 */
export function launchRole(roles: readonly string[]): "instructor" | "learner" {
  const teaches = roles.some((role) => /(^|[#/])(Instructor|Administrator)(#|$)/.test(role));
  return teaches ? "instructor" : "learner";
}

export function asRecord(value: unknown): Record<string, unknown> | null {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** The fields of an object claim the log keeps, when they are strings. */
export function pick(value: unknown, keys: readonly string[]): Record<string, unknown> | null {
  const record = asRecord(value);
  if (!record) return null;
  return Object.fromEntries(keys.filter((k) => record[k] !== undefined).map((k) => [k, record[k]]));
}
