/** The demo accounts' password (every demo account has it). */
export const DEMO_PASSWORD: string;
/** The demo institutions, accounts and members, as SQL (idempotent). */
export function demoSeedSql(): string;
