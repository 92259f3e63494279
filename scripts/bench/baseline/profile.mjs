// BENCH_BASELINE_PROFILE: the diagnostic run of BENCH_ONLY=baseline (../baseline.mjs).
import { writeFileSync } from "node:fs";
import { requestJson } from "../lib.mjs";
import { startCpuProfiles, summary } from "../xapi-profile.mjs";
import { BASELINE_REV, git } from "./build.mjs";

export const PROFILE = process.env.BENCH_BASELINE_PROFILE || "";
export const PROFILE_PORTS = { baseline: 9341, current: 9342 };

/**
 * BENCH_BASELINE_PROFILE: each path at the highest concurrency on each worker (after a warm-up),
 * workerd's inspector sampling the worker's and D1's isolates; the top functions per request.
 */
export async function profilePaths({ paths, tenants, variants, settings, loadGenerator, baseline, log }) {
  const connections = Math.max(...settings.connections);
  const profiles = [];
  for (const path of paths)
    for (const variant of variants.filter((v) => v.id !== "current-db1")) {
      const tenant = tenants[variant.id];
      const request = {
        url: new URL(path.path(tenant), tenant.base).toString(),
        headers: tenant.auth,
        connections,
      };
      await loadGenerator.run({ ...request, duration: settings.warmupS || 1, warmup: 0 });
      // One request alone: its D1 round trips and statements in DB (the worker's, not its Durable Objects').
      // (After the load's last requests have finished: autocannon stops with some still in flight.)
      const counts = new URL("/__d1-statements", tenant.base);
      await new Promise((r) => setTimeout(r, 2000));
      await requestJson(counts);
      await requestJson(new URL(request.url), { headers: tenant.auth });
      const d1 = (await requestJson(counts)).body;
      log(`bench: baseline profile ${path.label} [${variant.label}]…`);
      const profiler = await startCpuProfiles(PROFILE_PORTS[variant.id], /lingua-api$|d1:db$/);
      const result = await loadGenerator.run({ ...request, duration: settings.durationS, warmup: 0 });
      const taken = await profiler.stop();
      for (const [title, profile] of Object.entries(taken)) {
        const file = `${PROFILE}.${variant.id}.${path.id}.${title.replace(/[^a-z0-9-]+/gi, "_")}.cpuprofile`;
        writeFileSync(file, JSON.stringify(profile));
        const top = summary(profile, 25);
        profiles.push({
          variant: variant.id,
          path: path.id,
          label: path.label,
          isolate: title,
          file,
          requests: result.requests,
          d1RoundTrips: d1.roundTrips,
          d1Statements: d1.statements.map((x) => `${x.statements}× ${x.sql}`),
          cpuMsPerRequest: top.totalMs / result.requests,
          self: top.self,
          inclusive: top.inclusive,
        });
      }
    }
  return {
    profileOnly: true,
    baseline: { commit: baseline.commit, subject: baseline.subject, rev: BASELINE_REV },
    current: { commit: git(["rev-parse", "HEAD"]), dirty: git(["status", "--porcelain"]) !== "" },
    profiles,
    failures: [],
  };
}
