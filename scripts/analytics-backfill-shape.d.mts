export interface NamedMigration {
  name: string;
  queries: string[];
}
export const MIGRATIONS_SINCE_BACKFILL: string[];
export function tablesAsBackfillWants(migrations: NamedMigration[]): string[];
export function migrationNamed(migrations: NamedMigration[], suffix: string): string[];
