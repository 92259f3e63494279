// Learning-activity datasets of `npm run bench` (BENCH_ONLY=activity): the demo catalogue, demo
// accounts and generated learners written straight into D1, then every attempt recorded through the
// real write path (POST /api/progress/attempts, batches of 100 with user_id, as the platform admin),
// in a Miniflare worker. A built dataset is a Miniflare persist directory cached under
// .bench/datasets/<name>-<key>/, the key a hash of the generator inputs, the generator scripts and
// the migrations; a run works on a copy, so the cache is never written to.
//
//   BENCH_ACTIVITY_ATTEMPTS=N   scale the large dataset down to about N attempts (quick checks)
//   BENCH_ACTIVITY_NOW=ISO      the instant the activity ends (default: today 00:00 UTC, so a
//                               dataset is reused all day and rebuilt the next; pin it to keep one)
//   node scripts/bench/datasets.mjs small|large   build (or find) one dataset and print its path
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { generateAttempts, generateLearners, learnersSql } from "../activity-data.mjs";
import { buildDemoCatalog, catalogSeedSql } from "../catalog-data.mjs";
import { DEMO_PASSWORD, demoSeedSql } from "../demo-data.mjs";
import {
  BENCH_OUT,
  ensureDir,
  migrateEveryDatabase,
  ROOT,
  randomKey,
  readWranglerConfig,
  requestJson,
  storageBase,
  workerOptions,
} from "./lib.mjs";

/** ~102 attempts per learner over 9 days with the generator's habits (measured). */
const ATTEMPTS_PER_LEARNER = 102;
const DAYS = 9;
/** Bump when the way a dataset is built changes (what it contains, not just how fast). */
const DATASET_FORMAT = 1;

export function datasetSpecs() {
  const now = process.env.BENCH_ACTIVITY_NOW
    ? Date.parse(process.env.BENCH_ACTIVITY_NOW)
    : Math.floor(Date.now() / 86_400_000) * 86_400_000;
  if (!Number.isFinite(now)) throw new Error("BENCH_ACTIVITY_NOW must be an ISO date");
  const wanted = process.env.BENCH_ACTIVITY_ATTEMPTS ? Number(process.env.BENCH_ACTIVITY_ATTEMPTS) : null;
  const largeLearners = wanted ? Math.max(200, Math.round(wanted / ATTEMPTS_PER_LEARNER)) : 10_000;
  return {
    small: { name: "small", learners: 100, days: DAYS, now },
    large: { name: "large", learners: largeLearners, days: DAYS, now },
  };
}

export function datasetKey(spec, config) {
  const h = createHash("sha256");
  h.update(JSON.stringify({ v: DATASET_FORMAT, learners: spec.learners, days: spec.days, now: spec.now }));
  for (const file of ["activity-data.mjs", "catalog-data.mjs", "demo-data.mjs"])
    h.update(readFileSync(join(ROOT, "scripts", file)));
  const dir = config.migrationDirs.DB;
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort())
    h.update(f).update(readFileSync(join(dir, f)));
  return h.digest("hex").slice(0, 12);
}

/** Statements of a seed SQL text (one per `;` at the end of a line), without comment lines. */
function statementsOf(sql) {
  return sql
    .split(/;\n/)
    .map((s) =>
      s
        .split("\n")
        .filter((l) => !l.startsWith("--"))
        .join("\n")
        .trim(),
    )
    .filter(Boolean);
}

/** The Lingua worker's Miniflare options for the bench (bindings from wrangler.toml plus overrides). */
export function linguaWorker(
  config,
  scriptPath,
  { name = "lingua-api", vars = {}, cache = true, directSocket = false, wrapper } = {},
) {
  const { host, port, ...options } = workerOptions({
    name,
    scriptPath,
    wrapper,
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
    bindings: { ...config.vars, ENCRYPTION_KEY: randomKey(), ...vars },
    d1Databases: config.d1Databases,
    durableObjects: config.durableObjects,
  });
  // The public catalogue's per-IP limit (600/min in wrangler.toml) lifted: one client IP sends everything.
  options.ratelimits = { PUBLIC_RATE_LIMITER: { simple: { limit: 1_000_000_000, period: 60 } } };
  options.cache = cache;
  if (directSocket) options.unsafeDirectSockets = [{ host: "127.0.0.1", port: 0 }];
  return options;
}

/**
 * The dataset's persist directory, built first when it is not cached. Returns
 * { dir, key, meta } where meta holds the counts and the build time.
 */
