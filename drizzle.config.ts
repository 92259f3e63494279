import { defineConfig } from "drizzle-kit";

// Migrations are generated here and applied by wrangler (`wrangler d1 migrations apply`) and by the tests.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/index.ts",
  out: "./migrations",
  migrations: { prefix: "index" },
});
