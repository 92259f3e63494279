/**
 * `npm run dev` (scripts/dev.mjs: migrations, demo data, then `wrangler dev`) in a temporary
 * --persist-to directory on a free loopback port, for an end-to-end test to talk to over real HTTP,
 * as test/e2e/dev-server.test.ts does step by step. Its own process group, so `stop()` ends node,
 * wrangler and workerd together; the directory is removed afterwards. (scripts/dev.mjs still writes
 * .dev.vars in the repository root when it is missing, as `npm run dev` always does.)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, sharedDevServerSettled } from "./shared-dev-server";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const DEV_SCRIPT = join(ROOT, "scripts", "dev.mjs");

export interface DevServer {
  url: string;
  /** Everything the setup and the server printed so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sets up and starts the dev server; resolves once `GET /healthz` answers 200 (or throws with its output).
 * A file that can share the run's one dev server uses `readySharedDevServer()` (./shared-dev-server.ts)
 * instead; this one waits until that server's set-up is over before setting up its own.
 */
export async function startDevServer({ timeoutMs = 360_000 } = {}): Promise<DevServer> {
  await sharedDevServerSettled();
  const persistTo = await mkdtemp(join(tmpdir(), "lingua-e2e-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: "true",
    NO_COLOR: "1",
    WRANGLER_SEND_METRICS: "false",
  };
  delete env.FORCE_COLOR;
  const child: ChildProcess = spawn(
    process.execPath,
    [DEV_SCRIPT, "--port", String(port), "--persist-to", persistTo],
    { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  let exited = false;
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.on("exit", (code, signal) => {
    exited = true;
    output += `\n[node scripts/dev.mjs exited: code ${code}, signal ${signal}]\n`;
  });
  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  process.once("exit", killGroup);

  const stop = async () => {
    if (child.pid && !exited) {
      const gone = new Promise<void>((r) => child.once("exit", () => r()));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
      await Promise.race([gone, sleep(10_000)]);
      killGroup();
    }
    process.removeListener("exit", killGroup);
    await rm(persistTo, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };

  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(
        `scripts/dev.mjs exited before /healthz answered (last: ${last}):\n${output.slice(-20_000)}`,
      );
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      if (res.status === 200) break;
      last = `${res.status} ${(await res.text()).slice(0, 200)}`;
    } catch (error) {
      last = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `GET ${url}/healthz did not answer 200 within ${timeoutMs / 1000} s (last: ${last}):\n${output.slice(-20_000)}`,
      );
    }
    await sleep(500);
  }
  return { url, output: () => output, stop };
}
