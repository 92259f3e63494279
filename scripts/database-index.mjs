// Each database's index (DB is 0, DB_<n> is n), written by every runner that migrates a database
// before it applies the migrations (docs/design/capacity.md, "Integer keys"): learners' and
// institutions' numbers are `sequence × 128 + index`, so two databases never allocate the same one.
// Migrations are the same in every database and cannot know the index; the runner knows the binding.
// Written before the migrations, so that the migration adding the numbers back-fills existing rows
// at once and refuses to run without it.
import { spawnSync } from "node:child_process";

/** The most databases the numbers allow (`number % 128` is the database's index). */
export const MAX_DATABASES = 128;

/** DB → 0, DB_<n> → n. */
export function databaseIndexOf(binding) {
  const match = /^DB(?:_([1-9][0-9]*))?$/.exec(binding);
  const index = match ? Number(match[1] ?? 0) : Number.NaN;
  if (!Number.isInteger(index) || index >= MAX_DATABASES)
    throw new Error(`${binding}: not a database binding of at most ${MAX_DATABASES} (DB, DB_1 … DB_127)`);
  return index;
}

// The same DDL as the schema's `database_numbering` (src/db/schema/numbers.ts) and migration
// `…_numbers.sql`, which creates it only where a runner did not.
const CREATE = `CREATE TABLE IF NOT EXISTS \`database_numbering\` (
	\`id\` integer PRIMARY KEY NOT NULL,
	\`database_index\` integer NOT NULL,
	\`next_sequence\` integer NOT NULL,
	CONSTRAINT "database_numbering_one_row" CHECK("database_numbering"."id" = 1),
	CONSTRAINT "database_numbering_index" CHECK("database_numbering"."database_index" BETWEEN 0 AND 127)
)`;

/** The statements that write `binding`'s index where none is written yet (idempotent). */
export function databaseIndexStatements(binding) {
  const index = databaseIndexOf(binding);
  return [
    CREATE,
    `INSERT INTO database_numbering (id, database_index, next_sequence) VALUES (1, ${index}, 0) ON CONFLICT (id) DO NOTHING`,
  ];
}

/** What reads the index back: a database keeps the index it was first given. */
export const READ_DATABASE_INDEX = "SELECT database_index FROM database_numbering WHERE id = 1";

/** Throws unless the index read back is `binding`'s: a database renamed in wrangler.toml is refused. */
export function checkDatabaseIndex(binding, found) {
  const expected = databaseIndexOf(binding);
  if (found !== expected)
    throw new Error(
      `${binding} holds the numbers of database ${found} (database_numbering), not ${expected}: a binding's database never changes`,
    );
}

/**
 * Writes `binding`'s index through wrangler (`where`: `--local` or `--remote`, and any `--persist-to`)
 * and checks it: what `migrate-all.mjs` and `dev.mjs` run before `wrangler d1 migrations apply`.
 */
export function writeDatabaseIndexWithWrangler(binding, where, { wrangler = "npx", cwd } = {}) {
  const prefix = wrangler === "npx" ? ["wrangler"] : [];
  const execute = (sql, json) =>
    spawnSync(
      wrangler,
      [...prefix, "d1", "execute", binding, ...where, ...(json ? ["--json"] : []), "--command", sql],
      {
        cwd,
        encoding: "utf8",
        env: { ...process.env, CI: "true" },
      },
    );
  const written = execute(databaseIndexStatements(binding).join(";\n"), false);
  if (written.status !== 0) throw new Error(`${binding}: writing its index failed\n${written.stderr}`);
  const read = execute(READ_DATABASE_INDEX, true);
  if (read.status !== 0) throw new Error(`${binding}: reading its index failed\n${read.stderr}`);
  checkDatabaseIndex(binding, JSON.parse(read.stdout)[0]?.results?.[0]?.database_index);
}
