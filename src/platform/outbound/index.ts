/**
 * The outbound gate: every call to a customer-supplied URL (webhooks, SSO discovery, SAML metadata,
 * LTI platforms, LRS) goes through here. See docs/design/outbound.md.
 */
export { classifyAddress, classifyHost, type HostClass } from "./address";
export { OUTBOUND_ERROR_CODES, type OutboundErrorCode } from "./codes";
export {
  type OutboundOptions,
  type OutboundResult,
  outboundFetch,
  RESPONSE_PREFIX_BYTES,
} from "./fetch";
export {
  checkOutboundUrl,
  MAX_URL_LENGTH,
  type OutboundPolicy,
  outboundPolicy,
  type UrlVerdict,
  urlProblem,
} from "./gate";
export { isRetryable, nextRetrySeconds, parseRetryAfter, retryDelaySeconds } from "./retry";
