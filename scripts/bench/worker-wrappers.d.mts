// Types for worker-wrappers.mjs, which Workers-runtime tests import (test/platform/d1-meter.test.ts,
// test/catalog/edge-cache.test.ts).

interface Worker<E> {
  fetch(request: Request, env: E, ctx: ExecutionContext): Response | Promise<Response>;
}

export declare function withD1Meter<E, W extends Worker<E>>(worker: W): W;
export declare function withEveryPageAMiss<E, W extends Worker<E>>(worker: W): W;
export declare function meteredD1(d1: D1Database): D1Database;
export declare const WRAPPERS: Record<"meter" | "miss", string>;
export declare function benchEntrySource(
  wrapper: "meter" | "miss",
  bundle?: string,
  wrappers?: string,
): string;
