import { beforeAll, describe, expect, it } from "vitest";
import { appForGroup, ROUTE_GROUPS } from "../../src/app";
import { INSTITUTION_PATH_TEMPLATE } from "../../src/platform/http/institution-path";
import { call } from "../helpers/api";
import { documentedOperations, fillPath, inBatches, type Operation } from "../helpers/operations";
import { createPlatformAdmin, createTenant, type Tenant, type TestUser } from "../helpers/tenants";

/**
 * Every operation that names an institution in its path runs in that institution's database
 * (docs/design/multi-database.md#platform-wide-reads), by one mechanism: the family
 * `/api/institutions/{id}/…`, whose token routes `authenticate` moves for platform staff and whose
 * public routes `publicRoute` gives `inInstitutionOfPath`. The operations come from the served OpenAPI
 * document (a path parameter names an institution when its example is an institution's id), so a
 * route added later is held to it without anyone listing it.
 */

/** Operations naming an institution outside the family: why, and who takes them there. */
const ELSEWHERE: Record<string, string> = {
  "GET /api/auth/sso/oidc/{id}/callback":
    "an SSO entry point: its pending request lives in DB, the institution's settings in its own database (issue 35, the entry points)",
  "POST /api/auth/sso/saml/{id}/acs":
    "an SSO entry point: its pending request lives in DB, the institution's settings in its own database (issue 35, the entry points)",
};

/** The middleware that moves a request of the family (by their function names). */
const MOVERS = new Set(["authenticate", "inInstitutionOfPath"]);

let operations: Operation[];
beforeAll(async () => {
  operations = await documentedOperations();
});

/** Whether a documented path parameter's example is an institution's id. */
function namesInstitution(doc: any, op: Operation): boolean {
  const parameters = doc.paths[op.path][op.method.toLowerCase()].parameters ?? [];
  return parameters.some(
    (p: any) => p.in === "path" && String(p.example ?? p.schema?.example ?? "").startsWith("ins_"),
  );
}

describe("operations naming an institution in their path", () => {
  it("are the family /api/institutions/{id}/…, or listed with the reason they are not", async () => {
    const doc = (await (await call("/api/openapi.json")).json()) as any;
    const naming = operations.filter((op) => namesInstitution(doc, op));
    expect(naming.length).toBeGreaterThan(20);
    const outside = naming.filter((op) => !INSTITUTION_PATH_TEMPLATE.test(op.path)).map((op) => op.name);
    expect(outside.sort()).toEqual(Object.keys(ELSEWHERE).sort());
    // And every operation of the family names its institution as `{id}` (the mechanism reads that segment).
    const family = operations.filter((op) => INSTITUTION_PATH_TEMPLATE.test(op.path));
    expect(family.every((op) => namesInstitution(doc, op))).toBe(true);
  });

  it("each run the middleware that moves them to the institution's database", async () => {
    const family = new Set(
      operations.filter((op) => INSTITUTION_PATH_TEMPLATE.test(op.path)).map((op) => op.name),
    );
    const movedBy = new Map<string, string[]>();
    for (const group of ROUTE_GROUPS) {
      const app = await appForGroup(group);
      for (const route of app.routes) {
        const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
        if (!INSTITUTION_PATH_TEMPLATE.test(path) || path.includes("*")) continue;
        const methods = route.method === "ALL" ? ["GET", "POST", "PUT", "PATCH", "DELETE"] : [route.method];
        for (const method of methods) {
          const name = `${method} ${path}`;
          if (!family.has(name)) continue;
          if (MOVERS.has(route.handler.name))
            movedBy.set(name, [...(movedBy.get(name) ?? []), route.handler.name]);
        }
      }
    }
    const unmoved = [...family].filter((name) => !movedBy.has(name));
    expect(unmoved).toEqual([]);
  });

  describe("for an institution in DB_1", () => {
    let globex: Tenant;
    let staff: TestUser;
    beforeAll(async () => {
      [globex, staff] = await Promise.all([createTenant({ database: "DB_1" }), createPlatformAdmin()]);
    });

    it("answer every read from DB_1, to platform staff and to the public alike", async () => {
      const reads = operations.filter(
        (op) =>
          op.method === "GET" &&
          INSTITUTION_PATH_TEMPLATE.test(op.path) &&
          op.pathParams.every((p) => p === "id" || p === "member"),
      );
      expect(reads.length).toBeGreaterThan(8);
      const answers = await inBatches(reads, 4, async (op) => {
        const res = await call(fillPath(op.path, { id: globex.institution.id, member: globex.learner.id }), {
          ...(op.authenticated ? { token: staff.token } : {}),
        });
        await res.body?.cancel();
        // A token route answers staff 200; a public one reads the institution's settings there (404
        // without an SSO connection of its kind), and its bookmark says where it read.
        return {
          name: op.name,
          status: op.authenticated ? res.status : "public",
          database: res.headers.get("X-D1-Bookmark")?.split(":")[0],
        };
      });
      expect(answers).toEqual(
        reads.map((op) => ({ name: op.name, status: op.authenticated ? 200 : "public", database: "DB_1" })),
      );
    });
  });
});
