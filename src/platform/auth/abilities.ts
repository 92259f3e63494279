import type { Role } from "../../db/schema";

/**
 * The ability catalogue: `area:verb`, one area per section of the interface. A token carries a subset
 * of its owner's role ceiling; `*` stands for the whole ceiling at the time of each request.
 */
export const ABILITIES = {
  "tokens:read": "List the API tokens you may manage.",
  "tokens:write": "Create and revoke API tokens.",
  "content:read": "Read courses, lessons, training blocks and training items.",
  "content:write": "Create, edit and publish learning content (platform staff).",
  "progress:read": "Read learner progress, history, CEFR reports, insights and gamification data.",
  "progress:write": "Record learning activity (training-item attempts).",
  "stats:read": "Read platform-wide statistics.",
  "webhooks:read": "List webhooks, their deliveries and the event catalogue.",
  "webhooks:write": "Create, change, test and delete webhooks; redeliver events.",
  "events:read": "Read the institution's recent domain events.",
  "exports:read": "List export jobs and download their files.",
  "exports:write": "Request CSV exports.",
  "lti:read": "List LTI 1.3 platform registrations.",
  "lti:write": "Register LTI 1.3 platforms.",
  "lti:grade": "Push grades back to a learning management system.",
  "xapi:read": "List xAPI Learning Record Store endpoints.",
  "xapi:write": "Register, change and remove xAPI endpoints.",
  "institutions:read": "Read institutions you belong to (all of them for platform staff).",
  "institutions:write": "Create institutions (platform staff).",
  "members:read": "List an institution's members.",
  "members:write": "Provision, change and remove members.",
  "analytics:read": "Read an institution's analytics.",
  "sso:read": "Read an institution's SSO configuration.",
  "sso:write": "Change an institution's SSO configuration.",
  "compliance:read": "Read an institution's compliance documentation status.",
  "billing:read": "Read plans, subscription and trial status.",
  "billing:write": "Start checkout and billing-portal sessions; apply promo codes.",
} as const;

export type Ability = keyof typeof ABILITIES;
export const ALL_ABILITIES = Object.keys(ABILITIES) as Ability[];
export const WILDCARD = "*";

const PLATFORM_ONLY: Ability[] = ["content:write", "institutions:write"];

/** What each role may ever do; a token can never exceed this. */
export const ROLE_CEILINGS: Record<Role, readonly Ability[]> = {
  platform_admin: ALL_ABILITIES,
  institution_admin: ALL_ABILITIES.filter((a) => !PLATFORM_ONLY.includes(a)),
  instructor: [
    "tokens:read",
    "tokens:write",
    "content:read",
    "progress:read",
    "members:read",
    "institutions:read",
  ],
  learner: ["tokens:read", "tokens:write", "content:read", "progress:read", "progress:write"],
};

export function isAbility(value: string): value is Ability {
  return Object.hasOwn(ABILITIES, value);
}

/** The abilities a token actually has today: its own list cut to its owner's current ceiling. */
export function effectiveAbilities(granted: readonly string[], role: Role): Ability[] {
  const ceiling = ROLE_CEILINGS[role];
  if (granted.includes(WILDCARD)) return [...ceiling];
  return ceiling.filter((a) => granted.includes(a));
}

/** Abilities asked for that the role does not allow. */
export function abilitiesBeyondRole(requested: readonly string[], role: Role): Ability[] {
  const ceiling = ROLE_CEILINGS[role];
  return requested.filter((a): a is Ability => a !== WILDCARD && isAbility(a) && !ceiling.includes(a));
}
