// The bulk-provisioning scenario of `npm run bench` (BENCH_ONLY=bulk): a 10,000-row member upload end to
// end through the Miniflare API — POST of the CSV (202), the bulk queue's consumer applying it chunk by
// chunk (members, groups, invitations, member.created events, report rows, checkpoints), until the job
// is `completed` — against a floor measured in the same run: a plain batched D1 insert of the same
// 10,000 users (10 rows per statement, 100 statements per batch, sent from Node to the same local D1).
//
// The time of an upload runs from the POST to the instant the consumer marks the job `completed`
// (its `heartbeat_at`, ms). Only the bulk queues are consumed; the events the upload publishes stay in
// their queue. Every round uploads new people into a fresh institution, so each upload creates 10,000
// members (the costly case) and the floor inserts 10,000 new rows.
//
// A queued upload mints its invitations when the report's rows are first read, not while it runs; so
// that this cost is seen too, each round then reads the whole report (pages of 1,000, minting every
// invitation) and reports that time on its own line. It is not part of the ratio.
//
//   BENCH_BULK_ROUNDS=3    measured rounds (after one warm-up round)
//   BENCH_BULK_ROWS=10000  data rows per upload
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { DEMO_PASSWORD, hashPassword } from "../demo-data.mjs";
import { linguaWorker } from "./datasets.mjs";
import { median, migrateEveryDatabase, requestJson, storageBase } from "./lib.mjs";

const GOAL_RATIO = 2;
const TIMEOUT_MS = 180_000;

function workers(config, scriptPath) {
  const lingua = linguaWorker(config, scriptPath);
  const consumers = Object.fromEntries(
    Object.entries(config.queueConsumers).filter(([queue]) => queue.startsWith("lingua-bulk-members")),
  );
  Object.assign(lingua, {
    queueProducers: config.queueProducers,
    queueConsumers: consumers,
    r2Buckets: config.r2Buckets,
  });
  return [lingua];
}

function people(rows, tag) {
  return Array.from({ length: rows }, (_, i) => ({
    email: `${tag}-${i}@bench.lingua.test`,
    name: `Bench Member ${i}`,
    externalId: `${tag}-${i}`,
    groups: `Year ${7 + (i % 3)};Club ${i % 10}`,
  }));
}

function csvOf(list) {
  const lines = ["email,name,role,external_id,groups"];
  for (const p of list) lines.push(`${p.email},${p.name},learner,${p.externalId},${p.groups}`);
  return `${lines.join("\r\n")}\r\n`;
}

/** A fresh institution with a signed-in admin. */
async function institution(d1, base, tag, passwordHash) {
  const id = `ins_bench_bulk_${tag}`;
  await d1.batch([
    d1
      .prepare(
        "INSERT INTO institutions (id, slug, name, plan, rate_limit_per_minute) VALUES (?, ?, ?, 'enterprise', 1000000000)",
      )
      .bind(id, `bench-bulk-${tag}`, `Bench bulk ${tag}`),
    d1
      .prepare(
        "INSERT INTO users (id, email, name, role, institution_id, password_hash) VALUES (?, ?, 'Bench Admin', 'institution_admin', ?, ?)",
      )
      .bind(`usr_bench_bulk_${tag}`, `admin-${tag}@bench.lingua.test`, id, passwordHash),
  ]);
  const signIn = await requestJson(new URL("/api/auth/sign-in", base), {
    method: "POST",
    headers: { "CF-Connecting-IP": `198.51.100.${Math.floor(Math.random() * 250) + 1}` },
    body: { email: `admin-${tag}@bench.lingua.test`, password: DEMO_PASSWORD },
  });
  return { id, auth: { Authorization: `Bearer ${signIn.body.token}` } };
}

