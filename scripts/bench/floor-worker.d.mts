// Types for floor-worker.mjs, which a Workers-runtime test imports (test/system/bench-floor.test.ts).

export declare const LINGUA_RESPONSE_HEADERS: readonly (readonly [string, string])[];

declare const floorWorker: {
  fetch(request: Request, env: unknown): Promise<Response>;
};
export default floorWorker;
