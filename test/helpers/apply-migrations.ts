import { applyD1Migrations, env } from "cloudflare:test";

// Storage is isolated per test file; applying is idempotent within a file.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