async function waitUntilDone(d1, jobId) {
  const started = performance.now();
  for (;;) {
    if (performance.now() - started > TIMEOUT_MS)
      throw new Error(`bulk job ${jobId} not done after ${TIMEOUT_MS / 1000} s`);
    const job = await d1
      .prepare("SELECT status, next_row, heartbeat_at, error FROM bulk_jobs WHERE id = ?")
      .bind(jobId)
      .first();
    if (job.status === "completed") return job.heartbeat_at;
    if (job.status === "failed") throw new Error(`bulk job ${jobId} failed: ${job.error}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function uploadRun(d1, base, rows, tag, passwordHash) {
  const { id, auth } = await institution(d1, base, tag, passwordHash);
  const body = csvOf(people(rows, `up-${tag}`));
  const started = Date.now();
  const response = await fetch(new URL(`/api/institutions/${id}/members/bulk`, base), {
    method: "POST",
    headers: { ...auth, "Content-Type": "text/csv" },
    body,
  });
  const text = await response.text();
  if (response.status !== 202) throw new Error(`upload answered ${response.status}: ${text.slice(0, 300)}`);
  const finishedAt = await waitUntilDone(d1, JSON.parse(text).id);
  const seconds = (finishedAt - started) / 1000;
  const created = (
    await d1
      .prepare("SELECT count(*) AS n FROM users WHERE institution_id = ? AND status = 'invited'")
      .bind(id)
      .first()
  ).n;
  if (created !== rows) throw new Error(`upload created ${created} members, expected ${rows}`);
  const report = await readWholeReport(base, auth, response.headers.get("Location"), rows);
  return { seconds, rowsPerSecond: rows / seconds, bytes: body.length, report };
}

/** Reads every page of the finished report, as an administrator fetching the invitation URLs does. */
async function readWholeReport(base, auth, location, rows) {
  const started = performance.now();
  let invitations = 0;
  for (let page = 1; page <= Math.ceil(rows / 1000); page++) {
    const { status, body } = await requestJson(new URL(`${location}?per_page=1000&page=${page}`, base), {
      headers: auth,
    });
    if (status !== 200) throw new Error(`report page ${page} answered ${status}`);
    invitations += body.rows.filter((r) => r.invitation_url).length;
  }
  const seconds = (performance.now() - started) / 1000;
  if (invitations !== rows) throw new Error(`the report showed ${invitations} invitations, expected ${rows}`);
  return { seconds, rowsPerSecond: rows / seconds };
}

/** The floor: the same users inserted with plain multi-row INSERTs in D1 batches. */
async function floorRun(d1, rows, tag, passwordHash) {
  const id = `ins_bench_floor_${tag}`;
  await d1
    .prepare("INSERT INTO institutions (id, slug, name) VALUES (?, ?, 'Bench floor')")
    .bind(id, `bench-floor-${tag}`)
    .run();
  const list = people(rows, `fl-${tag}`);
  const now = `${new Date().toISOString().slice(0, 19)}Z`;
  const perStatement = 10; // 10 columns × 10 rows = D1's 100 bound parameters
  const placeholders = Array.from(
    { length: perStatement },
    () => "(?, ?, ?, 'learner', ?, ?, 'invited', ?, ?, ?)",
  ).join(", ");
  const statements = [];
  for (let i = 0; i < list.length; i += perStatement) {
    const part = list.slice(i, i + perStatement);
    const values = part.flatMap((p, j) => [
      `usr_fl_${tag}_${i + j}`,
      p.email,
      p.name,
      id,
      passwordHash,
      p.externalId,
      now,
      now,
    ]);
    const sql =
      part.length === perStatement
        ? placeholders
        : Array.from({ length: part.length }, () => "(?, ?, ?, 'learner', ?, ?, 'invited', ?, ?, ?)").join(
            ", ",
          );
    statements.push(
      d1
        .prepare(
          `INSERT INTO users (id, email, name, role, institution_id, password_hash, status, external_id, created_at, updated_at) VALUES ${sql}`,
        )
        .bind(...values),
    );
  }
  const started = performance.now();
  for (let i = 0; i < statements.length; i += 100) await d1.batch(statements.slice(i, i + 100));
  const seconds = (performance.now() - started) / 1000;
  return { seconds, rowsPerSecond: rows / seconds };
}

export async function runBulk({
  config,
  scriptPath,
  log = (m) => console.error(`${new Date().toISOString().slice(11, 19)} ${m}`),
}) {
  const rounds = Number(process.env.BENCH_BULK_ROUNDS ?? 3);
  const rows = Number(process.env.BENCH_BULK_ROWS ?? 10_000);
  const storage = mkdtempSync(join(storageBase(), "lingua-bench-bulk-"));
  const mf = new Miniflare({
    workers: workers(config, scriptPath),
    host: "127.0.0.1",
    port: 0,
    defaultPersistRoot: storage,
  });
  try {
    const base = new URL(await mf.ready);
    const { d1 } = await migrateEveryDatabase(mf, config);
    const passwordHash = hashPassword(DEMO_PASSWORD);
    log("bench: bulk: warm-up (one upload, one floor insert)…");
    await uploadRun(d1, base, rows, "warm", passwordHash);
    await floorRun(d1, rows, "warm", passwordHash);
    const runs = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate the order so that drift of the machine does not always favour one side.
      const upFirst = round % 2 === 0;
      const floor = upFirst ? null : await floorRun(d1, rows, `r${round}`, passwordHash);
      const upload = await uploadRun(d1, base, rows, `r${round}`, passwordHash);
      const floorResult = floor ?? (await floorRun(d1, rows, `r${round}`, passwordHash));
      const ratio = floorResult.rowsPerSecond / upload.rowsPerSecond;
      log(
        `bench: bulk: round ${round + 1}/${rounds}: upload ${upload.seconds.toFixed(2)} s (${Math.round(upload.rowsPerSecond)} rows/s), floor ${floorResult.seconds.toFixed(2)} s (${Math.round(floorResult.rowsPerSecond)} rows/s), ratio ${ratio.toFixed(2)}; report read ${upload.report.seconds.toFixed(2)} s`,
      );
      runs.push({ upload, floor: floorResult, ratio });
    }
    return {
      rows,
      runs,
      uploadRowsPerSecond: median(runs.map((r) => r.upload.rowsPerSecond)),
      floorRowsPerSecond: median(runs.map((r) => r.floor.rowsPerSecond)),
      ratio: median(runs.map((r) => r.ratio)),
      goalRatio: GOAL_RATIO,
    };
  } finally {
    await mf.dispose().catch(() => undefined);
    rmSync(storage, { recursive: true, force: true });
  }
}

export function bulkReport(result, formatTable) {
  const verdict = result.ratio <= result.goalRatio ? "met" : "NOT met";
  return [
    "",
    `Bulk member upload, ${result.rows.toLocaleString("en-US")} new members end to end (POST → queue → completed), medians of ${result.runs.length} rounds:`,
    formatTable(
      ["measure", "rows/s", "seconds"],
      [
        [
          "upload (202, queue, completed)",
          Math.round(result.uploadRowsPerSecond),
          median(result.runs.map((r) => r.upload.seconds)).toFixed(2),
        ],
        [
          "report read, minting every invitation",
          Math.round(median(result.runs.map((r) => r.upload.report.rowsPerSecond))),
          median(result.runs.map((r) => r.upload.report.seconds)).toFixed(2),
        ],
        [
          "floor: plain batched D1 insert",
          Math.round(result.floorRowsPerSecond),
          median(result.runs.map((r) => r.floor.seconds)).toFixed(2),
        ],
      ],
    ),
    `Floor ÷ upload time ratio: ${result.ratio.toFixed(2)} (goal ≤ ${result.goalRatio}: ${verdict}).`,
  ].join("\n");
}
