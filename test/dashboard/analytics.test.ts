import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { memberGroups } from "../../src/db/schema";
import { database } from "../../src/platform/db";
import { call, callJson } from "../helpers/api";
import { type CourseFixture, createPublishedCourse } from "../helpers/progress-fixture";
import { createPlatformAdmin, createTenant, type Tenant } from "../helpers/tenants";
import { Browser, textOf } from "./support";

const ANALYTICS = "/dashboard/analytics";
const DAY_MS = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) =>
  new Date(Date.parse(`${today}T00:00:00Z`) - n * DAY_MS).toISOString().slice(0, 10);

let tenant: Tenant;
let course: CourseFixture;
let browser: Browser;

/** 10:0i on `day`, or, today before 10:00 UTC, a moment already past (the API refuses future attempts). */
function pastTimeOf(day: string, i: number): string {
  const wanted = Date.parse(`${day}T10:${String(i).padStart(2, "0")}:00Z`);
  const past = Math.max(Date.now() - (i + 1) * 1000, Date.parse(`${day}T00:00:00Z`));
  return new Date(Math.min(wanted, past)).toISOString();
}

async function practise(token: string, day: string, items: string[]) {
  const attempts = items.map((itemId, i) => ({
    id: crypto.randomUUID(),
    training_item_id: itemId,
    score: 1,
    correct: true,
    duration_seconds: 60 + i,
    occurred_at: pastTimeOf(day, i),
  }));
  const { res, body } = await callJson("/api/progress/attempts", { token, body: { attempts } });
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
}

function api(query = "") {
  return callJson(`/api/institutions/${tenant.institution.id}/analytics${query}`, {
    token: tenant.admin.token,
  });
}

beforeAll(async () => {
  tenant = await createTenant();
  course = await createPublishedCourse({ lessons: 1, blocksPerLesson: 1, itemsPerBlock: 3 });
  await database(env.DB)
    .insert(memberGroups)
    .values({ institutionId: tenant.institution.id, userId: tenant.learner.id, groupName: "Year 7" });
  await practise(tenant.learner.token, daysAgo(1), course.items.slice(0, 2));
  await practise(tenant.learner.token, today, course.items.slice(2));
  const branded = await callJson(`/api/institutions/${tenant.institution.id}`, {
    method: "PATCH",
    token: tenant.admin.token,
    body: {
      branding: { display_name: "Fixture Academy", primary_color: "#0b7a3e", accent_color: "#c2410c" },
    },
  });
  expect(branded.res.status).toBe(200);
  browser = new Browser();
  expect((await browser.signIn(tenant.admin.email)).status).toBe(303);
});

