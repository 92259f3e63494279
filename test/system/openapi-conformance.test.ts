import { describe, expect, it } from "vitest";
import { call, callJson, servedDocument } from "../helpers/api";
import { conformingFetch, type Exchange, OpenApiConformance } from "../helpers/openapi-conformance";
import { freshIp } from "../helpers/tenants";

// A small document of the served document's shape: a component referenced from a response.
const document = {
  openapi: "3.1.0",
  paths: {
    "/api/things/{id}": {
      get: {
        operationId: "getThing",
        responses: {
          200: {
            description: "The thing.",
            content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } },
          },
          404: {
            description: "Not found.",
            content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
          },
        },
      },
      patch: {
        operationId: "updateThing",
        requestBody: {
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: { name: { type: "string", maxLength: 5 } },
                additionalProperties: false,
              },
            },
          },
        },
        responses: {
          200: {
            description: "Updated.",
            content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } },
          },
          204: { description: "Nothing to change." },
          422: {
            description: "Invalid.",
            content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
          },
        },
      },
    },
    // A static segment beside the parameter: the more specific template wins.
    "/api/things/mine": {
      get: {
        operationId: "listMine",
        responses: {
          200: { description: "A CSV.", content: { "text/csv": { schema: { type: "string" } } } },
        },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: "object",
        properties: { id: { type: "string" }, name: { type: "string" } },
        required: ["id", "name"],
        additionalProperties: false,
        // An example whose `id` is data, not a schema identifier.
        example: { id: "thing_1", name: "One" },
      },
      Problem: {
        type: "object",
        properties: { code: { type: "string" }, status: { type: "integer" } },
        required: ["code", "status"],
      },
    },
  },
};

const conformance = new OpenApiConformance(document);

function exchange(overrides: Partial<Exchange>): Exchange {
  return {
    method: "GET",
    url: "https://api.lingua.test/api/things/t1",
    status: 200,
    mediaType: "application/json",
    body: JSON.stringify({ id: "t1", name: "One" }),
    empty: false,
    ...overrides,
  };
}

describe("the OpenAPI conformance check", () => {
  it("passes a response the document describes, parameters matched and references resolved", () => {
    expect(conformance.check(exchange({}))).toEqual([]);
    const missing = { code: "not_found", status: 404 };
    expect(
      conformance.check(
        exchange({ status: 404, mediaType: "application/problem+json", body: JSON.stringify(missing) }),
      ),
    ).toEqual([]);
    expect(
      conformance.check(
        exchange({ url: "/api/things/mine", mediaType: "text/csv", body: undefined, status: 200 }),
      ),
    ).toEqual([]);
    expect(
      conformance.check(
        exchange({ method: "PATCH", status: 204, mediaType: "", body: undefined, empty: true }),
      ),
    ).toEqual([]);
  });

  it("reports a status the operation does not declare", () => {
    expect(conformance.check(exchange({ status: 409 }))).toEqual([
      expect.stringContaining("status 409 is not declared for getThing"),
    ]);
  });

  it("reports a media type the status does not declare", () => {
    expect(conformance.check(exchange({ mediaType: "text/html", body: undefined }))).toEqual([
      expect.stringContaining("media type text/html is not declared for status 200"),
    ]);
    // The more specific template's operation is the one held to it.
    expect(conformance.check(exchange({ url: "/api/things/mine" }))).toEqual([
      expect.stringContaining("media type application/json is not declared"),
    ]);
  });

  it("reports a JSON body that does not match its schema, naming the failing place", () => {
    const findings = conformance.check(
      exchange({ body: JSON.stringify({ id: "t1", name: 7, extra: true }) }),
    );
    expect(findings).toHaveLength(1);
    expect(findings[0]).toContain("the response body does not match its schema");
    expect(findings[0]).toContain("#/name");
    expect(conformance.check(exchange({ body: "{not json" }))).toEqual([expect.stringContaining("not JSON")]);
  });

  it("reports an /api path that is not in the document, but not the 404 problem that refuses it", () => {
    const unknown = exchange({ url: "/api/nothing-here" });
    expect(conformance.check(unknown)).toEqual([expect.stringContaining("not in the document")]);
    // The product's own refusal of an unknown path or method is the documented 404/405 problem.
    const refusal = {
      mediaType: "application/problem+json",
      body: JSON.stringify({ code: "not_found", status: 404 }),
    };
    expect(conformance.check(exchange({ url: "/api/nothing-here", status: 404, ...refusal }))).toEqual([]);
    expect(conformance.check(exchange({ method: "DELETE", status: 405, ...refusal }))).toEqual([]);
    expect(conformance.check(exchange({ method: "DELETE", status: 200 }))).toEqual([
      expect.stringContaining("method is not documented"),
    ]);
    // A refusal must still be a problem.
    expect(
      conformance.check(
        exchange({ url: "/api/nothing-here", status: 404, mediaType: "text/plain", body: "no" }),
      ),
    ).toEqual([expect.stringContaining("not in the document")]);
    // What the worker serves outside the document on purpose, and paths outside /api/.
    expect(
      conformance.check(exchange({ method: "OPTIONS", status: 204, mediaType: "", preflight: true })),
    ).toEqual([]);
    expect(conformance.check(exchange({ method: "OPTIONS", status: 204, mediaType: "" }))).toEqual([
      expect.stringContaining("method is not documented"),
    ]);
    expect(conformance.check(exchange({ url: "/api/docs", mediaType: "text/html" }))).toEqual([]);
    expect(
      conformance.check(exchange({ url: "/favicon.ico", status: 404, mediaType: "text/plain" })),
    ).toEqual([]);
  });

  it("lets a request body that breaks the schema through when it was refused, and reports it when it was accepted", () => {
    const wrong = { mediaType: "application/json", text: JSON.stringify({ name: "far too long" }) };
    const refused = exchange({
      method: "PATCH",
      requestBody: wrong,
      status: 422,
      mediaType: "application/problem+json",
      body: JSON.stringify({ code: "validation_failed", status: 422 }),
    });
    expect(conformance.check(refused)).toEqual([]);
    expect(conformance.check(exchange({ method: "PATCH", requestBody: wrong }))).toEqual([
      expect.stringMatching(/request body does not match.*stricter than the code/),
    ]);
    const right = { mediaType: "application/json", text: JSON.stringify({ name: "ok" }) };
    expect(conformance.check(exchange({ method: "PATCH", requestBody: right }))).toEqual([]);
    // A JSON body accepted by an operation that declares none.
    expect(conformance.check(exchange({ requestBody: right }))).toEqual([
      expect.stringContaining("declares none"),
    ]);
  });

  it("fails the exchange with method, path, status, media type and the findings", async () => {
    const send = async () =>
      new Response(JSON.stringify({ id: 1 }), {
        status: 201,
        headers: { "Content-Type": "application/json" },
      });
    const request = new Request("https://api.lingua.test/api/things/t1");
    await expect(conformingFetch(request, send, async () => conformance)).rejects.toThrow(
      /GET \/api\/things\/t1 → 201 application\/json\n {2}- status 201 is not declared for getThing/,
    );
    // A conforming exchange hands the response back unread.
    const ok = await conformingFetch(
      new Request("https://api.lingua.test/api/things/t1"),
      async () => Response.json({ id: "t1", name: "One" }),
      async () => conformance,
    );
    expect(await ok.json()).toEqual({ id: "t1", name: "One" });
  });

  it("holds call() to the document the worker serves", async () => {
    // The served document is read: every operation's path matches its own template.
    const served = await servedDocument();
    expect(served).toBeInstanceOf(OpenApiConformance);
    const res = await call("/healthz");
    expect(res.status).toBe(200);
    // The worker's answer to an unknown path is its 404 problem, which conforms.
    const unknown = await callJson("/api/nothing-here", { headers: { "CF-Connecting-IP": freshIp() } });
    expect(unknown.res.status).toBe(404);
  });
});

