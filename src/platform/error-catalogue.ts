/**
 * Where the error reference is served, on the API's own origin: one page with an anchor per code.
 * A problem's `type` is the absolute URL of its code's entry there (`errorTypeUrl`), so that it
 * resolves wherever the API runs (production, `wrangler dev`, the tests' origin).
 */
export const ERROR_DOCS_PATH = "/api/docs/errors";

/** The `type` of a problem with this code, answered on `origin` (the request's, e.g. `https://api.example.com`). */
export function errorTypeUrl(origin: string, code: ErrorCode): string {
  return `${origin}${ERROR_DOCS_PATH}#${code}`;
}

/** One entry of the catalogue: the status and title every problem of the code carries, and its documentation. */
export interface ErrorEntry {
  status: number;
  title: string;
  /** What the problem means, for the error reference (`GET /api/docs/errors`). Plain text, `code` in backticks. */
  meaning: string;
  /** What the client should do about it. */
  action: string;
}

/**
 * Every error code the API answers with, and the one source of what each means: the problem's
 * status and title, the OpenAPI document's `Problem.code` enum and introduction, and the error
 * reference page are generated from it. A code that is thrown must be declared here first.
 */
export const ERROR_CATALOGUE = {
  bad_request: {
    status: 400,
    title: "Bad request",
    meaning:
      "The request could not be read as the operation expects: a multipart body that cannot be parsed, or an LTI login request that lacks a parameter the specification requires.",
    action: "Fix the request as `detail` says; repeating it unchanged fails the same way.",
  },
  invalid_bookmark: {
    status: 400,
    title: "Invalid bookmark",
    meaning:
      "The `X-D1-Bookmark` request header is not a bookmark as this API sends it in its responses' `X-D1-Bookmark`; nothing was read or written.",
    action:
      "Send back the `X-D1-Bookmark` of the latest response you received, unchanged, or leave the header out (the request then reads the latest state).",
  },
  invalid_invitation: {
    status: 400,
    title: "Invalid invitation",
    meaning: "The invitation is unknown, already used or expired.",
    action: "Ask an administrator of the institution to re-invite the member, and use the new invitation.",
  },
  lti_launch_refused: {
    status: 400,
    title: "LTI launch refused",
    meaning:
      "An LTI 1.3 launch failed verification: the id_token's signature, issuer, audience, nonce, state, deployment or message claims did not pass, or the launch did not come back to the browser that started it (neither the state cookie nor the platform-storage check: `reason` `browser_binding_missing`, `platform_storage_failed`, `platform_storage_mismatch`).",
    action:
      "Check the platform registration (issuer, client id, deployment ids, JWKS URL) against your LMS, then launch again from the LMS.",
  },
  sso_sign_in_refused: {
    status: 400,
    title: "SSO sign-in refused",
    meaning:
      "A sign-in through the institution's identity provider (OIDC or SAML) was refused: `reason` says why (the pending request's state, the IdP's answer, the token or assertion, or the member), and `sign_in_id` names the entry in the institution's SSO log (`GET /api/institutions/{id}/sso/log`).",
    action:
      "Start the sign-in again from `GET /api/auth/sso`; if it keeps failing, an institution admin reads the SSO log entry and fixes the IdP configuration or the member.",
  },
  malformed_json: {
    status: 400,
    title: "Malformed JSON",
    meaning: "The request body is not valid JSON.",
    action: "Send a JSON document encoded as UTF-8 with `Content-Type: application/json`.",
  },
  webhook_signature_invalid: {
    status: 400,
    title: "Webhook signature invalid",
    meaning:
      "A request to `POST /api/billing/webhook` carried no `Stripe-Signature`, one that does not match the body under the endpoint's signing secret, or one older than 300 seconds; nothing was changed.",
    action:
      "Only Stripe calls this endpoint: check that `STRIPE_WEBHOOK_SECRET` is the signing secret of the endpoint registered in Stripe, and that the body reaches it unaltered.",
  },
  unauthenticated: {
    status: 401,
    title: "Authentication required",
    meaning: "The request has no bearer token, or its token is malformed, unknown, expired or revoked.",
    action:
      "Send `Authorization: Bearer <token>` with a live token: sign in again for a session token, or create a new API token.",
  },
  invalid_credentials: {
    status: 401,
    title: "Invalid credentials",
    meaning: "The e-mail address and password do not match an active account.",
    action: "Check both and try again; repeated failures from one address are rate limited (`rate_limited`).",
  },
  forbidden: {
    status: 403,
    title: "Forbidden",
    meaning:
      "The token holds the ability, but its owner's role or institution does not allow this action on this resource (for example, a role above your own, or an integration resource for an account without an institution).",
    action: "Use a token of a member whose role allows the action; `detail` says which rule refused it.",
  },
  sso_required: {
    status: 403,
    title: "SSO required",
    meaning:
      "The institution of this e-mail address enforces single sign-on: its members sign in through its identity provider, not with a password. `sso_url` carries where to start.",
    action: "Send the person's browser to `sso_url` (or `GET /api/auth/sso?email=…`).",
  },
  missing_ability: {
    status: 403,
    title: "Missing ability",
    meaning: "The token lacks the ability the operation requires; `detail` names it.",
    action:
      "Create a token that holds that ability (within its owner's role), or use a session token, which holds every ability the role allows.",
  },
  not_found: {
    status: 404,
    title: "Not found",
    meaning:
      "No route has this path, or the resource does not exist, or it belongs to another institution (which always answers 404, never 403).",
    action: "Check the path and the id; list the collection to find the resource.",
  },
  lti_registration_link_unknown: {
    status: 404,
    title: "LTI registration link unknown",
    meaning:
      "The `link` of a dynamic registration (`GET /api/lti/register`) is not one Lingua issued: mistyped, cut short, or issued by another Lingua deployment.",
    action:
      "Create a new link with `POST /api/integrations/lti-consumers/registration-links` and paste the whole URL into the LMS.",
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    meaning: "The path exists, but not with this method.",
    action: "Use one of the methods the `Allow` header lists.",
  },
  sso_not_configured: {
    status: 404,
    title: "SSO not configured",
    meaning:
      "No institution signs this e-mail address (or slug) in through single sign-on: no verified domain matches it, or the institution's SSO is not `active`. The same answer for both, so that domains cannot be probed.",
    action: "Sign in with a password, or ask the institution's admin to verify the domain and activate SSO.",
  },
  conflict: {
    status: 409,
    title: "Conflict",
    meaning:
      "The request conflicts with the current state: a duplicate (an attempt id recorded for another learner, an LTI registration with the same issuer and client id), a limit (webhooks per institution), or another request that changed the same resource at the same moment.",
    action:
      "Read `detail`, fetch the resource's current state, and retry only if the request still makes sense.",
  },
  sso_enforced: {
    status: 409,
    title: "SSO enforced",
    meaning:
      "The institution enforces single sign-on for this e-mail address's domain: its members come from the identity provider (they are created at their first sign-in), so no invitation is issued.",
    action:
      "Let the person sign in through the institution's identity provider, or turn `enforced` off in the SSO settings.",
  },
  slug_taken: {
    status: 409,
    title: "Slug taken",
    meaning: "Another institution already has this slug.",
    action: "Choose another slug.",
  },
  email_taken: {
    status: 409,
    title: "E-mail address taken",
    meaning: "An account with this e-mail address already exists.",
    action: "Use another address, or change the existing member instead of adding a new one.",
  },
  external_id_taken: {
    status: 409,
    title: "External id taken",
    meaning: "Another member of the institution has this `external_id`.",
    action: "Use the member that has it, or give this one another `external_id`.",
  },
  last_admin: {
    status: 409,
    title: "Last active admin",
    meaning: "The change would leave the institution without an active institution admin.",
    action: "Make another member an active institution admin first.",
  },
  seat_limit_reached: {
    status: 409,
    title: "Seat limit reached",
    meaning: "Every seat of the institution is taken (invited and active members count).",
    action: "Suspend or remove a member, or ask for more seats.",
  },
  bulk_in_progress: {
    status: 409,
    title: "Bulk upload in progress",
    meaning: "Another bulk member upload of this institution is still being processed.",
    action: "Wait until that job is `completed` or `failed` (read it with its `GET`), then upload again.",
  },
  bulk_not_finished: {
    status: 409,
    title: "Bulk upload not finished",
    meaning:
      "The bulk upload is still queued or processing, so its report or rejected rows are not complete yet.",
    action: "Poll the job and ask again once its status is `completed`; `bulk_status` says where it is.",
  },
  sync_threshold_exceeded: {
    status: 409,
    title: "Sync threshold exceeded",
    meaning:
      "A `sync` upload would suspend more than 10 % of the institution's invited and active members; nothing was changed. `would_suspend` and `members` give the numbers.",
    action:
      "Check that the file is complete; if the suspensions are intended, upload again with `force=true`.",
  },
  idempotency_in_flight: {
    status: 409,
    title: "Request in flight",
    meaning: "A request with the same `Idempotency-Key` is still being processed.",
    action: "Retry after a moment with the same key and body: you get the first request's answer.",
  },
  export_not_ready: {
    status: 409,
    title: "Export not ready",
    meaning: "The export is still queued or running; `export_status` and `progress` say how far it is.",
    action: "Retry after the `Retry-After` seconds, or wait for the `export.completed` webhook.",
  },
  export_failed: {
    status: 409,
    title: "Export failed",
    meaning: "The export failed and has no file; `detail` gives the reason.",
    action: "Request a new export.",
  },
  lti_not_gradable: {
    status: 409,
    title: "LTI launch not gradable",
    meaning:
      "The launch cannot take a grade: the platform sent no usable Assignment and Grade Services line item with the score scope, or its registration was deleted.",
    action:
      "Launch from a graded assignment of the LMS (one with grading enabled), then send the grade again.",
  },
  lti_deep_linking_responded: {
    status: 409,
    title: "Deep-linking response already built",
    meaning:
      "This deep-linking launch's one response was built already (LTI Deep Linking allows one response per request); the first one is the platform's to receive.",
    action:
      "Post the response you received to the platform's return URL; to link other content, start deep linking again from the LMS.",
  },
  lti_roster_unavailable: {
    status: 409,
    title: "LTI roster unavailable",
    meaning:
      "The launch cannot read its course's roster: the platform sent no Names and Role Provisioning Services claim with a usable `context_memberships_url`, or the launch was refused.",
    action:
      "Enable Names and Role Provisioning for the tool in the LMS, launch again from the course, and use the new launch.",
  },
  lti_line_items_unavailable: {
    status: 409,
    title: "LTI line items unavailable",
    meaning:
      "The launch cannot list or create line items: the platform sent no Assignment and Grade Services claim with a usable `lineitems` URL and a line-item scope, or the launch was refused.",
    action:
      "Enable Assignment and Grade Services (line item management) for the tool in the LMS, launch again from the course, and use the new launch.",
  },
  token_limit_reached: {
    status: 409,
    title: "Token limit reached",
    meaning: "The user already holds the most active API tokens a user may hold (100).",
    action: "Revoke a token you no longer use, then create the new one.",
  },
  lti_registration_in_progress: {
    status: 409,
    title: "LTI registration in progress",
    meaning:
      "Another registration with this dynamic registration link is under way (the LMS opened the link twice at once); the link can make one registration only.",
    action:
      "Wait a minute and look at the registrations (`GET /api/integrations/lti-consumers`) before trying again.",
  },
  xapi_endpoint_disabled: {
    status: 409,
    title: "xAPI endpoint disabled",
    meaning:
      "The xAPI endpoint is disabled (`enabled: false`), so nothing can be forwarded to it: a back-fill needs an enabled endpoint.",
    action:
      "Enable the endpoint (`PUT` it with `enabled: true`), check it with `POST …/{id}/test`, then start the back-fill again.",
  },
  xapi_backfill_in_progress: {
    status: 409,
    title: "xAPI back-fill in progress",
    meaning:
      "Another back-fill of this xAPI endpoint is still `queued` or `running`; an endpoint has one back-fill at a time. `backfill_id` names it.",
    action:
      "Watch that back-fill (`GET …/{id}/backfills/{backfill}`) until it is `completed` or `failed`, then start the next one if it is still needed.",
  },
  subscription_exists: {
    status: 409,
    title: "Subscription exists",
    meaning:
      "The institution already has a subscription that is trialing, active, past due or unpaid, so a second checkout would charge it twice.",
    action:
      "Change, cancel or pay the subscription in the billing portal (`POST /api/billing/portal-session`); start a checkout once it has ended.",
  },
  no_billing_account: {
    status: 409,
    title: "No billing account",
    meaning:
      "The institution has no Stripe customer yet: it has never started a checkout or applied a promotion code.",
    action: "Start a subscription with `POST /api/billing/checkout-session` first.",
  },
  gone: {
    status: 410,
    title: "Gone",
    meaning: "The resource existed and is gone for good.",
    action: "Do not retry; create a new resource if you still need one.",
  },
  export_expired: {
    status: 410,
    title: "Export expired",
    meaning: "The export's retention is over and its file is deleted.",
    action: "Request a new export.",
  },
  lti_registration_link_used: {
    status: 410,
    title: "LTI registration link used",
    meaning:
      "The dynamic registration link has made its registration already: a link registers one platform once.",
    action:
      "The registration exists (`GET /api/integrations/lti-consumers`); to register again, create a new link.",
  },
  lti_registration_link_expired: {
    status: 410,
    title: "LTI registration link expired",
    meaning: "The dynamic registration link is older than 24 hours and can no longer be used.",
    action: "Create a new link with `POST /api/integrations/lti-consumers/registration-links`.",
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    meaning: "The request body is larger than the operation accepts (1 MiB; 5 MiB for a bulk member upload).",
    action: "Send less per request: split the batch or the file.",
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    meaning: "The body's `Content-Type` is not one the operation accepts.",
    action:
      "Send `Content-Type: application/json` (a bulk member upload also takes `text/csv` or `multipart/form-data`).",
  },
  validation_failed: {
    status: 422,
    title: "Validation failed",
    meaning:
      "A field, query parameter or path parameter is missing, of the wrong type, out of range, or not one the operation knows; `errors` lists every failing one with its `path`.",
    action: "Fix every field that `errors` names and send the request again.",
  },
  lti_deep_linking_not_accepted: {
    status: 422,
    title: "Content not accepted by the platform",
    meaning:
      "The platform's deep-linking request does not accept what was chosen: its `accept_types` lack `ltiResourceLink`, its `accept_multiple` is false and several items were sent, or its `accept_lineitem` is false and an item asks for a line item; `errors` names each item. The launch's response is not used up.",
    action:
      "Choose what the platform accepts (one item, or items without `line_item`) and send the response again.",
  },
  idempotency_key_reused: {
    status: 422,
    title: "Idempotency key reused",
    meaning: "This `Idempotency-Key` was already used, within 24 hours, with a different request body.",
    action: "Use a new key for a new request; reuse a key only to retry the very same request.",
  },
  domain_not_verified: {
    status: 422,
    title: "Domain not verified",
    meaning:
      "The SSO e-mail domain could not be proven: its DNS TXT record is missing or does not match, or the domain is a public mail provider's. `reason` says which.",
    action: "Publish the TXT record the domain's entry shows, wait for DNS to update, and verify again.",
  },
  webhook_event_in_progress: {
    status: 409,
    title: "Webhook event in progress",
    meaning:
      "Another delivery of the same Stripe event is being handled right now; this one was not applied, so that the event takes effect once.",
    action: "Nothing: Stripe retries the delivery later, and it then answers 200 as a duplicate.",
  },
  contact_sales: {
    status: 422,
    title: "Contact sales",
    meaning:
      "The plan asked for (Enterprise), or the institution's current Enterprise contract, is sold and changed through sales, not through checkout.",
    action: "Contact sales; nothing was created.",
  },
  promo_code_invalid: {
    status: 422,
    title: "Promotion code invalid",
    meaning:
      "The promotion code cannot be used; the extension member `reason` says why: `not_found`, `expired`, `inactive`, `exhausted` (no redemptions left) or `not_applicable` (a restriction — first-time customers, a minimum amount, the products or the currency — excludes this institution's order). Nothing was applied.",
    action:
      "Check the code's spelling, or use another code; `not_applicable` codes may apply to another plan or order.",
  },
  rate_limited: {
    status: 429,
    title: "Too many requests",
    meaning:
      "A rate limit is used up: the token's, the institution's, the user's share, or the client address's for unauthenticated endpoints.",
    action: "Wait the `Retry-After` seconds, then retry; spread requests out or ask for a larger plan.",
  },
  internal_error: {
    status: 500,
    title: "Internal server error",
    meaning: "Something failed on our side; the answer never carries details of it.",
    action: "Retry later; if it persists, contact support quoting the `request_id`.",
  },
  bad_gateway: {
    status: 502,
    title: "Bad gateway",
    meaning:
      "A system we had to call on your behalf (an LMS's key set or token endpoint, for example) failed or answered something unusable.",
    action: "Check that the system is reachable and configured as registered, then try again.",
  },
  lti_platform_rejected: {
    status: 502,
    title: "LTI platform rejected the request",
    meaning:
      "The LMS refused what we asked on your behalf (a grade, its roster, its line items, or the access token for them); `platform_status` gives its answer, `platform_body` its first KiB, and for a grade `passback_id` the recorded attempt.",
    action:
      "Check the assignment and the tool's permissions (services and scopes) in the LMS, then try again.",
  },
  lti_platform_configuration_invalid: {
    status: 502,
    title: "LTI platform configuration invalid",
    meaning:
      "During a dynamic registration, the LMS's OpenID configuration could not be fetched, or it fails the LTI Dynamic Registration rules: its `issuer` does not prefix the configuration URL, a required field is missing or wrong, or one of its URLs may not be called (`detail` names it). Nothing was stored.",
    action:
      "Check the LMS's tool registration settings (its public URL, its LTI 1.3 support), then register again with the same link.",
  },
  lti_registration_rejected: {
    status: 502,
    title: "LTI registration rejected",
    meaning:
      "During a dynamic registration, the LMS's registration endpoint refused the tool's registration, could not be reached, or answered without a usable `client_id` (`detail` gives its status and the start of its answer). Nothing was stored.",
    action:
      "Start the registration again from the LMS (its registration token may have expired); the link stays usable until it expires.",
  },
  billing_provider_error: {
    status: 502,
    title: "Billing provider error",
    meaning:
      "Stripe failed, could not be reached, or refused a request of ours (a misconfigured key or price, for example); nothing was charged.",
    action:
      "Retry in a moment (with the same `Idempotency-Key`: Stripe receives the same idempotency key, so nothing is created twice); if it persists, contact support quoting the `request_id`.",
  },
  billing_not_configured: {
    status: 503,
    title: "Billing not configured",
    meaning:
      "This deployment has no Stripe key (`STRIPE_SECRET_KEY`), so plans can be listed without prices but nothing can be bought or changed.",
    action: "Ask the deployment's operator to configure billing (docs/billing.md, production setup).",
  },
  institution_moving: {
    status: 503,
    title: "Institution moving",
    meaning:
      "The institution is being switched over to another database by platform staff: for a few seconds its writes are refused while its reads are served; nothing was changed.",
    action:
      "Retry after `Retry-After` seconds (with the same `Idempotency-Key` where the operation takes one).",
  },
  institution_move_in_progress: {
    status: 409,
    title: "Institution move in progress",
    meaning: "The institution is already being moved to another database; one move runs at a time.",
    action: "Follow the move with `GET /api/institutions/{id}/move` and start another once it has ended.",
  },
  institution_already_there: {
    status: 409,
    title: "Institution already there",
    meaning: "The institution already lives in the database the move names.",
    action: "Nothing to do; `GET /api/institutions/{id}/move` shows where it lives.",
  },
  service_unavailable: {
    status: 503,
    title: "Service unavailable",
    meaning:
      "A dependency we need did not answer or is not configured (for example the DNS resolver); nothing was changed.",
    action: "Try again after `Retry-After` seconds, or a minute; if it persists, contact support.",
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
