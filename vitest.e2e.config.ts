import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { USES_SHARED_DEV_SERVER } from "./test/e2e/helpers/shared-dev-server";

/**
 * The other files first, while the shared dev server sets itself up in the background; then the files
 * that need it. (Without a cache vitest would run the largest file, dev-server.test.ts, first, and
 * have it wait for the whole set-up.)
 */
class SharedDevServerLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) =>
      USES_SHARED_DEV_SERVER.findIndex((file) => spec.moduleId.replaceAll("\\", "/").endsWith(file));
    return [
      ...sorted.filter((s) => rank(s) === -1),
      ...sorted.filter((s) => rank(s) !== -1).sort((a, b) => rank(a) - rank(b)),
    ];
  }
}

// End-to-end smoke tests: plain Node, no Cloudflare pool. `npm run dev` (scripts/dev.mjs: migrations,
// demo data, `wrangler dev`) runs once, in a temporary --persist-to directory, started by the global
// setup below and shared by the files that talk to it over real HTTP; test/e2e/lti-storage.test.ts
// starts a worker of its own.
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/e2e/**/*.test.ts"],
    globalSetup: ["./test/e2e/helpers/shared-dev-server.ts"],
    sequence: { sequencer: SharedDevServerLast },
    // One file at a time (the shared dev server sets up beside them) keeps CI machines from thrashing.
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
  },
});