describe("the document's tags", () => {
  it("declares every tag an operation uses, and no tag that none uses, System last", async () => {
    const { body: doc } = await callJson("/api/openapi.json", { headers: { "CF-Connecting-IP": freshIp() } });
    const declared: string[] = doc.tags.map((t: { name: string }) => t.name);
    const used = new Set<string>(
      Object.values<any>(doc.paths).flatMap((item) =>
        Object.values<any>(item).flatMap((op) => op.tags ?? []),
      ),
    );
    // A used tag left undeclared is listed after the declared ones by the reference page, out of place.
    expect([...used].filter((tag) => !declared.includes(tag))).toEqual([]);
    expect(declared.filter((tag) => !used.has(tag))).toEqual([]);
    expect(new Set(declared).size).toBe(declared.length);
    expect(declared.at(-1)).toBe("System");
    for (const tag of doc.tags) expect(tag.description, tag.name).toMatch(/\S/);
  });
});

describe("the conformance check's reach", () => {
  it("is on every way a test reaches the worker: no test calls the worker's fetch past fetchWorker", () => {
    const sources = import.meta.glob<string>(["/test/**/*.ts", "!/test/e2e/**"], {
      query: "?raw",
      import: "default",
      eager: true,
    });
    // Requests that cannot be described to the check, each named with its reason.
    const exempt: Record<string, string> = {
      // A Request proxy whose `method` throws on purpose: the check could not read it either.
      "/test/platform/http-hygiene.test.ts": "worker.fetch(failing",
    };
    const offenders: string[] = [];
    for (const [file, source] of Object.entries(sources)) {
      if (file === "/test/helpers/api.ts") continue; // fetchWorker itself, and the document's own fetch
      // A file that holds the worker (or SELF) may hand it to fetchWorker, and call no `.fetch(` itself.
      if (!/from "(\.\.\/)+src\/index"|\bSELF\b/.test(source)) continue;
      source.split("\n").forEach((line, i) => {
        if (!/\.fetch\(/.test(line)) return;
        if (exempt[file] && line.includes(exempt[file])) return;
        offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
