export const MAX_DATABASES: number;
/** DB → 0, DB_<n> → n. */
export function databaseIndexOf(binding: string): number;
/** The statements that write `binding`'s index where none is written yet (idempotent). */
export function databaseIndexStatements(binding: string): string[];
export const READ_DATABASE_INDEX: string;
/** Throws unless the index read back is `binding`'s. */
export function checkDatabaseIndex(binding: string, found: number | null | undefined): void;
/** Writes and checks `binding`'s index through wrangler (`where`: `--local`/`--remote`, `--persist-to`). */
export function writeDatabaseIndexWithWrangler(
  binding: string,
  where: string[],
  options?: { wrangler?: string; cwd?: string },
): void;
