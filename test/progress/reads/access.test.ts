import { describe, expect, it } from "vitest";
import { callJson } from "../../helpers/api";
import { createPublishedCourse } from "../../helpers/progress-fixture";
import { createPlatformAdmin, createTenant, mintToken } from "../../helpers/tenants";
import { attempt, callInstrumented, expect422, queryPlans, record } from "./support";

/** Every learner-scoped read, with a query string to which `user_id` can be appended. */
async function learnerReads() {
  const course = await createPublishedCourse({ lessons: 2 });
  return {
    course,
    paths: [
      `/api/courses/${course.courseId}/lesson-progress?per_page=10`,
      "/api/progress-history?granularity=week",
      "/api/cefr/report?",
      "/api/learning-insights?",
      "/api/gamification/stats?",
      "/api/gamification/leaderboard?period=all_time&scope=institution",
    ],
  };
}

const withUser = (path: string, userId: string) =>
  `${path}${path.endsWith("?") ? "" : "&"}user_id=${encodeURIComponent(userId)}`;

describe("who may read whose progress", () => {
  it("lets instructors, admins and platform staff read a member; 404 across institutions; 403 for a learner naming another", async () => {
    const acme = await createTenant();
    const globex = await createTenant();
    const staff = await createPlatformAdmin();
    const { paths, course } = await learnerReads();
    await record(acme.learner.token, [attempt(course.items[0]!)]);
    for (const path of paths) {
      const own = await callJson(path, { token: acme.learner.token });
      expect(own.res.status, path).toBe(200);
      for (const reader of [acme.instructor.token, acme.admin.token, staff.token]) {
        const { res, body } = await callJson(withUser(path, acme.learner.id), { token: reader });
        expect(res.status, path).toBe(200);
        expect(body, path).toEqual(own.body.links ? { ...own.body, links: body.links } : own.body);
      }
      const foreign = await callJson(withUser(path, acme.learner.id), { token: globex.instructor.token });
      expect(foreign.res.status, path).toBe(404);
      expect(foreign.body.code).toBe("not_found");
      const unknown = await callJson(withUser(path, "usr_nobody"), { token: acme.admin.token });
      expect(unknown.res.status, path).toBe(404);
      const peer = await callJson(withUser(path, acme.instructor.id), { token: acme.learner.token });
      expect(peer.res.status, path).toBe(403);
      expect(peer.body.code).toBe("forbidden");
      const malformed = await callJson(withUser(path, "not an id"), { token: acme.instructor.token });
      expect422(malformed.res, malformed.body, "user_id");
    }
  });

  it("needs progress:read, naming it, and a token", async () => {
    const { learner } = await createTenant();
    const narrow = await mintToken(learner, ["content:read", "progress:write"]);
    const { paths } = await learnerReads();
    for (const path of paths) {
      const { res, body } = await callJson(path, { token: narrow.token });
      expect(res.status, path).toBe(403);
      expect(body.code).toBe("missing_ability");
      expect(body.detail).toContain("`progress:read`");
      const anonymous = await callJson(path);
      expect(anonymous.res.status, path).toBe(401);
    }
    const scoped = await mintToken(learner, ["progress:read"]);
    for (const path of paths)
      expect((await callJson(path, { token: scoped.token })).res.status, path).toBe(200);
  });
});

describe("the cost of a read", () => {
  it("is one D1 round trip for your own data, never touches attempts, and never scans a whole table", async () => {
    const { learner, admin } = await createTenant();
    const { paths, course } = await learnerReads();
    await record(
      learner.token,
      course.items.slice(0, 3).map((id) => attempt(id)),
    );
    const requests: [string, string][] = [
      ...paths.map((p) => [p, learner.token] as [string, string]),
      ["/api/gamification/leaderboard?period=week&scope=institution", learner.token],
      ["/api/gamification/leaderboard?period=week&scope=platform", learner.token],
      ["/api/gamification/leaderboard?period=all_time&scope=platform", learner.token],
      ["/api/stats", admin.token],
    ];
    for (const [path, token] of requests) {
      const { res, log } = await callInstrumented(path, token);
      expect(res.status, path).toBe(200);
      expect(log.roundTrips, path).toHaveLength(1);
      for (const { sql, plan } of await queryPlans(log)) {
        for (const step of plan) {
          expect(step, `${path}: ${sql}`).not.toMatch(/^(SCAN|SEARCH) attempts\b/);
          // A page's total counted again for every row of the page would multiply the rows read by its size.
          if (path.includes("lesson-progress"))
            expect(step, `${path}: ${sql}`).not.toMatch(/^CORRELATED SCALAR SUBQUERY/);
          // No full pass over a table or an alias of one. Allowed: index scans, json_each over the six
          // CEFR levels (`lv`) and a pass over a bounded subquery's own rows.
          const scanned = /^SCAN (\S+)(?: AS \w+)?$/.exec(step)?.[1];
          expect(
            scanned && !["ranked"].includes(scanned) && !scanned.startsWith("(subquery") ? step : null,
            `${path}: ${sql}`,
          ).toBeNull();
        }
      }
    }
  });

  it("adds only the member look-up when reading for somebody else", async () => {
    const { learner, instructor } = await createTenant();
    const { log } = await callInstrumented(`/api/cefr/report?user_id=${learner.id}`, instructor.token);
    expect(log.roundTrips).toHaveLength(2);
    expect(log.roundTrips[0]![0]!.sql).toMatch(/from "users"/);
  });
});
