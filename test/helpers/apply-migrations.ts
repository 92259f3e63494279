import { type D1Migration, env } from "cloudflare:test";
import { databaseIndexStatements } from "../../scripts/database-index.mjs";

/**
 * What the pool's `applyD1Migrations` does (the same `d1_migrations` table and rows), in one D1 batch
 * for all pending migrations instead of one per migration: one transaction instead of 50-odd round
 * trips, in every test file's set-up (docs/design/testing.md).
 */
async function applyMigrations(db: D1Database, migrations: D1Migration[]): Promise<void> {
  await db
    .prepare(
      `CREATE TABLE IF NOT EXISTS d1_migrations (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        name       TEXT UNIQUE,
        applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
      )`,
    )
    .run();
  const { results } = await db.prepare("SELECT name FROM d1_migrations").all<{ name: string }>();
  const applied = new Set(results.map(({ name }) => name));
  const record = db.prepare("INSERT INTO d1_migrations (name) VALUES (?)");
  const statements = migrations
    .filter(({ name }) => !applied.has(name))
    .flatMap(({ name, queries }) => [...queries.map((query) => db.prepare(query)), record.bind(name)]);
  if (statements.length > 0) await db.batch(statements);
}

// Storage is isolated per test file; applying is idempotent within a file. Every database has the
// same migrations (design/multi-database.md): DB, and DB_1 where some tests place an institution,
// each after its index, as every runner writes it (scripts/database-index.mjs).
const migrate = async (d1: D1Database, binding: string) => {
  await d1.batch(databaseIndexStatements(binding).map((statement) => d1.prepare(statement)));
  await applyMigrations(d1, env.TEST_MIGRATIONS);
};
await Promise.all([migrate(env.DB, "DB"), migrate(env.DB_1, "DB_1")]);

// The worker imports its queue consumers and sweeps on their first call. In this pool loading a
// module is I/O through Vite's module runner, which shares one in-flight load between concurrent
// callers: queue invocations that did not start it would wait on another invocation's I/O, be
// cancelled as hung and resume in the wrong request ("Cannot perform I/O on behalf of a different
// request"). Loaded here first, every later import() finds them evaluated.
await import("../../src/queue-consumers");
await import("../../src/scheduled");
