/**
 * One `npm run dev` for the whole end-to-end run, started from a fresh --persist-to directory the way
 * a developer meets it (vitest.e2e.config.ts lists this file as a globalSetup):
 *
 *   1. `node scripts/dev.mjs --setup-only` twice in a row, each followed by a count of the demo data
 *      through `wrangler d1 execute` (test/e2e/dev-server.test.ts asserts what they answered);
 *   2. `node scripts/dev.mjs --port N --persist-to DIR` (which sets up a third time, then serves) until
 *      `GET /healthz` answers 200.
 *
 * It runs in the background while the files that need no dev server run (the config's sequencer runs
 * those first); a file that needs it calls `sharedDevServer()`, which waits for the steps above. Every
 * step, its exit and its output are written to a state file and a log, so that a failure is reported
 * by the test that needs the server, with the output, rather than aborting the run.
 *
 * The files that share it do not interfere: each registers its own integrations, and each picks a
 * lesson the demo learner has not finished and completes it.
 * (scripts/dev.mjs still writes .dev.vars in the repository root when it is missing, as always.)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const DEV_SCRIPT = join(ROOT, "scripts", "dev.mjs");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

// Hang guards, generous: the first setup seeds weeks of activity while other files run beside it.
const SETUP_TIMEOUT_MS = 300_000;
const STARTUP_TIMEOUT_MS = 120_000;

/** What the demo data holds after a setup run (test/e2e/dev-server.test.ts checks these numbers). */
export const COUNT_DEMO_DATA_SQL =
  "SELECT (SELECT COUNT(*) FROM users) AS users, (SELECT COUNT(*) FROM institutions) AS institutions, (SELECT COUNT(*) FROM courses) AS courses, (SELECT COUNT(*) FROM training_items) AS items, (SELECT COUNT(*) FROM attempts) AS attempts, (SELECT COUNT(*) FROM outbox_events) AS events, (SELECT xp_total FROM learner_stats WHERE user_id = 'usr_demo_acme_learner') AS demo_learner_xp";

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface SetupRun {
  attempt: "first" | "second";
  /** `node scripts/dev.mjs --setup-only --persist-to DIR`. */
  setup: RunResult;
  /** `wrangler d1 execute DB --local --json --command COUNT_DEMO_DATA_SQL`, absent when the setup failed. */
  count?: RunResult;
}

export interface SharedDevServerState {
  /** `setting-up` → `starting` → `ready`, or `failed` at the first step that went wrong. */
  phase: "setting-up" | "starting" | "ready" | "failed";
  url: string;
  persistTo: string;
  setupRuns: SetupRun[];
  /** The body of the first 200 from GET /healthz. */
  healthz?: string;
  /** Why the sequence stopped, when it did. */
  error?: string;
}

export interface SharedDevServer {
  url: string;
  state: SharedDevServerState;
  /** Everything the setup runs and the server printed so far (for failure messages). */
  output(): string;
}

declare module "vitest" {
  export interface ProvidedContext {
    sharedDevServer: { url: string; stateFile: string; logFile: string };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** As in CI: non-interactive (CI=true), no telemetry, no colours where the tools honour NO_COLOR. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: "true",
    NO_COLOR: "1",
    WRANGLER_SEND_METRICS: "false",
  };
  delete env.FORCE_COLOR;
  return env;
}

/** A loopback port free at the time of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port > 0 ? resolvePromise(port) : reject(new Error("no port from the OS"))));
    });
  });
}

/** The setup commands running now, for the teardown to end when the run stops before they do. */
const running = new Set<ChildProcess>();

