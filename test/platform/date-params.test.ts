import { beforeAll, describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createPlatformAdmin, createTenant, type Tenant, type TestUser } from "../helpers/tenants";

/**
 * Every date parameter of the API is a real date between 2000-01-01 and 2100-12-31 (UTC): anything
 * else is a 422 naming the parameter, answered at once, and changes nothing.
 */

/** Calendar days no `YYYY-MM-DD` parameter accepts. */
const BAD_DAYS = ["2026-00-10", "2026-13-45", "2026-02-30", "9999-12-31", "1999-12-31", "2101-01-01", ""];
/** Date-times no date-time parameter accepts. */
const BAD_INSTANTS = [
  "2026-13-45T00:00:00Z",
  "2026-02-30T10:00:00Z",
  "9999-12-31T00:00:00Z",
  "1999-12-31T23:59:59Z",
  "2100-12-31T23:00:00-05:00", // 2101-01-01T04:00:00Z
  "0000-01-01T00:00:00Z",
];

let tenant: Tenant;
let staff: TestUser;
let hookId: string;

beforeAll(async () => {
  [tenant, staff] = await Promise.all([createTenant(), createPlatformAdmin()]);
  const hook = await callJson("/api/integrations/webhooks", {
    token: tenant.admin.token,
    body: { url: receiverEndpoint().url, events: ["*"] },
  });
  expect(hook.res.status).toBe(201);
  hookId = hook.body.id;
  // The first request of a file builds the route groups: not what the timing below measures.
  await callJson(`/api/institutions/${tenant.institution.id}/analytics`, { token: tenant.admin.token });
  await callJson("/api/progress-history", { token: tenant.learner.token });
}, 30_000);

function expect422(res: Response, body: any, path: string, label: string) {
  expect(res.status, `${label}: ${JSON.stringify(body)}`).toBe(422);
  expect(res.headers.get("Content-Type"), label).toContain("application/problem+json");
  expect(body.code, label).toBe("validation_failed");
  expect(
    body.errors.map((e: any) => e.path),
    label,
  ).toContain(path);
}

/** One GET, answered within two seconds (a range that loops forever never answers). */
async function quickGet(path: string, token: string) {
  const started = Date.now();
  const answer = await callJson(path, { token });
  expect(Date.now() - started, path).toBeLessThan(2_000);
  return answer;
}

describe("calendar-day query parameters", () => {
  it.each([
    ["/api/institutions/{id}/analytics", "admin"],
    ["/api/progress-history", "learner"],
  ] as const)("%s refuses impossible and out-of-range days in from and to", async (template, who) => {
    const path = template.replace("{id}", tenant.institution.id);
    for (const name of ["from", "to"]) {
      for (const value of BAD_DAYS) {
        const { res, body } = await quickGet(`${path}?${name}=${value}`, tenant[who].token);
        expect422(res, body, name, `${name}=${value}`);
      }
    }
  });

  it.each([
    ["/api/institutions/{id}/analytics", "admin"],
    ["/api/progress-history", "learner"],
  ] as const)("%s answers a range at the end of year 9999 with 422 at once", async (template, who) => {
    const path = template.replace("{id}", tenant.institution.id);
    for (const query of ["to=9999-12-31", "from=9999-12-01&to=9999-12-31", "from=9999-12-31"]) {
      const { res, body } = await quickGet(`${path}?${query}`, tenant[who].token);
      expect422(res, body, query.startsWith("to") ? "to" : "from", query);
    }
  });

  it.each([
    ["/api/institutions/{id}/analytics", "admin"],
    ["/api/progress-history", "learner"],
  ] as const)("%s accepts the first and the last accepted day", async (template, who) => {
    const path = template.replace("{id}", tenant.institution.id);
    for (const query of ["from=2000-01-01&to=2000-01-31", "from=2100-12-01&to=2100-12-31"]) {
      const { res, body } = await quickGet(`${path}?${query}`, tenant[who].token);
      expect(res.status, `${query}: ${JSON.stringify(body)}`).toBe(200);
      expect(body.series.length, query).toBe(31);
    }
    const monthly = await quickGet(
      `${path}?from=2100-01-01&to=2100-12-31&granularity=${template.includes("analytics") ? "month" : "week"}`,
      tenant[who].token,
    );
    expect(monthly.res.status).toBe(200);
  });
});

