#!/usr/bin/env node
// One-command local setup: secrets for .dev.vars, D1 migrations, demo data, then `wrangler dev` with
// the local Stripe stand-in beside it (scripts/stripe-standin/; not when .dev.vars holds the
// developer's own Stripe keys). Safe to run again: nothing is duplicated and existing data is kept.
//   node scripts/dev.mjs [--port 8787] [--persist-to DIR] [--setup-only] [--inspect]
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { catalogSeedSql } from "./catalog-data.mjs";
import { writeDatabaseIndexWithWrangler } from "./database-index.mjs";
import { databaseBindingNames } from "./databases.mjs";
import { DEMO_PLACEMENT, demoDatabaseOf, demoGroupsSql, demoSeedSql } from "./demo-data.mjs";
import { insightsSeedSql } from "./demo-insights.mjs";
import { devVarsAdditions, parseDevVars, stripeMode } from "./dev-vars.mjs";
import { seedActivity } from "./seed.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8787" },
    "persist-to": { type: "string" },
    "setup-only": { type: "boolean", default: false },
    inspect: { type: "boolean", default: false },
  },
});
const persist = values["persist-to"] ? ["--persist-to", resolve(values["persist-to"])] : [];
const wrangler = join(root, "node_modules", ".bin", "wrangler");

/** `quiet`: keep wrangler's per-statement output to ourselves unless the command fails. */
function run(args, { quiet = false } = {}) {
  console.log(`$ wrangler ${args.join(" ")}`);
  const result = spawnSync(wrangler, args, {
    cwd: root,
    stdio: quiet ? ["inherit", "pipe", "inherit"] : "inherit",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, CI: "true" },
  });
  if (result.status !== 0) {
    if (quiet && result.stdout) process.stdout.write(result.stdout);
    process.exit(result.status ?? 1);
  }
}

// 1. Local secrets and settings, generated once and never committed (.dev.vars is git-ignored).
const devVars = join(root, ".dev.vars");
const existing = existsSync(devVars) ? readFileSync(devVars, "utf8") : "";
// Its values override wrangler.toml's [vars]: a key, loopback targets, and no public DNS resolver.
const additions = devVarsAdditions(existing);
if (additions.length > 0) {
  writeFileSync(
    devVars,
    `${existing + (existing && !existing.endsWith("\n") ? "\n" : "") + additions.join("\n")}\n`,
  );
  console.log(`wrote ${additions.length} value(s) to .dev.vars`);
}

/**
 * What DB holds before the demo data is written, in one wrangler call: which of `institutionIds` it
 * has (a set-up from before they were placed elsewhere) and how many attempts (activity is recorded
 * once). The seed files below write no attempts.
 */
function firstDatabaseState(institutionIds) {
  const list = institutionIds.map((id) => `'${id}'`).join(", ");
  const found = spawnSync(
    wrangler,
    [
      "d1",
      "execute",
      "DB",
      "--local",
      "--json",
      "--command",
      `SELECT (SELECT COUNT(*) FROM attempts) AS attempts, (SELECT json_group_array(id) FROM institutions WHERE id IN (${list || "NULL"})) AS institutions`,
      ...persist,
    ],
    { cwd: root, encoding: "utf8", env: { ...process.env, CI: "true" } },
  );
  const row = found.status === 0 ? JSON.parse(found.stdout)[0]?.results?.[0] : undefined;
  return {
    institutions: new Set(row ? JSON.parse(row.institutions) : []),
    attempts: row?.attempts ?? 0,
  };
}

// 2. Schema in every database (DB, DB_1, …: docs/design/multi-database.md), then 3. demo accounts and courses.
for (const binding of databaseBindingNames()) {
  writeDatabaseIndexWithWrangler(binding, ["--local", ...persist], { wrangler, cwd: root });
  run(["d1", "migrations", "apply", binding, "--local", ...persist]);
}
// Globex lives in DB_1, Acme and Initech in DB (DEMO_PLACEMENT): DB first, with the directory that finds
// Globex (its entry, its slug's and its members' keys), then each other database's own rows. A local
// set-up that put Globex in DB earlier keeps it there.
const bindings = databaseBindingNames();
const before = firstDatabaseState(Object.keys(DEMO_PLACEMENT));
const placement = Object.fromEntries(
  Object.entries(DEMO_PLACEMENT).filter(
    ([id, binding]) => bindings.includes(binding) && !before.institutions.has(id),
  ),
);
// 3b. With each database's accounts, the demo course catalogue (deterministic; fixed ids, so a second
// run inserts nothing), in the same wrangler call. The catalogue is in every database: each
// institution's activity refers to it where it lives.
const catalogSql = catalogSeedSql();
for (const binding of bindings) {
  const seedFile = join(root, ".wrangler", `demo-seed-${binding}.sql`);
  mkdirSync(dirname(seedFile), { recursive: true });
  const here = (institutionId) => demoDatabaseOf(institutionId, placement) === binding;
  writeFileSync(
    seedFile,
    `${demoSeedSql({ database: binding, placement })}${insightsSeedSql(here)}\n${catalogSql}`,
  );
  run(["d1", "execute", binding, "--local", `--file=${seedFile}`, ...persist], { quiet: true });
}
for (const [id, binding] of Object.entries(placement)) console.log(`demo: ${id} lives in ${binding}`);
console.log("demo course catalogue loaded (12 courses)");

