import { dereference, type OutputUnit, type Schema, validate } from "@cfworker/json-schema";

/**
 * Every response the workerd suite receives, held to the served OpenAPI document: the operation
 * (method + path template), the status, the media type, and a JSON body against its schema; a JSON
 * request body against the operation's request schema. `call()` in ./api.ts runs each exchange
 * through `assertConforms`, so a route added later is covered without anyone remembering it
 * (docs/design/openapi-conformance.md).
 */

/**
 * What the worker serves outside the API document, on purpose. Everything else under `/api/` must
 * be an operation of the document (or the 404/405 problem that says it is not one). Paths outside
 * `/api/` are not the API's (`/healthz` is documented and checked like any operation).
 */
export const OUTSIDE_DOCUMENT: readonly { path: RegExp; why: string }[] = [
  // The reference page: HTML for people, reading the document itself.
  { path: /^\/api\/docs$/, why: "the API reference page (HTML)" },
  // Its script and styles: static assets served by the runtime before the worker (wrangler.toml [assets]).
  { path: /^\/api\/docs\/.+/, why: "the reference page's static assets" },
];
// Besides these paths, a CORS preflight (OPTIONS with Access-Control-Request-Method) is answered by
// the CORS layer of the operations it asks about, not by an operation: it is not checked either.

/** The JSON media types whose bodies are validated against their schema. */
const JSON_TYPES = new Set(["application/json", "application/problem+json"]);

/** The base URI the document's `#/components/schemas/…` references resolve against. */
const DOCUMENT_URI = new URL("https://openapi.lingua.test/openapi.json");

interface Operation {
  method: string;
  template: string;
  operation: any;
}

interface Template {
  template: string;
  pattern: RegExp;
  /** Path parameters in the template: a static segment wins over a parameter (`event-types` over `{id}`). */
  parameters: number;
  methods: Record<string, any>;
}

export interface Exchange {
  method: string;
  /** The request URL (only its path is used: the document's server is "/"). */
  url: string;
  /** The request's body as sent, when it had one. */
  requestBody?: { mediaType: string; text: string };
  status: number;
  /** The response's Content-Type without parameters, lower case; "" when there is none. */
  mediaType: string;
  /** The response body's text, when it was read (JSON media types). */
  body?: string;
  /** The response had no body at all (null stream). */
  empty: boolean;
  /** A CORS preflight: OPTIONS with `Access-Control-Request-Method`. */
  preflight?: boolean;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

export class OpenApiConformance {
  private readonly templates: Template[] = [];
  private readonly lookup: Record<string, Schema | boolean>;
  private readonly problem: Schema | undefined;

  constructor(document: any) {
    // The whole document dereferenced once: every schema in it, with its references resolved against
    // the document, is then a validator ready to run (the library keeps nothing else per schema).
    // Examples are data, not schemas (an example's `id` would read as a schema's `$id`): left out.
    document = withoutExamples(document, false);
    this.lookup = dereference(document, Object.create(null), DOCUMENT_URI);
    this.problem = document.components?.schemas?.Problem;
    for (const [template, item] of Object.entries<any>(document.paths ?? {})) {
      const names: string[] = [];
      const source = template
        .split("/")
        .map((segment) =>
          segment.replace(/\{([^}]+)\}|[^{}]+/g, (part, name?: string) => {
            if (name !== undefined) {
              names.push(name);
              return "([^/]+)";
            }
            return part.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
          }),
        )
        .join("/");
      const methods: Record<string, any> = {};
      for (const method of METHODS) if (item[method]) methods[method] = item[method];
      this.templates.push({
        template,
        pattern: new RegExp(`^${source}$`),
        parameters: names.length,
        methods,
      });
    }
    this.templates.sort((a, b) => a.parameters - b.parameters);
  }

  /** The operation a request reaches, or why there is none. */
  private find(method: string, path: string): Operation | "no-path" | "no-method" {
    let pathFound = false;
    for (const t of this.templates) {
      if (!t.pattern.test(path)) continue;
      pathFound = true;
      const operation = t.methods[method] ?? (method === "head" ? t.methods.get : undefined);
      if (operation) return { method, template: t.template, operation };
    }
    return pathFound ? "no-method" : "no-path";
  }