describe("date-time parameters", () => {
  it("GET /api/integrations/events refuses them in from and to", async () => {
    for (const name of ["from", "to"]) {
      for (const value of BAD_INSTANTS) {
        const { res, body } = await quickGet(
          `/api/integrations/events?${name}=${encodeURIComponent(value)}`,
          tenant.admin.token,
        );
        expect422(res, body, name, `${name}=${value}`);
      }
    }
    const { res } = await quickGet(
      `/api/integrations/events?from=2000-01-01T00:00:00Z&to=${encodeURIComponent("2100-12-31T23:59:59Z")}`,
      tenant.admin.token,
    );
    expect(res.status).toBe(200);
  });

  it("POST /api/integrations/exports refuses them in from and to and creates nothing", async () => {
    for (const name of ["from", "to"]) {
      for (const value of BAD_INSTANTS) {
        const { res, body } = await callJson("/api/integrations/exports", {
          token: tenant.admin.token,
          body: { type: "activity", [name]: value },
        });
        expect422(res, body, name, `${name}=${value}`);
      }
    }
    const list = await callJson("/api/integrations/exports", { token: tenant.admin.token });
    expect(list.body.meta.total).toBe(0);
  });

  it("POST /api/integrations/tokens refuses them in expires_at and creates nothing", async () => {
    const before = await callJson("/api/integrations/tokens", { token: tenant.admin.token });
    for (const value of BAD_INSTANTS) {
      const { res, body } = await callJson("/api/integrations/tokens", {
        token: tenant.admin.token,
        body: { name: "dated", abilities: ["content:read"], expires_at: value },
      });
      expect422(res, body, "expires_at", value);
    }
    const after = await callJson("/api/integrations/tokens", { token: tenant.admin.token });
    expect(after.body.meta.total).toBe(before.body.meta.total);
    const last = await callJson("/api/integrations/tokens", {
      token: tenant.admin.token,
      body: { name: "dated", abilities: ["content:read"], expires_at: "2100-12-31T23:59:59Z" },
    });
    expect(last.res.status).toBe(201);
  });

  it("PUT /api/institutions/{id}/compliance/{type} refuses them in signed_at and expires_at and changes nothing", async () => {
    const path = `/api/institutions/${tenant.institution.id}/compliance/dpa`;
    for (const value of BAD_INSTANTS) {
      for (const name of ["signed_at", "expires_at"]) {
        const { res, body } = await callJson(path, {
          method: "PUT",
          token: staff.token,
          body: { status: "signed", signed_at: "2026-01-10T09:00:00Z", [name]: value },
        });
        expect422(res, body, name, `${name}=${value}`);
      }
    }
    const { body } = await callJson(`/api/institutions/${tenant.institution.id}/compliance`, {
      token: tenant.admin.token,
    });
    expect(body.documents[0]).toMatchObject({ type: "dpa", status: "not_started", signed_at: null });
  });

  it("POST /api/integrations/webhooks/{id}/recover refuses them in since", async () => {
    for (const value of BAD_INSTANTS) {
      const { res, body } = await callJson(`/api/integrations/webhooks/${hookId}/recover`, {
        token: tenant.admin.token,
        body: { since: value },
      });
      expect422(res, body, "since", value);
    }
  });

  it("POST /api/progress/attempts refuses them in occurred_at and records nothing", async () => {
    for (const value of BAD_INSTANTS) {
      const { res, body } = await callJson("/api/progress/attempts", {
        token: tenant.learner.token,
        body: {
          attempts: [
            {
              id: crypto.randomUUID(),
              training_item_id: "itm_none",
              score: 1,
              correct: true,
              duration_seconds: 10,
              occurred_at: value,
            },
          ],
        },
      });
      expect422(res, body, "attempts.0.occurred_at", value);
    }
    const history = await callJson("/api/progress-history", { token: tenant.learner.token });
    expect(history.body.totals.attempts).toBe(0);
  });
});
