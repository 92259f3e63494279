/** The categories of a failed outbound call: the list lives with the tables that store them. */
export { OUTBOUND_ERROR_CODES, type OutboundErrorCode } from "../../db/schema/outbound-codes";

/**
 * Why a host name could not be checked by the resolver (category `dns`), as a customer reads it. The
 * resolver's own detail (its HTTP status, an unreadable body, its answers) goes to the log only.
 */
export const DNS_FAILURES = {
  no_address: "the host name did not resolve",
  resolver_failed: "the resolver failed to look up the host name",
} as const;
export type DnsFailure = keyof typeof DNS_FAILURES;
