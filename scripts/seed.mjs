#!/usr/bin/env node
// Learners and several weeks of deterministic learning activity, recorded through the real write path.
//   npm run seed -- [--learners 240] [--days 28] [--persist-to DIR] [--concurrency 4]
// Needs the demo accounts and catalogue (npm run dev, or node scripts/dev.mjs --setup-only).
// Safe to run again: learners are inserted once and attempt ids are stable, so a re-run counts nothing twice.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { unstable_dev } from "wrangler";
import { FEATURED_LEARNERS, generateAttempts, generateLearners, learnersSql } from "./activity-data.mjs";
import { buildDemoCatalog } from "./catalog-data.mjs";
import { DEMO_PASSWORD, DEMO_USERS, demoDatabaseOf, directorySql } from "./demo-data.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The directory of the local DB: which institution lives in which other database. */
function readPlacement(persist) {
  const read = wrangler([
    "d1",
    "execute",
    "DB",
    "--local",
    "--json",
    "--command",
    "SELECT institution_id, binding FROM institution_databases",
    ...persist,
  ]);
  if (read.status !== 0) return {};
  const rows = JSON.parse(read.stdout)[0]?.results ?? [];
  return Object.fromEntries(rows.map((row) => [row.institution_id, row.binding]));
}

function wrangler(args) {
  return spawnSync(join(root, "node_modules", ".bin", "wrangler"), args, {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, CI: "true" },
  });
}

/**
 * `placement`: where each institution lives (demo-data.mjs's DEMO_PLACEMENT as `npm run dev` set it
 * up); read from the local DB's directory when left out.
 */
export async function seedActivity({
  learners: learnerCount = 240,
  days = 28,
  persistTo,
  concurrency = 4,
  placement,
  log = console.log,
} = {}) {
  const persist = persistTo ? ["--persist-to", resolve(persistTo)] : [];
  const learners = generateLearners(learnerCount);
  // Each learner in their institution's database, DB's directory (their e-mail keys) first.
  placement ??= readPlacement(persist);
  const databases = [...new Set(["DB", ...Object.values(placement)])];
  for (const binding of databases) {
    const here = learners.filter((l) => demoDatabaseOf(l.institutionId, placement) === binding);
    const sql =
      (binding === "DB" ? directorySql(learners, placement) : "") + learnersSql(here, DEMO_PASSWORD);
    const sqlFile = join(root, ".wrangler", `learners-${learnerCount}-${binding}.sql`);
    mkdirSync(dirname(sqlFile), { recursive: true });
    writeFileSync(sqlFile, sql);
    const inserted = wrangler(["d1", "execute", binding, "--local", `--file=${sqlFile}`, ...persist]);
    if (inserted.status !== 0)
      throw new Error(`inserting learners in ${binding} failed:\n${inserted.stdout}`);
  }

  const catalog = buildDemoCatalog();
  const now = Date.now();
  const plan = [...FEATURED_LEARNERS, ...learners].map((learner) => ({
    learner,
    attempts: generateAttempts(learner, catalog, { days, now }),
  }));
  const total = plan.reduce((n, p) => n + p.attempts.length, 0);
  log(`seed: ${learners.length} learners and the demo learners, ${total} attempts over ${days} days`);

  // The real worker, on the same local storage as `wrangler dev`. A one-second rate-limit window
  // lifts the per-token limit for this bulk load only.
  const worker = await unstable_dev(join(root, "src", "index.ts"), {
    config: join(root, "wrangler.toml"),
    ...(persistTo ? { persistTo: resolve(persistTo) } : {}),
    vars: { RATE_LIMIT_WINDOW_SECONDS: "1" },
    logLevel: "warn",
    experimental: { disableExperimentalWarning: true, testMode: false },
  });
  try {
    // Each institution's owner records its learners' attempts (an admin may record for its members),
    // so that every request runs in the institution's own database.
    const tokens = new Map();
    for (const owner of DEMO_USERS.filter((u) => u.role === "institution_admin")) {
      const signIn = await worker.fetch("/api/auth/sign-in", {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": "127.0.0.1" },
        body: JSON.stringify({ email: owner.email, password: DEMO_PASSWORD }),
      });
      if (signIn.status !== 200)
        throw new Error(`sign-in as ${owner.email} failed (${signIn.status}): run the dev setup first`);
      tokens.set(owner.institutionId, (await signIn.json()).token);
    }

    const batches = plan.flatMap(({ learner, attempts }) =>
      chunk(attempts, 100).map((batch) => ({ learner, batch })),
    );
    const byLearner = new Map();
    for (const b of batches) byLearner.set(b.learner.id, [...(byLearner.get(b.learner.id) ?? []), b]);
    const queues = [...byLearner.values()];
    let recorded = 0;
    let duplicates = 0;
    let done = 0;
    const started = Date.now();
    // One learner's batches in order (their outcomes depend on each other); learners in parallel.
    async function lane() {
      for (let queue = queues.shift(); queue; queue = queues.shift()) {
        for (const { learner, batch } of queue) {
          const res = await worker.fetch("/api/progress/attempts", {
            method: "POST",
            headers: {
              "Content-Type": "application/json",
              Authorization: `Bearer ${tokens.get(learner.institutionId)}`,
            },
            body: JSON.stringify({ user_id: learner.id, attempts: batch }),
          });
          const body = await res.json();
          if (res.status !== 200)
            throw new Error(`recording for ${learner.id} failed (${res.status}): ${JSON.stringify(body)}`);
          recorded += body.summary.recorded;
          duplicates += body.summary.duplicates;
          done += 1;
          if (done % 200 === 0) log(`seed: ${done}/${batches.length} batches`);
        }
      }
    }
    await Promise.all(Array.from({ length: concurrency }, lane));
    const seconds = (Date.now() - started) / 1000;
    log(`seed: recorded ${recorded} attempts (${duplicates} already there) in ${seconds.toFixed(1)} s`);
    return { learners: learners.length, attempts: total, recorded, duplicates, seconds };
  } finally {
    await worker.stop();
  }
}

function chunk(items, size) {
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      learners: { type: "string", default: "240" },
      days: { type: "string", default: "28" },
      "persist-to": { type: "string" },
      concurrency: { type: "string", default: "4" },
    },
  });
  seedActivity({
    learners: Number(values.learners),
    days: Number(values.days),
    persistTo: values["persist-to"],
    concurrency: Number(values.concurrency),
  }).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
