import { applyD1Migrations, env } from "cloudflare:test";
import { databaseIndexStatements } from "../../scripts/database-index.mjs";

// Storage is isolated per test file; applying is idempotent within a file. Every database has the
// same migrations (design/multi-database.md): DB, and DB_1 where some tests place an institution,
// each after its index, as every runner writes it (scripts/database-index.mjs).
const migrate = async (d1: D1Database, binding: string) => {
  await d1.batch(databaseIndexStatements(binding).map((statement) => d1.prepare(statement)));
  await applyD1Migrations(d1, env.TEST_MIGRATIONS);
};
await Promise.all([migrate(env.DB, "DB"), migrate(env.DB_1, "DB_1")]);

// The worker imports its queue consumers and sweeps on their first call. In this pool loading a
// module is I/O through Vite's module runner, which shares one in-flight load between concurrent
// callers: queue invocations that did not start it would wait on another invocation's I/O, be
// cancelled as hung and resume in the wrong request ("Cannot perform I/O on behalf of a different
// request"). Loaded here first, every later import() finds them evaluated.
await import("../../src/queue-consumers");
await import("../../src/scheduled");
