import type { ClaimedDelivery } from "./attempt";

/** The columns of a webhook row (as plain SQL reads them) that signing and sending need. */
export interface HookSigningRow {
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  consecutive_failures: number;
}

/** What signing and sending need of a webhook, from its row as the fan-out and the claim read it. */
export function webhookToSign(id: string, row: HookSigningRow): ClaimedDelivery["webhook"] {
  return {
    id,
    url: row.url,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    consecutiveFailures: row.consecutive_failures,
  };
}
