/** The demo accounts' password (every demo account has it). */
export const DEMO_PASSWORD: string;
/** Where the demo institutions live: Globex in DB_1, the others in DB. */
export const DEMO_PLACEMENT: Record<string, string>;
/** The database an institution's rows go to (DB for platform users). */
export function demoDatabaseOf(institutionId: string | null, placement?: Record<string, string>): string;
/** DB's directory of the institutions placed elsewhere, and the e-mail keys of their `users`. */
export function directorySql(
  users: readonly { email: string; institutionId: string | null }[],
  placement?: Record<string, string>,
): string;
/** The demo institutions, accounts and members of `database`, as SQL (idempotent). */
export function demoSeedSql(options?: { database?: string; placement?: Record<string, string> }): string;