describe("dashboard: analytics", () => {
  it("draws the API's figures as SVG charts in the institution's branding", async () => {
    const res = await browser.get(ANALYTICS);
    expect(res.status).toBe(200);
    const html = await res.text();
    const text = textOf(html);
    const { body } = await api();
    expect(body.totals.active_learners).toBe(1);
    expect(text).toContain("Fixture Academy · Analytics");
    expect(text).toContain(`${body.range.from} to ${body.range.to}`);
    // The totals as the API answers them.
    expect(text).toMatch(/1 Active learners/);
    expect(text).toContain(`${body.totals.lessons_completed} Lessons completed`);
    expect(text).toContain(`${body.totals.attempts} Attempts`);
    // Six charts, each an image with a title and a description, its data marks, and a table.
    for (const id of ["active", "minutes", "completions", "cefr", "courses", "groups"]) {
      expect(html).toContain(`id="chart-${id}"`);
      expect(html).toContain(`aria-labelledby="chart-${id}-title chart-${id}-desc"`);
    }
    expect((html.match(/<svg /g) ?? []).length).toBe(6);
    // One dot per day of the default 30 days; bars for minutes and lessons.
    expect((html.match(/<circle class="mark"/g) ?? []).length).toBe(body.series.length);
    expect(body.series).toHaveLength(30);
    expect(html).toContain("<title>Year 7: 1 active learners</title>");
    expect(text).toContain(`${body.top_courses[0].title}`);
    // The brand: its colours drawn into the charts and its theme stylesheet linked.
    expect(html).toContain('fill="#0b7a3e"');
    expect(html).toContain('fill="#c2410c"');
    expect(html).toContain('href="/dashboard/analytics/theme.css?primary=0b7a3e&amp;accent=c2410c"');
    // The CSP is the dashboard's: no inline style (colours are SVG attributes), no logo, no other origin.
    const csp = res.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toContain("img-src 'self' data:;");
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i);
  });

  it("serves the theme stylesheet from the colours its URL names, anything else as the defaults", async () => {
    const res = await call("/dashboard/analytics/theme.css?primary=0b7a3e&accent=c2410c");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/css; charset=utf-8");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    const css = await res.text();
    expect(css).toContain("background: #0b7a3e");
    expect(css).toContain("--accent: #c2410c");
    const bad = await (await call("/dashboard/analytics/theme.css?primary=red;}body{x:1&accent=")).text();
    expect(bad).not.toContain("red");
    expect(bad).toContain("background: #3730a3");
  });

  it("changes the range through its GET form: presets, a custom range, weeks, a group", async () => {
    const week = await browser.get(`${ANALYTICS}?preset=7`);
    expect(week.status).toBe(200);
    const html = await week.text();
    expect((html.match(/<circle class="mark"/g) ?? []).length).toBe(7);
    expect(html).toMatch(/<option value="7" selected="">Last 7 days<\/option>/);

    const from = daysAgo(20);
    const custom = await browser.get(
      `${ANALYTICS}?preset=custom&from=${from}&to=${today}&granularity=week&group=Year+7`,
    );
    expect(custom.status).toBe(200);
    const customHtml = await custom.text();
    const customText = textOf(customHtml);
    expect(customText).toContain(`${from} to ${today} · Year 7`);
    const { body } = await api(`?from=${from}&to=${today}&granularity=week&group=Year%207`);
    expect(body.series.length).toBeGreaterThanOrEqual(3);
    expect((customHtml.match(/<circle class="mark"/g) ?? []).length).toBe(body.series.length);
    // A link with dates and no preset is a custom range.
    const shared = await (await browser.get(`${ANALYTICS}?from=${from}&to=${today}`)).text();
    expect(shared).toMatch(/<option value="custom" selected="">/);
  });

  it("shows what is wrong with a range, next to the form, and draws nothing", async () => {
    for (const [query, message] of [
      ["preset=custom&from=2026-02-30&to=2026-03-05", "From: must be a calendar day"],
      ["preset=custom&from=2026-05-01&to=2026-04-01", "From: must not be after to"],
      ["preset=custom&from=2024-01-01&to=2026-01-01", "From: the range may span at most 366 days"],
      ["preset=custom&to=2026-01-01", "From: choose the first day of a custom range"],
    ] as const) {
      const res = await browser.get(`${ANALYTICS}?${query}`);
      expect([query, res.status]).toEqual([query, 422]);
      const html = await res.text();
      expect(textOf(html)).toContain(message);
      expect(html).not.toContain("<svg");
    }
  });

  it("has a print view: the figures and their tables, without the navigation or the form", async () => {
    const res = await browser.get(`${ANALYTICS}?preset=7&view=print`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('class="branded print-view"');
    expect(html).not.toContain('aria-label="Dashboard sections"');
    expect(html).not.toContain('class="card range-picker"');
    expect((html.match(/<details class="chart-data" open="">/g) ?? []).length).toBe(6);
    expect(html).toContain('href="/dashboard/analytics?preset=7">Back to the dashboard');
    // The ordinary page links to it with the same range.
    const page = await (await browser.get(`${ANALYTICS}?preset=7`)).text();
    expect(page).toContain('href="/dashboard/analytics?preset=7&amp;view=print"');
  });

  it("shows the logo, allowing its origin as an image source and nothing else", async () => {
    const other = await createTenant();
    await callJson(`/api/institutions/${other.institution.id}`, {
      method: "PATCH",
      token: other.admin.token,
      body: { branding: { logo_url: "https://cdn.example.test/acme/logo.svg" } },
    });
    const b = new Browser();
    await b.signIn(other.admin.email);
    const res = await b.get(ANALYTICS);
    expect(res.headers.get("Content-Security-Policy")).toContain(
      "img-src 'self' data: https://cdn.example.test;",
    );
    const html = await res.text();
    expect(html).toContain('src="https://cdn.example.test/acme/logo.svg"');
    // No activity yet: the charts are drawn (zeros) with a word about what to do.
    expect(textOf(html)).toContain("No learner practised in this range");
    expect(textOf(html)).toContain("No course had activity in this range");
  });

  it("asks platform staff to choose an institution, then shows that one's figures", async () => {
    const staff = await createPlatformAdmin();
    const b = new Browser();
    await b.signIn(staff.email);
    const before = await b.get(ANALYTICS);
    expect(before.status).toBe(200);
    expect(textOf(await before.text())).toContain("choose the institution whose figures you want to see");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await (await b.get("/dashboard")).text())![1]!;
    expect(
      (await b.post("/dashboard/institutions/choose", { _csrf: csrf, institution_id: tenant.institution.id }))
        .status,
    ).toBe(303);
    const after = await b.get(ANALYTICS);
    expect(textOf(await after.text())).toContain("Fixture Academy · Analytics");
  });
});