// 3c. Demo learners with several weeks of activity, recorded through the real write path — once:
// a database that already holds attempts is left as it is.
const attemptCount = before.attempts;
if (attemptCount === 0) {
  await seedActivity({ learners: 240, days: 28, persistTo: values["persist-to"], placement });
} else {
  console.log(`demo activity already present (${attemptCount} attempts)`);
}

// 3d. Every demo learner in a group or two (idempotent).
const groupsFile = join(root, ".wrangler", "demo-groups.sql");
writeFileSync(groupsFile, demoGroupsSql());
for (const binding of bindings)
  run(["d1", "execute", binding, "--local", `--file=${groupsFile}`, ...persist], { quiet: true });

if (values["setup-only"]) process.exit(0);

// 3e. The Stripe stand-in, on STRIPE_API_BASE's loopback port (a free one when that is taken, passed
// to the worker in place of .dev.vars' value); its events go to the dev server's webhook endpoint.
const vars = parseDevVars(readFileSync(devVars, "utf8"));
const stripeBinding = {};
let stripeStandIn;
if (stripeMode(vars) === "stripe") {
  console.log(
    "Stripe: .dev.vars sets its own STRIPE_SECRET_KEY without STRIPE_API_BASE; billing talks to Stripe itself (no stand-in)",
  );
} else {
  const wanted = new URL(vars.STRIPE_API_BASE);
  if (!["127.0.0.1", "localhost", "[::1]"].includes(wanted.hostname)) {
    console.log(`Stripe: STRIPE_API_BASE is ${wanted.origin}, not a loopback address; no stand-in started`);
  } else {
    const { startStripeStandIn } = await import("./stripe-standin/index.mjs");
    const options = {
      host: "127.0.0.1",
      secretKey: vars.STRIPE_SECRET_KEY,
      webhookSecret: vars.STRIPE_WEBHOOK_SECRET,
      webhookUrl: `http://127.0.0.1:${values.port}/api/billing/webhook`,
      log: (line) => console.log(line),
    };
    stripeStandIn = await startStripeStandIn({ ...options, port: Number(wanted.port || 80) }).catch(
      (error) => {
        if (error?.code !== "EADDRINUSE") throw error;
        console.log(`Stripe: port ${wanted.port} is taken; the stand-in takes a free one`);
        return startStripeStandIn({ ...options, port: 0 });
      },
    );
    if (stripeStandIn.url !== wanted.origin) stripeBinding.STRIPE_API_BASE = stripeStandIn.url;
    console.log(
      `Stripe stand-in on ${stripeStandIn.url} (control API ${stripeStandIn.url}/_standin/deliveries; demo codes WELCOME20, EXPIRED10)`,
    );
  }
}
const stopStandIn = () => stripeStandIn?.close() ?? Promise.resolve();

// 4. Serve, with every binding local: wrangler's own dev server (`unstable_startWorker`, what
// `wrangler dev` runs), without its DevTools inspector. wrangler's inspector proxy keeps every DevTools
// event in memory until a debugger attaches, so under a long load the dev server slows down and grows
// by gigabytes. `--inspect` runs `wrangler dev` itself, inspector included, for a session with
// DevTools attached.
if (values.inspect) {
  const overrides = Object.entries(stripeBinding).flatMap(([name, value]) => ["--var", `${name}:${value}`]);
  const child = spawn(
    wrangler,
    ["dev", "--ip", "127.0.0.1", "--port", values.port, ...overrides, ...persist],
    { cwd: root, stdio: "inherit" },
  );
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  child.on("exit", async (code) => {
    await stopStandIn();
    process.exit(code ?? 0);
  });
} else {
  const { unstable_startWorker } = await import("wrangler");
  const worker = await unstable_startWorker({
    config: join(root, "wrangler.toml"),
    dev: {
      server: { hostname: "127.0.0.1", port: Number(values.port) },
      inspector: false,
      persist: persist[1],
    },
    bindings: Object.fromEntries(
      Object.entries(stripeBinding).map(([name, value]) => [name, { type: "plain_text", value }]),
    ),
  });
  await worker.ready;
  console.log(
    `Ready on ${(await worker.url).origin} (no DevTools inspector: npm run dev -- --inspect for one)`,
  );
  console.log(`Dashboard: ${(await worker.url).origin}/dashboard (owner@acme.lingua.test, lingua-demo-2026)`);
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"])
    process.on(signal, async () => {
      if (stopping) return;
      stopping = true;
      await worker.dispose().catch(() => {});
      await stopStandIn();
      process.exit(0);
    });
}
