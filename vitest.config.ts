import { availableParallelism } from "node:os";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";
import { buildAssets } from "./scripts/build-assets.mjs";
import { devVarsAdditions, parseDevVars } from "./scripts/dev-vars.mjs";
import { prebundledDependencies, UNBUNDLED_DEPENDENCIES } from "./scripts/prebundled-deps.mjs";
import { startStripeStandIn } from "./scripts/stripe-standin/index.mjs";
import { LOCAL_SECRET_KEY, LOCAL_WEBHOOK_SECRET, standInBindings } from "./scripts/stripe-standin/local.mjs";
import { withPlainAnswers } from "./test/helpers/pool-transport";

// One Stripe stand-in (scripts/stripe-standin/) for the whole run, however often vitest evaluates the
// config: the worker's `stripe` SDK talks to it through STRIPE_API_BASE; tests reach its control API
// through `inject("stripeUrl")` (test/helpers/stripe.ts). It keeps every event for the tests to deliver
// (no webhook URL): each test delivers its own customer's events to the worker.
let stripeStandIn: ReturnType<typeof startStripeStandIn> | undefined;
function stripeForTests() {
  stripeStandIn ??= startStripeStandIn({
    secretKey: LOCAL_SECRET_KEY,
    webhookSecret: LOCAL_WEBHOOK_SECRET,
  }).then((standIn) => {
    // Never what keeps the run's process alive; closed when it exits.
    standIn.unref();
    process.once("exit", () => void standIn.close());
    return standIn;
  });
  return stripeStandIn;
}

// Tests run inside workerd with real local D1, Durable Objects (and later Queues and R2), isolated per file.
export default defineConfig(async () => {
  // wrangler.toml's [assets] directory, which wrangler fills by its [build] command and vitest does not.
  buildAssets();
  const migrations = await readD1Migrations("./migrations");
  // What a deployment and `npm run dev` get, read as wrangler and scripts/dev.mjs read them, for
  // test/platform/config.test.ts (the tests' own bindings below override some of them).
  const shippedVars = unstable_readConfig({ config: "./wrangler.toml" }).vars as Record<string, string>;
  const devVars = parseDevVars(devVarsAdditions("").join("\n")) as Record<string, string>;
  const stripe = await stripeForTests();
  return {
    plugins: [
      // The runner's module answers written as plain JSON (test/helpers/pool-transport.ts).
      withPlainAnswers(
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
              // Never wrangler.toml's public resolver: names are judged by their text, and the tests of the
              // resolver check point OUTBOUND_DOH_URL at the loopback stub (test/helpers/receiver-doh.ts).
              OUTBOUND_DOH_URL: "off",
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
              // xAPI back-fills: small chunks and a 1 ms budget, so a back-fill spans several messages.
              XAPI_BACKFILL_CHUNK_SIZE: "20",
              XAPI_BACKFILL_TIME_BUDGET_MS: "1",
              // Billing talks to the run's Stripe stand-in (STRIPE_API_BASE, a fixed sk_test_/whsec_
              // pair, the demo price ids); checkout redirects may only go to the test app's origin.
              ...standInBindings(stripe.url),
              BILLING_REDIRECT_ORIGINS: "https://app.example.test",
            },
            // The public catalogue's per-IP limit (600 a minute in wrangler.toml), small enough to reach
            // in a test; tests that are not about it send a fresh CF-Connecting-IP.
            ratelimits: { PUBLIC_RATE_LIMITER: { simple: { limit: 30, period: 60 } } },
          },
        }),
      ),
    ],
    test: {
      // Each file's workerd fetches every module it loads from Vite, one round trip each: the runtime
      // dependencies pre-bundled (scripts/prebundled-deps.mjs) are a few dozen modules instead
      // of some 750, which roughly halves each file's set-up (docs/design/testing.md).
      deps: {
        optimizer: {
          ssr: {
            enabled: true,
            include: prebundledDependencies(import.meta.dirname),
            exclude: UNBUNDLED_DEPENDENCIES,
          },
        },
      },
      provide: { shippedVars, devVars, stripeUrl: stripe.url },
      include: ["test/**/*.test.ts"],
      exclude: ["test/e2e/**"],
      setupFiles: ["./test/helpers/apply-migrations.ts"],
      globalSetup: [
        "./test/helpers/receiver-server.ts",
        "./test/helpers/idp-server.ts",
        "./test/lti/platform-server.ts",
        "./test/helpers/document-cache-server.ts",
        "./test/helpers/lrs-server.ts",
        // A real OpenID Provider (oidc-provider) for the SSO sign-in tests.
        "./test/sso/openid-provider.ts",
      ],
      // A hang guard, not a speed check: with a file per core, a test shares its core with another
      // file's, so it gets twice the 30 s it had when the files ran one at a time.
      testTimeout: 60_000,
      // Each test file gets a workerd of its own (that is what isolates its storage), and much of a
      // file's time is spent waiting (queues, retry delays, timers), not computing. Vitest's default
      // of one worker fewer than the cores ran the files one at a time on CI's 2 cores; a file per
      // core keeps both busy.
      maxWorkers: Math.max(2, availableParallelism()),
    },
  };
});
