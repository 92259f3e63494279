#!/usr/bin/env node
// Applies the migrations to every database of wrangler.toml (DB, DB_1, …), one after the other, each
// after its index (scripts/database-index.mjs):
// `node scripts/migrate-all.mjs --remote` for a deployment, `--local` for the local ones. Stops at the
// first database whose migrations fail, naming it; a re-run applies only what is missing.
import { spawnSync } from "node:child_process";
import { writeDatabaseIndexWithWrangler } from "./database-index.mjs";
import { databaseBindingNames } from "./databases.mjs";

const where = process.argv.includes("--remote") ? "--remote" : "--local";
const extra = process.argv.slice(2).filter((arg) => arg !== "--remote" && arg !== "--local");
for (const binding of databaseBindingNames()) {
  console.log(`migrations: ${binding} (${where.slice(2)})`);
  // Its index first: the numbers' migration needs it (scripts/database-index.mjs).
  try {
    writeDatabaseIndexWithWrangler(binding, [where, ...extra]);
  } catch (error) {
    console.error(`${error.message}\nthe databases before ${binding} are migrated`);
    process.exit(1);
  }
  const result = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", binding, where, ...extra], {
    stdio: "inherit",
    env: { ...process.env, CI: "true" },
  });
  if (result.status !== 0) {
    console.error(`migrations failed for ${binding}; the databases before it are migrated`);
    process.exit(result.status ?? 1);
  }
}
