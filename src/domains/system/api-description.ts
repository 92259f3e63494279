import { ROLES } from "../../db/schema";
import { ABILITIES, ALL_ABILITIES, ROLE_CEILINGS } from "../../platform/auth/abilities";
import { PLAN_RATE_LIMITS, PLATFORM_RATE_LIMIT } from "../../platform/auth/principal";
import { ERROR_CATALOGUE, type ErrorCode } from "../../platform/error-catalogue";
import { SUBSCRIBABLE_TYPES } from "../../platform/events";

/** The document's introduction, generated from the same tables the code enforces, so it cannot drift. */
export function apiDescription(): string {
  const abilities = ALL_ABILITIES.map((a) => {
    const roles = ROLES.filter((r) => ROLE_CEILINGS[r].includes(a)).join(", ");
    return `| \`${a}\` | ${ABILITIES[a]} | ${roles} |`;
  }).join("\n");
  const errors = (Object.keys(ERROR_CATALOGUE) as ErrorCode[])
    .map((code) => `| ${ERROR_CATALOGUE[code].status} | \`${code}\` | ${ERROR_CATALOGUE[code].title} |`)
    .join("\n");
  return `The B2B integration interface of the Lingua language-learning platform.

## Authentication
Send \`Authorization: Bearer <token>\`. Get a session token from \`POST /api/auth/sign-in\`, or create a
long-lived API token with \`POST /api/integrations/tokens\`. Token values start with \`lng_\`, are shown
once, and are stored only as a SHA-256 hash. Missing, malformed, unknown, expired or revoked tokens: 401.

## Abilities
Each token carries named abilities; \`*\` means everything its owner's role allows. A token never exceeds
its owner's role (asking for more is 403) nor the token that creates it. A missing ability is 403 and the
problem's \`detail\` names it. Another institution's resources answer 404.

| ability | grants | roles that may hold it |
|---|---|---|
${abilities}

## Rate limits
Per token per rolling minute: Free ${PLAN_RATE_LIMITS.free}, Pro ${PLAN_RATE_LIMITS.pro}, Enterprise by contract,
platform staff ${PLATFORM_RATE_LIMIT}. Every authenticated response carries \`X-RateLimit-Limit\`,
\`X-RateLimit-Remaining\`, \`X-RateLimit-Reset\`, \`RateLimit-Policy\` and \`RateLimit\`. Over the limit: 429 with
\`Retry-After\` (whole seconds after which the next request succeeds). Endpoints without a token are
limited per client IP; failed sign-ins block an (e-mail, address) pair after 10 in 15 minutes and an address after 100 in an hour.
All tokens of one institution together also share a budget per rolling minute (Free 300, Pro 5,000, Enterprise five
times its per-token limit); over it, 429 naming the \`"institution"\` policy.

## Lists
\`page\` (from 1) and \`per_page\` (1–100, default 25); the envelope is \`{ data, links: { first, last, prev, next }, meta: { total, per_page, current_page, last_page } }\`.

## Errors
Every error is \`application/problem+json\` (RFC 9457) with a stable \`code\` and the \`request_id\`
(also in \`X-Request-Id\`); validation errors list every failing field in \`errors\`. A problem's \`type\` is the
absolute URL of its code's entry in the [error reference](/api/docs/errors) on this API's origin
(\`/api/docs/errors#<code>\`), which says what each code means and what to do. Authenticated operations
refuse unknown query parameters (422, each named) instead of ignoring them; the public catalogue ignores them.

| status | code | title |
|---|---|---|
${errors}

## Domain events
State changes an integrator may want to hear about (${SUBSCRIBABLE_TYPES.map((type) => `\`${type}\``).join(", ")})
are written to an outbox in the same database batch as the change, each with a stable id; webhooks deliver them.

## Idempotency
\`POST\` endpoints that create something accept \`Idempotency-Key\`, scoped to the token that sends it, for 24 hours.
`;
}
