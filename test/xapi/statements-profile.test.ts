import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import validateStatement from "xapi-validation";
import { ITEM_TYPES } from "../../src/db/schema";
import { profileDocument, XapiProfileSchema } from "../../src/domains/xapi/profile-document";
import { registerGetProfile } from "../../src/domains/xapi/routes/get-profile";
import { buildStatement } from "../../src/domains/xapi/statements/build";
import type { Fact } from "../../src/domains/xapi/statements/facts";
import type { References } from "../../src/domains/xapi/statements/references";
import { createApiApp } from "../../src/platform/openapi";
import { conformingFetch, OpenApiConformance } from "../helpers/openapi-conformance";

const BASE = "https://api.lingua.example";
const PROFILE = `${BASE}/xapi/profile`;

/** Every fact kind, over references given by hand (the builder is pure). */
function everyKind() {
  const refs: References = {
    items: new Map(
      ITEM_TYPES.map((type, i) => [
        `itm_${type}`,
        {
          id: `itm_${type}`,
          type,
          skill: "reading",
          cefrLevel: "A2",
          position: i + 1,
          content: i % 2 ? { prompt: `Prompt of ${type}`, answer: "secret-answer" } : {},
        },
      ]),
    ),
    lessons: new Map([["les_1", { id: "les_1", title: "Greetings", cefrLevel: "A2", position: 1 }]]),
    courses: new Map([
      ["crs_1", { id: "crs_1", title: "Spanish A2", targetLanguage: "es-MX", sourceLanguage: "en" }],
      ["crs_bad", { id: "crs_bad", title: "Odd", targetLanguage: "spanish please", sourceLanguage: "??" }],
    ]),
    learners: new Map([["usr_1", { id: "usr_1", name: "  ", email: "ana@example.test" }]]),
  };
  const at = "2026-11-20T10:15:00.250+01:00";
  const attempt = (type: string, courseId = "crs_1") => ({
    id: `att_${type}`,
    userId: "usr_1",
    institutionId: "ins_1",
    trainingItemId: `itm_${type}`,
    lessonId: "les_1",
    courseId,
    skill: "reading" as const,
    cefrLevel: "A2" as const,
    score: 1 / 3,
    correct: false,
    durationSeconds: 59.6,
    occurredAt: "2026-11-20T09:00:00Z",
    localDay: "2026-11-20",
    xpAwarded: 0,
    recordedAt: "2026-11-20T09:00:01Z",
  });
  const facts: Fact[] = [
    ...ITEM_TYPES.map((type) => ({ verb: "answered" as const, attempt: attempt(type) })),
    { verb: "answered", attempt: attempt("vocabulary", "crs_bad") },
    {
      verb: "progressed",
      userId: "usr_1",
      lessonId: "les_1",
      courseId: "crs_1",
      itemsDone: 5,
      itemsTotal: 5,
      at,
    },
    {
      verb: "progressed",
      userId: "usr_1",
      lessonId: "les_1",
      courseId: "crs_1",
      itemsDone: 0,
      itemsTotal: 0,
      at,
    },
    {
      verb: "completed",
      object: "lesson",
      userId: "usr_1",
      lessonId: "les_1",
      courseId: "crs_1",
      score: 1.2,
      at,
    },
    { verb: "completed", object: "course", userId: "usr_1", courseId: "crs_1", at },
    { verb: "mastered", userId: "usr_1", skill: "speaking", level: "C1", at },
    { verb: "earned", userId: "usr_1", code: "week streak!", name: "", at },
  ];
  return facts.map((fact, i) => {
    const built = buildStatement(fact, refs, {
      baseUrl: BASE,
      actorFormat: "account",
      id: `3ebd7d7c-6d06-5f2f-93e5-0baf8a898f${String(i).padStart(2, "0")}`,
    });
    if (!built) throw new Error(`no statement for ${fact.verb}`);
    return built.statement as any;
  });
}

/** Every IRI under the profile a value mentions, as a key or a value. */
function profileIris(value: unknown, out = new Set<string>()): Set<string> {
  if (typeof value === "string" && value.startsWith(PROFILE)) out.add(value);
  else if (Array.isArray(value)) for (const v of value) profileIris(v, out);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      profileIris(k, out);
      profileIris(v, out);
    }
  return out;
}

