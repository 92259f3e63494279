import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { createTenant } from "../helpers/tenants";
import { callJson, membersPath, outboxOf } from "./support";

/**
 * A D1 binding whose first batch that writes outbox events waits until `release()`: the request that
 * uses it has read the member and worked out its change, and is held just before writing it, so that
 * another request can change the member in between — the race made to happen every time.
 */
function heldBeforeItsWrite(real: D1Database) {
  let reached!: () => void;
  const held = new Promise<void>((resolve) => {
    reached = resolve;
  });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const writesEvents = new WeakSet<D1PreparedStatement>();
  let holding = true;
  const binding: Record<string, unknown> = {
    prepare(sql: string) {
      const statement = real.prepare(sql);
      if (!/outbox_events/.test(sql)) return statement;
      return new Proxy(statement, {
        get(target, key) {
          if (key === "bind")
            return (...values: unknown[]) => {
              const bound = target.bind(...values);
              writesEvents.add(bound);
              return bound;
            };
          const value = Reflect.get(target, key);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    },
    async batch(statements: D1PreparedStatement[]) {
      if (holding && statements.some((statement) => writesEvents.has(statement))) {
        holding = false;
        reached();
        await released;
      }
      return real.batch(statements);
    },
    exec: (sql: string) => real.exec(sql),
    dump: () => real.dump(),
    // Its own session (local D1 has one database): every session of the request is held alike.
    withSession: () => binding,
    getBookmark: () => null,
  };
  return { binding: binding as unknown as D1Database, held, release };
}

it("two PATCHes of one member at once both land, and their member.updated events chain from and to", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const path = `${membersPath(id)}/${tenant.learner.id}`;
  const before = (await callJson(path, { token: tenant.admin.token })).body;
  const held = heldBeforeItsWrite(env.DB);

  // The first PATCH reads the member and is held before its write…
  const first = callJson(path, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { name: "Ana First", groups: ["french"] },
    env: { DB: held.binding },
  });
  await held.held;
  // …while the second changes the name it read, and another field.
  const second = await callJson(path, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { name: "Bea Second", external_id: "SIS-2" },
  });
  expect(second.res.status, JSON.stringify(second.body)).toBe(200);
  held.release();
  const firstDone = await first;
  expect(firstDone.res.status, JSON.stringify(firstDone.body)).toBe(200);

  // Both land: each field as its PATCH set it; the name both set is the one written last.
  const after = (await callJson(path, { token: tenant.admin.token })).body;
  expect(after).toMatchObject({ name: "Ana First", groups: ["french"], external_id: "SIS-2" });
  expect(firstDone.body).toEqual(after);

  // The events chain: the first PATCH's `from` is what the second left, not what it had read.
  const events = (await outboxOf(id, "member.updated")).filter((e) => e.user_id === tenant.learner.id);
  expect(events).toHaveLength(2);
  expect(events).toContainEqual(
    expect.objectContaining({
      changes: {
        name: { from: before.name, to: "Bea Second" },
        external_id: { from: before.external_id, to: "SIS-2" },
      },
    }),
  );
  expect(events).toContainEqual(
    expect.objectContaining({
      changes: {
        name: { from: "Bea Second", to: "Ana First" },
        groups: { from: before.groups, to: ["french"] },
      },
    }),
  );
});

it("a PATCH overtaken by a change of what it changes applies to the member as that left it", async () => {
  const tenant = await createTenant();
  const id = tenant.institution.id;
  const path = `${membersPath(id)}/${tenant.instructor.id}`;
  const held = heldBeforeItsWrite(env.DB);
  // Both ask for the same role: the first, overtaken, finds nothing left to change and emits nothing.
  const first = callJson(path, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { role: "learner" },
    env: { DB: held.binding },
  });
  await held.held;
  const second = await callJson(path, {
    method: "PATCH",
    token: tenant.admin.token,
    body: { role: "learner" },
  });
  expect(second.res.status).toBe(200);
  held.release();
  const firstDone = await first;
  expect(firstDone.res.status, JSON.stringify(firstDone.body)).toBe(200);
  expect(firstDone.body.role).toBe("learner");
  const events = (await outboxOf(id, "member.updated")).filter((e) => e.user_id === tenant.instructor.id);
  expect(events.map((e) => e.changes)).toEqual([{ role: { from: "instructor", to: "learner" } }]);
});