export async function ensureDataset(spec, { config, scriptPath, log = (m) => console.error(m) }) {
  const key = datasetKey(spec, config);
  const dir = join(BENCH_OUT, "datasets", `${spec.name}-${key}`);
  if (existsSync(join(dir, "dataset.json")))
    return {
      spec,
      dir,
      key,
      meta: JSON.parse(readFileSync(join(dir, "dataset.json"), "utf8")),
      cached: true,
    };

  const catalog = buildDemoCatalog();
  const learners = generateLearners(spec.learners);
  const plan = learners.map((learner) => ({
    learner,
    attempts: generateAttempts(learner, catalog, { days: spec.days, now: spec.now }),
  }));
  const total = plan.reduce((n, p) => n + p.attempts.length, 0);
  log(
    `bench: building dataset ${spec.name} (${learners.length} learners, ${total.toLocaleString("en-US")} attempts over ${spec.days} days to ${new Date(spec.now).toISOString()})…`,
  );

  const storage = mkdtempSync(join(storageBase(), `lingua-dataset-${spec.name}-`));
  const mf = new Miniflare({
    ...linguaWorker(config, scriptPath, { vars: { RATE_LIMIT_WINDOW_SECONDS: "1" } }),
    host: "127.0.0.1",
    port: 0,
    defaultPersistRoot: storage,
  });
  const started = performance.now();
  try {
    const url = new URL(await mf.ready);
    const { d1 } = await migrateEveryDatabase(mf, config);
    for (const sql of [demoSeedSql(), catalogSeedSql(), learnersSql(learners, DEMO_PASSWORD)]) {
      const statements = statementsOf(sql);
      for (let i = 0; i < statements.length; i += 200)
        await d1.batch(statements.slice(i, i + 200).map((s) => d1.prepare(s)));
    }
    const signIn = await requestJson(new URL("/api/auth/sign-in", url), {
      method: "POST",
      body: { email: "admin@lingua.test", password: DEMO_PASSWORD },
    });
    const auth = { Authorization: `Bearer ${signIn.body.token}` };
    const loadStarted = performance.now();
    const queues = plan
      .filter((p) => p.attempts.length)
      .map(({ learner, attempts }) => ({ learner, attempts }));
    let recorded = 0;
    let lastLog = performance.now();
    // One learner's batches in order (outcomes depend on each other); learners in parallel.
    async function lane() {
      for (let item = queues.shift(); item; item = queues.shift()) {
        for (let i = 0; i < item.attempts.length; i += 100) {
          const body = await requestJson(new URL("/api/progress/attempts", url), {
            method: "POST",
            headers: auth,
            body: { user_id: item.learner.id, attempts: item.attempts.slice(i, i + 100) },
          });
          recorded += body.body.summary.recorded;
        }
        if (performance.now() - lastLog > 15_000) {
          lastLog = performance.now();
          const s = (lastLog - loadStarted) / 1000;
          log(
            `bench: dataset ${spec.name}: ${recorded.toLocaleString("en-US")}/${total.toLocaleString("en-US")} attempts in ${s.toFixed(0)} s (${Math.round(recorded / s)}/s)`,
          );
        }
      }
    }
    await Promise.all(Array.from({ length: 6 }, lane));
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const counts = {};
    for (const table of [
      "users",
      "attempts",
      "learner_stats",
      "lesson_progress",
      "item_progress",
      "weekly_xp",
      "daily_activity",
      "courses",
      "lessons",
      "training_items",
    ]) {
      counts[table] = (await d1.prepare(`SELECT count(*) AS n FROM ${table}`).first()).n;
    }
    const meta = {
      spec,
      key,
      learners: learners.length,
      attemptsGenerated: total,
      recorded,
      counts,
      loadSeconds,
      buildSeconds: (performance.now() - started) / 1000,
      attemptsPerSecond: recorded / loadSeconds,
      builtAt: new Date().toISOString(),
    };
    await mf.dispose();
    writeFileSync(join(storage, "dataset.json"), `${JSON.stringify(meta, null, 2)}\n`);
    ensureDir(join(BENCH_OUT, "datasets"));
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(storage, dir);
    } catch {
      cpSync(storage, dir, { recursive: true });
      rmSync(storage, { recursive: true, force: true });
    }
    log(
      `bench: dataset ${spec.name} built in ${meta.buildSeconds.toFixed(1)} s (attempts loaded in ${loadSeconds.toFixed(1)} s, ${Math.round(meta.attemptsPerSecond)}/s): ${dir}`,
    );
    return { spec, dir, key, meta, cached: false };
  } catch (error) {
    await mf.dispose().catch(() => undefined);
    rmSync(storage, { recursive: true, force: true });
    throw error;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const name = process.argv[2] ?? "small";
  const { bundleWithWrangler } = await import("./lib.mjs");
  const config = await readWranglerConfig();
  const build = bundleWithWrangler(join(ensureDir(join(BENCH_OUT, "dist")), "lingua-datasets"));
  const spec = datasetSpecs()[name];
  if (!spec) throw new Error(`unknown dataset ${name}`);
  const result = await ensureDataset(spec, { config, scriptPath: build.scriptPath });
  console.log(JSON.stringify({ dir: result.dir, cached: result.cached, meta: result.meta }, null, 2));
}
