#!/usr/bin/env node
// Moves one institution to another D1 database, online, through a running worker
// (docs/institutions.md#moving-an-institution-to-another-database):
//
//   LINGUA_URL=https://api.example.com LINGUA_TOKEN=<platform staff token> \
//     node scripts/move-institution.mjs <institution id> <binding>
//
// (or --url and --token). Starts the move with POST /api/institutions/{id}/move and polls
// GET /api/institutions/{id}/move, printing each change of state and progress, until it ends.
// Exit code 0 when completed, 1 when it failed or could not start. Interrupting the command leaves
// the move running in the worker; run the command again to follow it (a move in progress is named).
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: "string" },
    token: { type: "string" },
    interval: { type: "string", default: "1000" },
  },
});
const [institution, binding] = positionals;
const base = (values.url ?? process.env.LINGUA_URL ?? "http://127.0.0.1:8787").replace(/\/$/, "");
const token = values.token ?? process.env.LINGUA_TOKEN;
if (!institution || !binding || !token) {
  console.error(
    "usage: LINGUA_URL=… LINGUA_TOKEN=<staff token> node scripts/move-institution.mjs <institution> <binding>",
  );
  process.exit(2);
}

const path = `${base}/api/institutions/${encodeURIComponent(institution)}/move`;
const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };

async function request(method, body) {
  const res = await fetch(path, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { detail: text };
  }
  return { status: res.status, body: json };
}

const started = await request("POST", { database: binding });
let moveId;
if (started.status === 202) {
  moveId = started.body.id;
  console.log(`move ${moveId}: ${started.body.source} → ${started.body.target}, queued`);
} else if (started.status === 409 && started.body.code === "institution_move_in_progress") {
  moveId = started.body.move_id;
  console.log(`a move is already running (${moveId}); following it`);
} else {
  console.error(
    `could not start the move: ${started.status} ${started.body.code ?? ""} ${started.body.detail ?? ""}`,
  );
  process.exit(1);
}

const total = (counts) => Object.values(counts ?? {}).reduce((sum, n) => sum + n, 0);
let last = "";
for (;;) {
  await new Promise((resolve) => setTimeout(resolve, Number(values.interval)));
  const { status, body } = await request("GET");
  if (status !== 200) {
    console.error(`could not read the move: ${status} ${body.code ?? ""} ${body.detail ?? ""}`);
    continue;
  }
  const move = body.move;
  if (!move || move.id !== moveId) {
    console.error(`the institution's latest move is no longer ${moveId}`);
    process.exit(1);
  }
  const { copied, verified, deleted, freeze_ms: freeze } = move.progress;
  const line = `${move.state}: ${total(copied)} rows copied, ${total(verified)} verified, ${total(deleted)} deleted${
    freeze === null ? "" : `; writes paused ${freeze} ms`
  }`;
  if (line !== last) console.log(line);
  last = line;
  if (move.state === "completed") {
    console.log(`done: ${institution} lives in ${body.database}`);
    process.exit(0);
  }
  if (move.state === "failed") {
    console.error(`failed: ${move.error}`);
    process.exit(1);
  }
}
