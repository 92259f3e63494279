import { defineConfig } from "vitest/config";

// End-to-end smoke tests: plain Node, no Cloudflare pool. They run `scripts/dev.mjs` (migrations,
// demo data, `wrangler dev`) in a temporary --persist-to directory and talk to it over real HTTP.
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/e2e/**/*.test.ts"],
    // Each file starts its own wrangler dev; one at a time keeps CI machines from thrashing.
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
  },
});
