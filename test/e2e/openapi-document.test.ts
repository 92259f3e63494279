/**
 * The OpenAPI document held against independent validators and a client generator, as integrators
 * meet it. It is built in Node from the same route groups the worker serves (the dev-server test
 * checks that the served document is this one), so this file needs no server and runs in seconds.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { builtDocument } from "./openapi-built";

let doc: any;
beforeAll(async () => {
  doc = await builtDocument();
});

describe("the OpenAPI document", () => {
  it("passes @apidevtools/swagger-parser's validation (OpenAPI 3.1 schema and references)", async () => {
    // validate() dereferences in place: hand it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeDefined();
  });

  it("passes Redocly's recommended rules with no error and no warning beyond the two it keeps", async () => {
    const config = await createConfig({ extends: ["recommended"] });
    const problems = await lintFromString({
      source: JSON.stringify(doc),
      absoluteRef: "openapi.json",
      config,
    });
    const found = problems.map((p) => ({
      severity: p.severity,
      rule: p.ruleId,
      where: p.location[0]?.pointer,
      message: p.message,
    }));
    // Kept: the API is not published under a licence, /healthz has no 4xx answer to describe, and the
    // identity provider's two returns (the OIDC callback, the SAML ACS) are browser redirects whose
    // success is a 303 to the dashboard's page: they have no 2xx answer to describe.
    expect(found).toEqual([
      expect.objectContaining({ severity: "warn", rule: "info-license" }),
      expect.objectContaining({
        severity: "warn",
        rule: "operation-4xx-response",
        where: "#/paths/~1healthz/get/responses",
      }),
      expect.objectContaining({
        severity: "warn",
        rule: "operation-2xx-response",
        where: "#/paths/~1api~1auth~1sso~1oidc~1{id}~1callback/get/responses",
      }),
      expect.objectContaining({
        severity: "warn",
        rule: "operation-2xx-response",
        where: "#/paths/~1api~1auth~1sso~1saml~1{id}~1acs/post/responses",
      }),
    ]);
  });

  it("carries only flag-free ECMA-262 patterns (a regex flag cannot be written in `pattern`)", () => {
    const patterns: string[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object")
        for (const [key, value] of Object.entries(node)) {
          if (key === "pattern" && typeof value === "string") patterns.push(value);
          else walk(value);
        }
    };
    walk(doc);
    expect(patterns.length).toBeGreaterThan(0);
    for (const pattern of patterns) {
      expect(() => new RegExp(pattern, "u"), pattern).not.toThrow();
      expect(pattern, "a pattern ends with its anchor, not with a regex literal's flags").not.toMatch(
        /\/[dgimsuvy]+$/,
      );
    }
  });

  it("declares `security` on every operation: bearerAuth, or an explicit [] where no token is taken", () => {
    const operations = [
      ...Object.values<any>(doc.paths).flatMap((methods) => Object.values<any>(methods)),
      ...Object.values<any>(doc.webhooks).flatMap((methods) => Object.values<any>(methods)),
    ];
    for (const op of operations) {
      expect(Array.isArray(op.security), op.operationId ?? op.summary).toBe(true);
      expect(op).not.toHaveProperty("middleware");
    }
    expect(doc.paths["/api/auth/sign-in"].post.security).toEqual([]);
    expect(doc.paths["/api/public/courses"].get.security).toEqual([]);
    expect(doc.paths["/api/auth/me"].get.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.webhooks["lesson.completed"].post.security).toEqual([]);
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
  });

  it("generates TypeScript types with openapi-typescript that compile and name the operations", async () => {
    const source = astToString(await openapiTS(doc));
    expect(source).toContain('"/api/integrations/webhooks/{id}": {');
    expect(source).toContain('"/api/integrations/webhooks/event-types": {');
    expect(source).toMatch(/getWebhook: \{/);
    const dir = await mkdtemp(join(tmpdir(), "lingua-openapi-types-"));
    try {
      const file = join(dir, "lingua-api.d.ts");
      await writeFile(file, source);
      const program = ts.createProgram([file], {
        strict: true,
        noEmit: true,
        types: [],
        target: ts.ScriptTarget.ES2022,
        lib: ["lib.es2022.d.ts"],
      });
      const diagnostics = ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      expect(diagnostics).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