/** Runs `node <args>` in the repository root and collects its output; on timeout kills it and its children. */
function runNode(args: string[], timeoutMs = SETUP_TIMEOUT_MS): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: childEnv(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${timeoutMs / 1000} s]\n`;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolvePromise({
        code: null,
        signal: null,
        stdout,
        stderr: `${stderr}\n[could not start: ${error.message}]`,
      });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

/** The vitest globalSetup: starts the sequence in the background and provides where to find it. */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), "lingua-e2e-shared-"));
  const persistTo = join(dir, "persist");
  const stateFile = join(dir, "state.json");
  const logFile = join(dir, "output.log");
  const url = `http://127.0.0.1:${await freePort()}`;
  const state: SharedDevServerState = { phase: "setting-up", url, persistTo, setupRuns: [] };
  const save = () => {
    writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
    renameSync(`${stateFile}.tmp`, stateFile);
  };
  const log = (label: string, text: string) => appendFileSync(logFile, `\n----- ${label} -----\n${text}`);
  save();
  writeFileSync(logFile, "");
  project.provide("sharedDevServer", { url, stateFile, logFile });

  let server: ChildProcess | undefined;
  let serverExited = false;
  const killGroupSync = () => {
    try {
      if (server?.pid) process.kill(-server.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  process.once("exit", killGroupSync);
  let stopping = false;

  const sequence = (async () => {
    for (const attempt of ["first", "second"] as const) {
      const setupRun = await runNode([DEV_SCRIPT, "--setup-only", "--persist-to", persistTo]);
      log(
        `node scripts/dev.mjs --setup-only (${attempt} run, exit ${setupRun.code}, signal ${setupRun.signal})`,
        setupRun.stdout + setupRun.stderr,
      );
      const run: SetupRun = { attempt, setup: setupRun };
      state.setupRuns.push(run);
      if (setupRun.code !== 0) throw new Error(`the ${attempt} setup run failed`);
      const count = await runNode([
        WRANGLER,
        "d1",
        "execute",
        "DB",
        "--local",
        "--persist-to",
        persistTo,
        "--command",
        COUNT_DEMO_DATA_SQL,
        "--json",
      ]);
      log(`wrangler d1 execute (count of the demo data, exit ${count.code})`, count.stdout + count.stderr);
      run.count = count;
      save();
      if (count.code !== 0) throw new Error(`counting the demo data after the ${attempt} setup run failed`);
    }

    state.phase = "starting";
    save();
    // Own process group (detached), so the teardown stops node, wrangler and workerd together.
    const port = new URL(url).port;
    const child = spawn(process.execPath, [DEV_SCRIPT, "--port", port, "--persist-to", persistTo], {
      cwd: ROOT,
      env: childEnv(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    server = child;
    log("node scripts/dev.mjs (server)", "");
    const append = (chunk: string) => appendFileSync(logFile, chunk);
    child.stdout!.setEncoding("utf8").on("data", append);
    child.stderr!.setEncoding("utf8").on("data", append);
    child.on("exit", (code, signal) => {
      serverExited = true;
      append(`\n[node scripts/dev.mjs exited: code ${code}, signal ${signal}]\n`);
    });
    child.on("error", (error) => append(`\n[could not start node scripts/dev.mjs: ${error.message}]\n`));

    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    let last = "no answer yet";
    for (;;) {
      if (serverExited || stopping)
        throw new Error(`node scripts/dev.mjs exited before the server answered /healthz (last: ${last})`);
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
        const text = await res.text();
        if (res.status === 200) {
          state.healthz = text;
          break;
        }
        last = `${res.status} ${text.slice(0, 200)}`;
      } catch (error) {
        last =
          error instanceof Error
            ? `${error.name}: ${(error.cause as Error | undefined)?.message ?? error.message}`
            : String(error);
      }
      if (Date.now() > deadline)
        throw new Error(
          `GET ${url}/healthz did not answer 200 within ${STARTUP_TIMEOUT_MS / 1000} s (last: ${last})`,
        );
      await sleep(250);
    }
    state.phase = "ready";
    save();
  })().catch((error: unknown) => {
    state.phase = "failed";
    state.error = error instanceof Error ? error.message : String(error);
    save();
  });

  return async () => {
    stopping = true;
    for (const child of running) {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    const child = server;
    if (child?.pid) {
      const gone = serverExited ? Promise.resolve() : new Promise<void>((r) => child.once("exit", () => r()));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
      await Promise.race([gone, sleep(10_000)]);
      killGroupSync();
    }
    await sequence;
    killGroupSync();
    process.removeListener("exit", killGroupSync);
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
}

/**
 * In a test file: waits until the shared dev server has been set up and answers (or its sequence
 * failed) and returns what happened. `ready()` throws, with the output, unless it answers.
 */
export async function sharedDevServer({ timeoutMs = 600_000 } = {}): Promise<SharedDevServer> {
  const { url, stateFile, logFile } = inject("sharedDevServer");
  const output = () => readFileSync(logFile, "utf8");
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = JSON.parse(readFileSync(stateFile, "utf8")) as SharedDevServerState;
    if (state.phase === "ready" || state.phase === "failed") return { url, state, output };
    if (Date.now() > deadline)
      return {
        url,
        state: { ...state, error: `still ${state.phase} after ${timeoutMs / 1000} s` },
        output,
      };
    await sleep(250);
  }
}

/**
 * Resolves once the shared dev server's steps are over (whether it answers or not), at once when this
 * run has none. scripts/dev.mjs writes its seed files under the repository's .wrangler/, so a second
 * `npm run dev` (test/e2e/helpers/dev-server.ts) must not set up while the shared one does.
 */
export async function sharedDevServerSettled(): Promise<void> {
  if (!inject("sharedDevServer")) return;
  await sharedDevServer();
}

/** The shared dev server, answering; throws with its state and output otherwise. */
export async function readySharedDevServer(): Promise<SharedDevServer> {
  const server = await sharedDevServer();
  if (server.state.phase !== "ready")
    throw new Error(
      `the shared dev server is not ready (${server.state.phase}: ${server.state.error}):\n${server.output().slice(-20_000)}`,
    );
  return server;
}

/** For vitest.e2e.config.ts's sequencer: the files that call `sharedDevServer()` run last. */
export const USES_SHARED_DEV_SERVER = [
  "test/e2e/dev-server.test.ts",
  "test/e2e/xapi.test.ts",
  "test/e2e/billing.test.ts",
  "test/e2e/dashboard.test.ts",
  "test/e2e/dashboard-members.test.ts",
  "test/e2e/dashboard-analytics.test.ts",
];
