import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { buildAssets } from "./scripts/build-assets.mjs";

// Tests run inside workerd with real local D1, Durable Objects (and later Queues and R2), isolated per file.
export default defineConfig(async () => {
  // wrangler.toml's [assets] directory, which wrangler fills by its [build] command and vitest does not.
  buildAssets();
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            // A 10-second window keeps rate-limit tests short; production stays at 60.
            RATE_LIMIT_WINDOW_SECONDS: "10",
            // A fixed test key (32 zero bytes would be too obviously fake to catch misuse).
            ENCRYPTION_KEY: "dGVzdC1lbmNyeXB0aW9uLWtleS0zMi1ieXRlcy0hISE=",
            // Webhooks point at the loopback receiver of test/helpers/receiver-server.ts.
            ALLOW_LOOPBACK_TARGETS: "true",
            // Short enough to exercise time-outs and every retry within a test.
            WEBHOOK_TIMEOUT_MS: "1000",
            WEBHOOK_RETRY_DELAYS_SECONDS: "1,1,1",
            // Exports: small keyset pages and a 1 ms time budget, so that even small test exports read
            // several pages and a multi-part export hands over to a new queue message after every part.
            // The part size stays R2's minimum (5 MiB): local R2 refuses smaller parts, like R2 does.
            EXPORT_PAGE_SIZE: "7",
            EXPORT_TIME_BUDGET_MS: "1",
            // Bulk uploads: small chunks and a 1 ms budget, so a test upload spans several queue messages.
            BULK_CHUNK_ROWS: "1000",
            BULK_TIME_BUDGET_MS: "1",
          },
          // The public catalogue's per-IP limit (600 a minute in wrangler.toml), small enough to reach
          // in a test; tests that are not about it send a fresh CF-Connecting-IP.
          ratelimits: { PUBLIC_RATE_LIMITER: { simple: { limit: 30, period: 60 } } },
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      exclude: ["test/e2e/**"],
      setupFiles: ["./test/helpers/apply-migrations.ts"],
      globalSetup: [
        "./test/helpers/receiver-server.ts",
        "./test/helpers/idp-server.ts",
        "./test/lti/platform-server.ts",
      ],
      testTimeout: 30_000,
    },
  };
});
