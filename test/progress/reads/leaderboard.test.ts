import { beforeAll, describe, expect, it } from "vitest";
import { addDays, weekOf } from "../../../src/domains/progress/rules";
import { callJson } from "../../helpers/api";
import { createPublishedCourse } from "../../helpers/progress-fixture";
import { createPlatformAdmin, createTenant, type Tenant, type TestUser } from "../../helpers/tenants";
import { attempt, expect422, learnerIn, record, today, updateUser } from "./support";

const ANONYMOUS = "Anonymous learner";

/**
 * One institution with the caller ("me", 20 XP this week), Ana (opted out, 30), Bea (20 this week,
 * 30 all time) and Carl (10); another institution with Xavier (50). Storage is per file, so these are
 * every learner with XP on the platform.
 */
let acme: Tenant;
let globex: Tenant;
let me: TestUser;
let ana: TestUser;
let bea: TestUser;
let carl: TestUser;
let xavier: TestUser;
let week: string;

beforeAll(async () => {
  acme = await createTenant();
  globex = await createTenant();
  me = acme.learner;
  ana = await learnerIn(acme.institution.id, { optOut: true, name: "Ana" });
  bea = await learnerIn(acme.institution.id, { name: "Bea" });
  carl = await learnerIn(acme.institution.id, { name: "Carl" });
  xavier = globex.learner;
  await updateUser(xavier.id, { name: "Xavier" });
  const course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 5, xp: 10 });
  const items = (n: number, at?: string) =>
    course.items.slice(0, n).map((id) => attempt(id, { at: at ?? Date.now() }));
  week = weekOf(today());
  await record(me.token, items(2));
  await record(ana.token, items(3));
  await record(bea.token, [attempt(course.items[4]!, { at: `${addDays(week, -3)}T12:00:00Z` })]); // last week
  await record(bea.token, items(2));
  await record(carl.token, items(1));
  await record(xavier.token, items(5));
});

function board(user: TestUser, query = "") {
  return callJson(`/api/gamification/leaderboard${query}`, { token: user.token });
}

const tied = () => [me.id, bea.id].sort();

describe("GET /api/gamification/leaderboard", () => {
  it("ranks this week in the caller's institution by default, anonymising opted-out learners", async () => {
    const { res, body } = await board(me);
    expect(res.status).toBe(200);
    const shown: Record<string, { user_id: string; display_name: string; is_me: boolean }> = {
      [me.id]: { user_id: me.id, display_name: "Test learner", is_me: true },
      [bea.id]: { user_id: bea.id, display_name: "Bea", is_me: false },
    };
    expect(body).toEqual({
      period: "week",
      scope: "institution",
      week,
      entries: [
        { rank: 1, user_id: null, display_name: ANONYMOUS, xp: 30, is_me: false },
        ...tied().map((id) => ({ rank: 2, xp: 20, ...shown[id] })),
        { rank: 4, user_id: carl.id, display_name: "Carl", xp: 10, is_me: false },
      ],
      me: { rank: 2, user_id: me.id, display_name: "Test learner", xp: 20, is_me: true },
    });
  });

  it("ranks all time, where ties are broken by user id", async () => {
    const { body } = await board(me, "?period=all_time");
    const ids = [ana.id, bea.id].sort();
    expect(body.week).toBeNull();
    expect(body.entries.map((e: any) => [e.rank, e.xp, e.user_id])).toEqual([
      [1, 30, ids[0] === ana.id ? null : bea.id],
      [1, 30, ids[1] === ana.id ? null : bea.id],
      [3, 20, me.id],
      [4, 10, carl.id],
    ]);
    expect(body.me).toMatchObject({ rank: 3, xp: 20 });
  });

  it("anonymises other institutions on the platform scope, and shows them to platform staff", async () => {
    const { body } = await board(me, "?scope=platform");
    expect(body.scope).toBe("platform");
    expect(body.entries.map((e: any) => [e.rank, e.xp, e.display_name])).toEqual([
      [1, 50, ANONYMOUS],
      [2, 30, ANONYMOUS],
      [3, 20, tied()[0] === me.id ? "Test learner" : "Bea"],
      [3, 20, tied()[1] === me.id ? "Test learner" : "Bea"],
      [5, 10, "Carl"],
    ]);
    expect(body.entries[0].user_id).toBeNull();
    expect(body.me.rank).toBe(3);

    // Xavier sees himself, and everybody of the other institution anonymised.
    const seenByXavier = await board(xavier, "?scope=platform&period=all_time");
    expect(seenByXavier.body.entries.map((e: any) => [e.rank, e.user_id, e.display_name, e.is_me])).toEqual([
      [1, xavier.id, "Xavier", true],
      [2, null, ANONYMOUS, false],
      [2, null, ANONYMOUS, false],
      [4, null, ANONYMOUS, false],
      [5, null, ANONYMOUS, false],
    ]);
    expect(seenByXavier.body.me).toEqual({
      rank: 1,
      user_id: xavier.id,
      display_name: "Xavier",
      xp: 50,
      is_me: true,
    });
    const own = await board(xavier);
    expect(own.body.entries).toEqual([
      { rank: 1, user_id: xavier.id, display_name: "Xavier", xp: 50, is_me: true },
    ]);

    // Platform staff: the platform by default, names of every institution, opted-out learners still anonymous.
    const staff = await createPlatformAdmin();
    const staffView = await board(staff);
    expect(staffView.body.scope).toBe("platform");
    expect(staffView.body.entries.map((e: any) => e.display_name).slice(0, 2)).toEqual(["Xavier", ANONYMOUS]);
    expect(staffView.body.me).toMatchObject({ rank: 6, user_id: staff.id, xp: 0, is_me: true });
    const noInstitution = await board(staff, "?scope=institution");
    expect422(noInstitution.res, noInstitution.body, "scope");
  });

  it("shows an opted-out learner to themself, with their rank", async () => {
    const { body } = await board(ana);
    expect(body.entries[0]).toEqual({ rank: 1, user_id: ana.id, display_name: "Ana", xp: 30, is_me: true });
    expect(body.me).toEqual(body.entries[0]);
  });

  it("cuts the list at limit and still gives the caller's rank", async () => {
    const { body } = await board(carl, "?limit=2");
    expect(body.entries).toHaveLength(2);
    expect(body.entries[0]).toMatchObject({ rank: 1, xp: 30 });
    expect(body.me).toEqual({ rank: 4, user_id: carl.id, display_name: "Carl", xp: 10, is_me: true });
  });

  it("lets an instructor see a member's position; 404 for another institution's user", async () => {
    const { body } = await board(acme.instructor, `?user_id=${bea.id}`);
    expect(body.scope).toBe("institution");
    expect(body.me).toEqual({ rank: 2, user_id: bea.id, display_name: "Bea", xp: 20, is_me: true });
    expect(body.entries.filter((e: any) => e.is_me).map((e: any) => e.user_id)).toEqual([bea.id]);
    const foreign = await board(acme.instructor, `?user_id=${xavier.id}`);
    expect(foreign.res.status).toBe(404);
    const learner = await board(me, `?user_id=${bea.id}`);
    expect(learner.res.status).toBe(403);
  });

  it.each([
    ["?limit=0", "limit"],
    ["?limit=101", "limit"],
    ["?limit=abc", "limit"],
    ["?limit=2.5", "limit"],
    ["?period=month", "period"],
    ["?scope=world", "scope"],
  ])("rejects %s with 422 naming %s", async (query, path) => {
    const { res, body } = await board(me, query);
    expect422(res, body, path);
  });
});
