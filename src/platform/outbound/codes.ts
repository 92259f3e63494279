/** The categories of a failed outbound call (no imports: the database schema uses them too). */
export const OUTBOUND_ERROR_CODES = [
  "timeout",
  "connection_failed",
  "tls",
  "dns",
  "redirect",
  "http_status",
  "target_refused",
] as const;
export type OutboundErrorCode = (typeof OUTBOUND_ERROR_CODES)[number];

/**
 * Why a host name could not be checked by the resolver (category `dns`), as a customer reads it. The
 * resolver's own detail (its HTTP status, an unreadable body, its answers) goes to the log only.
 */
export const DNS_FAILURES = {
  no_address: "the host name did not resolve",
  resolver_failed: "the resolver failed to look up the host name",
} as const;
export type DnsFailure = keyof typeof DNS_FAILURES;