  /** Every way the exchange departs from the document; empty when it conforms. */
  check(exchange: Exchange): string[] {
    const method = exchange.method.toLowerCase();
    if (exchange.preflight) return [];
    const path = new URL(exchange.url, "https://x.invalid").pathname;
    const found = this.find(method, path);
    if (found === "no-path" || found === "no-method") {
      if (!path.startsWith("/api/") || OUTSIDE_DOCUMENT.some((o) => o.path.test(path))) return [];
      // The product's own answer that there is no such operation: a 404 (or 405 with `Allow` on a
      // path that has other methods) problem. Anything else is an undocumented operation.
      const refusal = found === "no-path" ? [404] : [404, 405];
      if (refusal.includes(exchange.status) && exchange.mediaType === "application/problem+json")
        return this.problem ? this.validateBody(exchange.body, this.problem, "response") : [];
      return [
        found === "no-path"
          ? `the path is not in the document (and not listed in OUTSIDE_DOCUMENT), answered ${exchange.status}`
          : `the method is not documented for this path, answered ${exchange.status}`,
      ];
    }
    const { operation } = found;
    const findings: string[] = [];

    const statusKey = String(exchange.status);
    const responses = operation.responses ?? {};
    const response = responses[statusKey] ?? responses[`${statusKey[0]}XX`] ?? responses.default;
    if (!response) {
      findings.push(
        `status ${exchange.status} is not declared for ${operation.operationId} (declared: ${Object.keys(responses).join(", ")})`,
      );
    } else {
      // A declared media type may carry parameters (`text/csv; charset=utf-8`): compared without them.
      const content: Record<string, any> | undefined = response.content
        ? Object.fromEntries(
            Object.entries<any>(response.content).map(([type, media]) => [baseType(type), media]),
          )
        : undefined;
      const bodiless =
        exchange.empty || method === "head" || exchange.status === 204 || exchange.status === 304;
      if (!content || Object.keys(content).length === 0) {
        if (!bodiless && exchange.mediaType)
          findings.push(`a ${exchange.mediaType} body where status ${exchange.status} declares none`);
      } else if (!exchange.mediaType) {
        if (!bodiless)
          findings.push(`a body without Content-Type where ${Object.keys(content).join(", ")} is declared`);
      } else if (!content[exchange.mediaType]) {
        findings.push(
          `media type ${exchange.mediaType} is not declared for status ${exchange.status} (declared: ${Object.keys(content).join(", ")})`,
        );
      } else if (JSON_TYPES.has(exchange.mediaType) && !bodiless) {
        const schema = content[exchange.mediaType].schema;
        if (schema) findings.push(...this.validateBody(exchange.body, schema, "response"));
      }
    }

    // The request body: a body that does not fit the document is a deliberate bad request when the
    // product refused it (4xx); accepted (2xx), it shows the document is stricter than the code.
    const sent = exchange.requestBody;
    if (sent && JSON_TYPES.has(sent.mediaType) && exchange.status >= 200 && exchange.status < 300) {
      const schema = operation.requestBody?.content?.[sent.mediaType]?.schema;
      if (!schema)
        findings.push(`a ${sent.mediaType} request body was accepted where the document declares none`);
      else
        findings.push(
          ...this.validateBody(sent.text, schema, "request").map(
            (f) => `${f} (the product accepted it: the document is stricter than the code)`,
          ),
        );
    }
    return findings;
  }

  private validateBody(text: string | undefined, schema: Schema, which: "request" | "response"): string[] {
    let value: unknown;
    try {
      value = JSON.parse(text ?? "");
    } catch {
      return [`the ${which} body is not JSON: ${(text ?? "").slice(0, 120)}`];
    }
    // First the quick answer; the full list of errors only for a body that fails.
    if (validate(value, schema, "2020-12", this.lookup, true).valid) return [];
    const { errors } = validate(value, schema, "2020-12", this.lookup, false);
    return [`the ${which} body does not match its schema: ${describe(errors)}`];
  }
}

/** Keywords whose value maps names to schemas: a key there named `example` is a property, not an example. */
const MAP_KEYWORDS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

function withoutExamples(value: any, inMap: boolean): any {
  if (Array.isArray(value)) return value.map((v) => withoutExamples(v, false));
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (!inMap && (key === "example" || key === "examples")) continue;
    out[key] = withoutExamples(child, !inMap && MAP_KEYWORDS.has(key));
  }
  return out;
}

/** The first few errors that say something (the wrappers "a property did not match" add nothing). */
function describe(errors: OutputUnit[]): string {
  const wrappers = new Set(["properties", "items", "prefixItems", "allOf", "$ref", "additionalProperties"]);
  const telling = errors.filter((e) => !wrappers.has(e.keyword));
  return (telling.length > 0 ? telling : errors)
    .slice(0, 5)
    .map((e) => `${e.instanceLocation}: ${e.error}`)
    .join("; ");
}

function baseType(contentType: string): string {
  return contentType.split(";")[0]!.trim().toLowerCase();
}

export function mediaTypeOf(headers: Headers): string {
  return baseType(headers.get("Content-Type") ?? "");
}

/** Fails the test that saw it: method, path, status, media type and the findings. */
export function conformanceError(exchange: Exchange, findings: string[]): Error {
  const path = new URL(exchange.url, "https://x.invalid").pathname;
  return new Error(
    `The response does not conform to the OpenAPI document: ${exchange.method.toUpperCase()} ${path} → ${exchange.status} ${exchange.mediaType || "(no media type)"}\n  - ${findings.join("\n  - ")}`,
  );
}

/**
 * Runs a request through `send` and holds the exchange to the document that `loadDocument` fetches
 * (once per test file). The request's body is read (from a clone) before sending, the response's
 * JSON body from a clone, so the caller gets both untouched.
 */
export async function conformingFetch(
  request: Request,
  send: (request: Request) => Promise<Response>,
  conformance: () => Promise<OpenApiConformance>,
): Promise<Response> {
  const method = request.method;
  const url = request.url;
  const requestType = mediaTypeOf(request.headers);
  const requestBody =
    request.body && JSON_TYPES.has(requestType)
      ? { mediaType: requestType, text: await request.clone().text() }
      : undefined;
  const response = await send(request);
  const mediaType = mediaTypeOf(response.headers);
  const body =
    JSON_TYPES.has(mediaType) && response.body && method !== "HEAD"
      ? await response.clone().text()
      : undefined;
  const exchange: Exchange = {
    method,
    url,
    requestBody,
    status: response.status,
    mediaType,
    body,
    empty: response.body === null,
    preflight: method === "OPTIONS" && request.headers.has("Access-Control-Request-Method"),
  };
  const findings = (await conformance()).check(exchange);
  if (findings.length > 0) throw conformanceError(exchange, findings);
  return response;
}
