import { createExecutionContext, env } from "cloudflare:test";
import type { RouteConfig, z } from "@hono/zod-openapi";
import { inject } from "vitest";
import worker from "../../src/index";
import { conformingFetch, OpenApiConformance } from "./openapi-conformance";

export const BASE = "https://api.lingua.test";

export interface CallOptions {
  method?: string;
  token?: string;
  body?: unknown;
  /** Sent as-is, without JSON encoding or a content type. */
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  /** Bindings to override for this request (e.g. a production-like variable). */
  env?: Partial<Cloudflare.Env>;
  /** The request's execution context, to await its `waitUntil` work (`waitOnExecutionContext`). */
  ctx?: ExecutionContext;
}

/** One HTTP request to the worker, as an integrator would make it. */
export async function call(path: string, options: CallOptions = {}): Promise<Response> {
  const headers = new Headers(options.headers);
  if (options.token) headers.set("Authorization", `Bearer ${options.token}`);
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  }
  const request = new Request(new URL(path, BASE), {
    method: options.method ?? (body ? "POST" : "GET"),
    headers,
    body,
  });
  // The worker's own fetch handler with the real bindings (D1, Durable Objects) of this test file.
  // Not SELF.fetch: under vitest-pool-workers 0.15 every SELF request costs more than the one before
  // (workers-sdk#15446), which turns a 1,000-request rate-limit test into minutes.
  return fetchWorker(request, options.env ? { ...env, ...options.env } : env, options.ctx);
}

/** A handler with the worker's `fetch` (the worker itself, or a bench wrapper around it). */
export interface FetchHandler {
  fetch(request: Request, env: Cloudflare.Env, ctx: ExecutionContext): Promise<Response> | Response;
}

/**
 * The one way a test reaches the worker: its fetch handler (or `via`, a wrapper around it), the
 * exchange held to the served OpenAPI document (test/helpers/openapi-conformance.ts), so a response
 * the document does not describe fails the test that saw it.
 */
export function fetchWorker(
  request: Request,
  bindings: Cloudflare.Env = env,
  ctx: ExecutionContext = createExecutionContext(),
  via: FetchHandler = worker,
): Promise<Response> {
  return conformingFetch(request, async (r) => via.fetch(r, bindings, ctx), servedDocument);
}

let served: Promise<OpenApiConformance> | undefined;

/**
 * The document the worker serves: read from the run's loopback store (document-cache-server.ts)
 * when another file already built it, else fetched from the worker and stored there. Once per file
 * (each file has its own modules); without the store (a run that does not start it) always fetched.
 */
export function servedDocument(): Promise<OpenApiConformance> {
  served ??= (async () => {
    const cacheUrl = documentCacheUrl();
    const cached = cacheUrl ? await fetch(cacheUrl).catch(() => null) : null;
    if (cached?.status === 200) return new OpenApiConformance(await cached.json());
    await cached?.body?.cancel();
    const res = await worker.fetch(
      // An address of its own: the document shares the public catalogue's per-IP limit.
      new Request(new URL("/api/openapi.json", BASE), {
        headers: { "CF-Connecting-IP": `192.0.2.${Math.floor(Math.random() * 250) + 1}` },
      }),
      env,
      createExecutionContext(),
    );
    if (res.status !== 200) throw new Error(`GET /api/openapi.json answered ${res.status}`);
    const text = await res.text();
    if (cacheUrl) await fetch(cacheUrl, { method: "PUT", body: text }).then((r) => r.body?.cancel());
    return new OpenApiConformance(JSON.parse(text));
  })();
  served.catch(() => {
    served = undefined;
  });
  return served;
}

function documentCacheUrl(): string | undefined {
  try {
    return inject("documentCacheUrl");
  } catch {
    return undefined;
  }
}

/**
 * The JSON body an exported route (`tokenRoute`/`publicRoute`) answers with `status`, from its zod
 * schema: `callJson<ResponseBody<typeof getExportRoute, 200>>(…)` breaks at compile time when the
 * schema changes under a test. A status without a JSON body is `unknown`.
 */
export type ResponseBody<R extends RouteConfig, S extends keyof R["responses"]> = R["responses"][S] extends {
  content: { "application/json": { schema: infer Schema } };
}
  ? Schema extends z.ZodType
    ? z.output<Schema>
    : unknown
  : unknown;

/** The JSON body an exported route accepts (its input type: fields with defaults may be left out). */
export type RequestBody<R extends RouteConfig> = R["request"] extends {
  body?: { content: { "application/json": { schema: infer Schema } } };
}
  ? Schema extends z.ZodType
    ? z.input<Schema>
    : unknown
  : unknown;

/**
 * The request and the parsed JSON body together; fails loudly on a non-JSON body. `T` is the body's
 * type, `any` unless the caller names one (`ResponseBody<typeof route, status>`).
 */
export async function callJson<T = any>(
  path: string,
  options: CallOptions = {},
): Promise<{ res: Response; body: T }> {
  const res = await call(path, options);
  const text = await res.text();
  let body: T;
  try {
    body = (text ? JSON.parse(text) : undefined) as T;
  } catch {
    throw new Error(`${res.status} ${path}: not JSON: ${text.slice(0, 200)}`);
  }
  return { res, body };
}
