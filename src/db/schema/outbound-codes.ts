/**
 * The categories of a failed outbound call, as the delivery tables store them (`last_error_code`,
 * `error_code`). A leaf with no imports: the schema keeps its column enums without reaching into
 * `platform/outbound`, which re-exports this list as its own.
 */
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
