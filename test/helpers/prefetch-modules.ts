/**
 * The first set-up file (vitest.config.ts): fetches the worker's modules and the test file's imports
 * from Vite side by side, before anything imports them (docs/design/testing.md, "The modules fetched
 * side by side").
 *
 * Vitest's module runner fetches a module when an import first asks for it, one round trip to the
 * vitest process each, and a module awaits its imports one after another: the worker's entry, queue
 * consumers and sweeps were some 290 round trips in a row in every file. Here the same requests go
 * out many at a time, following each fetched module's static imports, and each answer is recorded
 * where the runner keeps it (`evaluatedModules`), as the runner's own fetch records it; the runner
 * then answers those imports without asking again. Nothing is evaluated here: what runs, in which
 * order, and the one instance of each module that `SELF` and a test's own imports share stay the
 * runner's. Only static imports are followed: a route group's modules (imported on a test's first
 * request to it) are still fetched when asked for, since fetching every group in every file cost
 * more than it saved (measured). Should Vitest's internals change shape, this fetches nothing and
 * the runner fetches as it always did.
 */

interface FetchResult {
  id?: string;
  url?: string;
  code?: string;
  externalize?: string;
}

/** What this relies on of Vitest's worker state (vitest/dist startVitestModuleRunner's transport). */
interface WorkerState {
  /** The test file this worker runs. */
  filepath?: string;
  rpc?: {
    fetch?: (
      url: string,
      importer: string | undefined,
      environment: string,
      options: object,
    ) => Promise<FetchResult>;
  };
  environment?: { name: string; viteEnvironment?: string };
  evaluatedModules?: {
    getModuleByUrl(url: string): { meta?: unknown } | undefined;
    ensureModule(id: string, url: string): { meta?: unknown };
  };
}

/** The worker's modules that every file loads: its entry (`main`), and what the next set-up file imports. */
const WORKER_ENTRIES = ["/src/index.ts", "/src/queue-consumers.ts", "/src/scheduled.ts"];

// What Vite's SSR transform writes for a static `import … from "…"` or `export … from "…"`: the
// resolved URL as a JSON string.
const STATIC_IMPORT = /__vite_ssr_import__\("((?:[^"\\]|\\.)*)"/g;

/** Requests in flight at once: enough to keep the vitest process busy, few next to a file's modules. */
const CONCURRENCY = 24;

export async function prefetchModules(entries: string[]): Promise<void> {
  const state = (globalThis as { __vitest_worker__?: WorkerState }).__vitest_worker__;
  const rpc = state?.rpc;
  const modules = state?.evaluatedModules;
  const environment = state?.environment?.viteEnvironment ?? state?.environment?.name;
  if (!rpc?.fetch || !modules || !environment) return;

  const seen = new Set<string>();
  const queue: [url: string, importer: string | undefined][] = [];
  const enqueue = (url: string, importer: string | undefined) => {
    // Only resolved URLs ("/src/…", "/@fs/…"): bare names and builtins are the runner's to resolve.
    if (!url.startsWith("/") || seen.has(url) || modules.getModuleByUrl(url)?.meta) return;
    seen.add(url);
    queue.push([url, importer]);
  };

  const fetchOne = async (url: string, importer: string | undefined) => {
    const result = await rpc.fetch!(url, importer, environment, { cached: false }).catch(() => undefined);
    // An answer kept in a temporary file ("cached") is the runner's to read.
    if (!result || "cached" in result) return;
    const id = result.externalize ?? result.id;
    if (!id) return;
    // As ModuleRunner.getModuleInformation records an answer, under the URL asked for as well.
    result.url ??= url;
    result.id = id;
    const node = modules.ensureModule(id, result.url);
    modules.ensureModule(id, url);
    node.meta = result;
    if (typeof result.code === "string")
      for (const [, imported] of result.code.matchAll(STATIC_IMPORT))
        enqueue(JSON.parse(`"${imported}"`), id);
  };

  for (const entry of entries) enqueue(entry, undefined);
  const inFlight = new Set<Promise<void>>();
  while (queue.length > 0 || inFlight.size > 0) {
    while (queue.length > 0 && inFlight.size < CONCURRENCY) {
      const [url, importer] = queue.shift()!;
      const request: Promise<void> = fetchOne(url, importer).finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
    await Promise.race(inFlight);
  }
}

// And the test file's own imports (its helpers, the modules it calls directly), imported next.
const testFile = (globalThis as { __vitest_worker__?: WorkerState }).__vitest_worker__?.filepath;
await prefetchModules(testFile ? [...WORKER_ENTRIES, testFile] : WORKER_ENTRIES);
