// BENCH_V8_FLAGS="--flag …": V8 flags for the workerd that Miniflare starts (its config's `v8Flags`,
// which this Miniflare does not expose; newer ones read MINIFLARE_WORKERD_V8_FLAGS). Imported first
// by run.mjs: it patches Miniflare's config serialisation as the module is loaded. A flag workerd's
// V8 does not know makes workerd abort at start-up.
//
// What it is for: `--single-threaded-gc`. On this 2-core machine V8 has one worker thread, and now
// and then workerd's only thread spins for good in V8's message loop: cppgc's "low priority"
// incremental sweep task re-posts itself at once while a concurrent sweep job waits for that worker
// thread, itself parked until the main thread collects garbage (perf profile of a stalled floor
// copy: PumpMessageLoop, IncrementalSweepTask::Post, clock_gettime). With a single-threaded GC no
// concurrent sweep job exists. It moves the GC's helper work onto the main thread, so it is off by
// default and a run reports it; exports.mjs also abandons a stalled session and measures again.
import { readFileSync } from "node:fs";
import Module from "node:module";

export const BENCH_V8_FLAGS = (process.env.BENCH_V8_FLAGS ?? "").split(/\s+/).filter(Boolean);

if (BENCH_V8_FLAGS.length > 0) {
  const load = Module._extensions[".js"];
  Module._extensions[".js"] = (module, filename) => {
    if (!/[\\/]miniflare[\\/]dist[\\/]src[\\/]index\.js$/.test(filename)) return load(module, filename);
    const source = readFileSync(filename, "utf8");
    const anchor = "function serializeConfig(config) {";
    if (!source.includes(anchor)) throw new Error(`BENCH_V8_FLAGS: ${filename} has no ${anchor}`);
    const flags = JSON.stringify(BENCH_V8_FLAGS);
    return module._compile(
      source.replace(
        anchor,
        `${anchor}\n  config = { ...config, v8Flags: [...(config.v8Flags ?? []), ...${flags}] };`,
      ),
      filename,
    );
  };
}
