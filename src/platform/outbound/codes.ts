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
