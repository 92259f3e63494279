import { describe, expect, it } from "vitest";
import { addDays, weekOf } from "../../../src/domains/progress/rules";
import { callJson } from "../../helpers/api";
import { createPublishedCourse } from "../../helpers/progress-fixture";
import { createTenant } from "../../helpers/tenants";
import { attempt, expect422, learnerIn, record, today } from "./support";

const empty = { attempts: 0, items_completed: 0, correct: 0, accuracy: null, xp: 0, minutes: 0 };

describe("GET /api/progress-history", () => {
  it("counts days in the learner's time zone, zero-fills the range and totals it", async () => {
    const { institution } = await createTenant();
    const tokyo = await learnerIn(institution.id, { timeZone: "Asia/Tokyo" });
    const utc = await learnerIn(institution.id, { timeZone: "UTC" });
    const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3, xp: 10 });
    const d = addDays(today(), -5);
    // 14:30Z is 23:30 in Tokyo; 15:30Z and 16:00Z are already the next day there.
    const attempts = () => [
      attempt(course.items[0]!, { at: `${d}T14:30:00Z`, duration_seconds: 30 }),
      attempt(course.items[1]!, { at: `${d}T15:30:00Z`, duration_seconds: 45 }),
      attempt(course.items[2]!, { at: `${d}T16:00:00Z`, duration_seconds: 90, score: 0.2, correct: false }),
    ];
    await record(tokyo.token, attempts());
    await record(utc.token, attempts());

    const range = `from=${addDays(d, -1)}&to=${addDays(d, 2)}`;
    const { res, body } = await callJson(`/api/progress-history?${range}`, { token: tokyo.token });
    expect(res.status).toBe(200);
    expect(body).toEqual({
      user_id: tokyo.id,
      time_zone: "Asia/Tokyo",
      from: addDays(d, -1),
      to: addDays(d, 2),
      granularity: "day",
      series: [
        { date: addDays(d, -1), ...empty },
        { date: d, attempts: 1, items_completed: 1, correct: 1, accuracy: 1, xp: 10, minutes: 0.5 },
        {
          date: addDays(d, 1),
          attempts: 2,
          items_completed: 1,
          correct: 1,
          accuracy: 0.5,
          xp: 10,
          minutes: 2.3,
        },
        { date: addDays(d, 2), ...empty },
      ],
      totals: {
        attempts: 3,
        items_completed: 2,
        correct: 2,
        accuracy: 0.667,
        xp: 20,
        minutes: 2.8,
        active_days: 2,
      },
    });

    // The same instants all fall on one day in UTC.
    const inUtc = await callJson(`/api/progress-history?${range}`, { token: utc.token });
    expect(inUtc.body.series.map((p: any) => [p.date, p.attempts])).toEqual([
      [addDays(d, -1), 0],
      [d, 3],
      [addDays(d, 1), 0],
      [addDays(d, 2), 0],
    ]);
    expect(inUtc.body.series[1]).toEqual({
      date: d,
      attempts: 3,
      items_completed: 2,
      correct: 2,
      accuracy: 0.667,
      xp: 20,
      minutes: 2.8,
    });

    // Weekly: one point per week touching the range, dated by its Monday, summing the days in the range.
    const weekly = await callJson(`/api/progress-history?${range}&granularity=week`, { token: tokyo.token });
    expect(weekly.res.status).toBe(200);
    const expected = new Map<string, { attempts: number; xp: number }>();
    for (let day = addDays(d, -1); day <= addDays(d, 2); day = addDays(day, 1)) {
      const point = expected.get(weekOf(day)) ?? { attempts: 0, xp: 0 };
      if (day === d) point.attempts += 1;
      if (day === addDays(d, 1)) point.attempts += 2;
      if (day === d || day === addDays(d, 1)) point.xp += 10;
      expected.set(weekOf(day), point);
    }
    expect(weekly.body.granularity).toBe("week");
    expect(weekly.body.series.map((p: any) => ({ date: p.date, attempts: p.attempts, xp: p.xp }))).toEqual(
      [...expected].map(([date, p]) => ({ date, ...p })),
    );
    expect(weekly.body.totals).toEqual(body.totals);
  });

  it("defaults to the last 30 days ending today in the learner's time zone", async () => {
    const { institution } = await createTenant();
    const kiritimati = await learnerIn(institution.id, { timeZone: "Pacific/Kiritimati" });
    const { res, body } = await callJson("/api/progress-history", { token: kiritimati.token });
    expect(res.status).toBe(200);
    const to = today("Pacific/Kiritimati");
    expect(body).toMatchObject({
      time_zone: "Pacific/Kiritimati",
      from: addDays(to, -29),
      to,
      granularity: "day",
    });
    expect(body.series).toHaveLength(30);
    expect(body.series[0]).toEqual({ date: addDays(to, -29), ...empty });
    expect(body.totals).toEqual({ ...empty, active_days: 0 });

    // Only `to`: the 30 days ending then. Only `from`: from then to today.
    const onlyTo = await callJson("/api/progress-history?to=2026-03-31", { token: kiritimati.token });
    expect(onlyTo.body).toMatchObject({ from: "2026-03-02", to: "2026-03-31" });
    const onlyFrom = await callJson(`/api/progress-history?from=${addDays(to, -3)}`, {
      token: kiritimati.token,
    });
    expect(onlyFrom.body).toMatchObject({ from: addDays(to, -3), to });
    expect(onlyFrom.body.series).toHaveLength(4);
  });

  it("accepts a range of exactly 366 days", async () => {
    const { learner } = await createTenant();
    const { res, body } = await callJson("/api/progress-history?from=2024-01-01&to=2024-12-31", {
      token: learner.token,
    });
    expect(res.status).toBe(200);
    expect(body.series).toHaveLength(366);
  });

  it.each([
    ["from=2026-13-01", "from"],
    ["from=2026-02-30", "from"],
    ["from=26-01-01", "from"],
    ["to=yesterday", "to"],
    ["to=2026-1-5", "to"],
    ["granularity=month", "granularity"],
    ["from=2026-03-10&to=2026-03-09", "from"],
    ["from=2024-01-01&to=2025-01-01", "from"],
    ["from=2999-01-01", "from"],
    ["user_id=", "user_id"],
  ])("rejects %s with 422 naming %s", async (query, path) => {
    const { learner } = await createTenant();
    const { res, body } = await callJson(`/api/progress-history?${query}`, { token: learner.token });
    expect422(res, body, path);
  });
});
