import { createExecutionContext, env } from "cloudflare:test";
import type { RouteConfig, z } from "@hono/zod-openapi";
import worker from "../../src/index";

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
  return worker.fetch(
    request,
    options.env ? { ...env, ...options.env } : env,
    options.ctx ?? createExecutionContext(),
  );
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
