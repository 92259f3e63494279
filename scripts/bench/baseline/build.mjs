// The baseline worker of BENCH_ONLY=baseline, built from its own source (../baseline.mjs says how).
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { BENCH_OUT, bundleWithWrangler, ensureDir, ROOT, readWranglerConfig } from "../lib.mjs";

export const BASELINE_REV = process.env.BENCH_BASELINE_COMMIT || "722e280^";

export function git(args, cwd = ROOT) {
  const result = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/**
 * The baseline commit's bundle, built from its own source in a temporary worktree; answers
 * { commit, subject, scriptPath, size, config } with the config's migrations copied out of the
 * worktree (which is removed before this returns).
 */
export async function buildBaseline(log) {
  const commit = git(["rev-parse", "--verify", `${BASELINE_REV}^{commit}`]);
  const subject = git(["log", "-1", "--format=%s", commit]);
  const dir = mkdtempSync(join(os.tmpdir(), "lingua-baseline-"));
  const out = ensureDir(join(BENCH_OUT, "dist", "baseline"));
  log(`bench: baseline ${commit.slice(0, 7)} (${subject.slice(0, 60)}…): worktree in ${dir}, bundling…`);
  git(["worktree", "add", "--detach", dir, commit]);
  try {
    symlinkSync(realpathSync(join(ROOT, "node_modules")), join(dir, "node_modules"), "dir");
    const bundle = bundleWithWrangler(join(out, "lingua"), { cwd: dir });
    const config = await readWranglerConfig(join(dir, "wrangler.toml"));
    // Its migrations, as that commit had them, kept beside the bundle.
    const migrationDirs = {};
    for (const [binding, from] of Object.entries(config.migrationDirs)) {
      const to = join(out, `migrations-${binding}`);
      rmSync(to, { recursive: true, force: true });
      cpSync(from, to, { recursive: true });
      migrationDirs[binding] = to;
    }
    return { commit, subject, ...bundle, config: { ...config, migrationDirs } };
  } finally {
    rmSync(join(dir, "node_modules"), { force: true });
    const removed = spawnSync("git", ["worktree", "remove", "--force", dir], { cwd: ROOT, encoding: "utf8" });
    if (removed.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      spawnSync("git", ["worktree", "prune"], { cwd: ROOT });
    }
  }
}