describe("the builder at its edges (pure)", () => {
  it("stays valid with odd inputs: no name, an invalid language tag, a score above 1, fractional seconds, an offset time", () => {
    const statements = everyKind();
    for (const s of statements) expect(validateStatement(s), JSON.stringify(s)).toEqual([]);
    const [first] = statements;
    // A blank name is left out rather than sent empty.
    expect(first.actor).toEqual({ objectType: "Agent", account: { homePage: BASE, name: "usr_1" } });
    // Items without a prompt are named by type and position.
    expect(first.object.definition.name).toEqual({ en: "Vocabulary item 1" });
    expect(first.result.duration).toBe("PT1M0S");
    expect(first.result.score).toEqual({ scaled: 0.3333, raw: 33.33, min: 0, max: 100 });
    expect(first.context.language).toBe("es-MX");
    const grammar = statements[1];
    expect(grammar.object.definition.name).toEqual({ en: "Grammar: Prompt of grammar" });
    expect(JSON.stringify(statements)).not.toContain("secret-answer");
    const bad = statements[ITEM_TYPES.length];
    expect(bad.context).not.toHaveProperty("language");
    expect(Object.keys(bad.object.definition.name)).toEqual(["und"]);
    const progressed = statements.filter((s) => s.verb.id.endsWith("/progressed"));
    expect(
      progressed.map((s) => s.result.extensions["https://w3id.org/xapi/cmi5/result/extensions/progress"]),
    ).toEqual([100, 0]);
    expect(progressed[0].timestamp).toBe("2026-11-20T09:15:00.250Z");
    const lesson = statements.find((s) => s.verb.id.endsWith("/completed"));
    expect(lesson.result.score.scaled).toBe(1);
    const earned = statements.at(-1);
    expect(earned.object.id).toBe(`${BASE}/xapi/activities/achievements/week%20streak!`);
    expect(earned.object.definition.name).toEqual({ en: "week streak!" });
  });
});

describe("the Lingua xAPI profile", () => {
  const document = profileDocument(BASE);

  it("is a profile in the xAPI Profiles 1.0 shape", () => {
    expect(XapiProfileSchema.parse(document)).toEqual(document);
    expect(document).toMatchObject({
      "@context": "https://w3id.org/xapi/profiles/context",
      id: PROFILE,
      type: "Profile",
      conformsTo: "https://w3id.org/xapi/profiles#1.0",
      versions: [{ id: `${PROFILE}#v1` }],
      author: { type: "Organization", name: "Lingua" },
    });
    const version = document.versions[0]!.id;
    for (const entry of [...document.concepts, ...document.templates]) {
      expect(entry.inScheme).toBe(version);
      expect(entry.id.startsWith(`${PROFILE}#`)).toBe(true);
      expect(Object.keys(entry.prefLabel)).toEqual(["en"]);
      expect(Object.keys(entry.definition)).toEqual(["en"]);
    }
    const ids = [version, ...document.concepts.map((c) => c.id), ...document.templates.map((t) => t.id)];
    expect(new Set(ids).size).toBe(ids.length);
    for (const concept of document.concepts)
      if (concept.inlineSchema) expect(() => JSON.parse(concept.inlineSchema as string)).not.toThrow();
    expect(document.concepts.map((c) => [c.id.slice(PROFILE.length), c.type])).toEqual([
      ["#earned", "Verb"],
      ["#achievement", "ActivityType"],
      ["#proficiency-level", "ActivityType"],
      ["#cefr-level", "ContextExtension"],
      ["#skill", "ContextExtension"],
      ["#xp", "ResultExtension"],
    ]);
  });

  it("defines every IRI of its own that a statement uses, and each template's verb and types are ADL's or its own", () => {
    const defined = new Set(document.concepts.map((c) => c.id));
    const used = profileIris(everyKind());
    expect(used.size).toBeGreaterThan(0);
    for (const iri of used) expect(defined, iri).toContain(iri);
    for (const template of document.templates)
      for (const iri of [template.verb, template.objectActivityType])
        expect(iri.startsWith("http://adlnet.gov/expapi/") || defined.has(iri), iri).toBe(true);
  });

  it("is served at GET /xapi/profile without a token, as JSON-LD, cacheable and readable from any origin", async () => {
    const app = createApiApp(registerGetProfile);
    // Held to the OpenAPI document the route declares, as every test's request to the worker is.
    const conformance = new OpenApiConformance(
      app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "xAPI profile", version: "1" } }),
    );
    const get = (headers: Record<string, string> = {}) =>
      conformingFetch(
        new Request(`${BASE}/xapi/profile`, { headers }),
        async (request) => app.request(request, {}, env, createExecutionContext()),
        async () => conformance,
      );
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/ld+json; charset=utf-8");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=86400");
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    // The configured public base URL, whatever host was asked.
    expect(await res.json()).toEqual(profileDocument(env.PUBLIC_BASE_URL));
    const plain = await get({ Accept: "application/json" });
    expect(plain.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(await plain.json()).toEqual(profileDocument(env.PUBLIC_BASE_URL));
  });
});
