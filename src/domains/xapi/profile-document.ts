import { z } from "@hono/zod-openapi";
import { CEFR_LEVELS, SKILLS } from "../../db/schema";
import { INTERACTION_TYPES } from "./statements/build";
import {
  ADL_ACTIVITY_TYPES,
  ADL_VERBS,
  CMI5_PROGRESS,
  conceptIri,
  type ProfileConcept,
  profileIri,
  profileVersionIri,
} from "./statements/profile";

/**
 * The Lingua xAPI profile as a JSON-LD document in the shape of the xAPI Profiles specification
 * 1.0 (ADL): what `GET /xapi/profile` answers, so that every IRI Lingua coins resolves to its
 * definition (each is a fragment of this document: `${base}/xapi/profile#earned`). It defines the
 * concepts the profile coins (statements/profile.ts) and one statement template per kind of
 * statement Lingua sends, naming the ADL and cmi5 IRIs those borrow.
 */

/** When this version of the profile was made; a new version gets a new id and time. */
const VERSION_1_AT = "2026-11-27T00:00:00Z";
const EN = "en";

const LanguageMap = z.record(z.string(), z.string()).openapi({ example: { en: "earned" } });

const ConceptSchema = z
  .object({
    id: z.string().openapi({ example: "https://api.lingua.example/xapi/profile#earned" }),
    type: z.enum(["Verb", "ActivityType", "ContextExtension", "ResultExtension"]),
    inScheme: z.string().openapi({ description: "The profile version that defines it." }),
    prefLabel: LanguageMap,
    definition: LanguageMap,
    recommendedVerbs: z.array(z.string()).optional(),
    inlineSchema: z
      .string()
      .optional()
      .openapi({ description: "For an extension: the JSON Schema of its value, as a string." }),
  })
  .openapi("XapiProfileConcept");

const TemplateSchema = z
  .object({
    id: z.string(),
    type: z.literal("StatementTemplate"),
    inScheme: z.string(),
    prefLabel: LanguageMap,
    definition: LanguageMap,
    verb: z.string(),
    objectActivityType: z.string(),
    contextParentActivityType: z.array(z.string()).optional(),
    contextGroupingActivityType: z.array(z.string()).optional(),
    rules: z.array(
      z.object({
        location: z.string().openapi({ description: "A JSONPath into the statement." }),
        presence: z.enum(["included", "excluded", "recommended"]).optional(),
        any: z.array(z.unknown()).optional(),
        scopeNote: LanguageMap.optional(),
      }),
    ),
  })
  .openapi("XapiStatementTemplate");

export const XapiProfileSchema = z
  .object({
    "@context": z.literal("https://w3id.org/xapi/profiles/context"),
    id: z.string().openapi({ example: "https://api.lingua.example/xapi/profile" }),
    type: z.literal("Profile"),
    conformsTo: z.literal("https://w3id.org/xapi/profiles#1.0"),
    prefLabel: LanguageMap,
    definition: LanguageMap,
    versions: z.array(z.object({ id: z.string(), generatedAtTime: z.string() })),
    author: z.object({ type: z.literal("Organization"), name: z.string(), url: z.string().optional() }),
    concepts: z.array(ConceptSchema),
    templates: z.array(TemplateSchema),
  })
  .openapi("XapiProfile", {
    description:
      "The Lingua xAPI profile (xAPI Profiles 1.0, JSON-LD): the verb, activity types and extensions Lingua coins, and a statement template per kind of statement it sends.",
  });
export type XapiProfile = z.infer<typeof XapiProfileSchema>;

type Concept = z.infer<typeof ConceptSchema>;
type Template = z.infer<typeof TemplateSchema>;

const CONCEPTS: Record<
  ProfileConcept,
  {
    type: Concept["type"];
    label: string;
    definition: string;
    schema?: object;
    verbs?: (keyof typeof ADL_VERBS)[];
  }
> = {
  earned: {
    type: "Verb",
    label: "earned",
    definition:
      "The learner unlocked an achievement (the object, of type achievement) by what they did on Lingua: a streak, lessons completed, a perfect lesson…",
  },
  achievement: {
    type: "ActivityType",
    label: "achievement",
    definition:
      "An achievement a learner can unlock on Lingua, identified by its code (…/xapi/activities/achievements/{code}).",
  },
  proficiencyLevel: {
    type: "ActivityType",
    label: "CEFR proficiency level",
    definition:
      "A level of the Common European Framework of Reference for Languages (A1–C2) in one skill, or overall (…/xapi/activities/cefr/{skill}/{level}), as the object of mastered.",
  },
  cefrLevel: {
    type: "ContextExtension",
    label: "CEFR level",
    definition:
      "The CEFR level (A1–C2) of what the statement is about: the training item, the lesson, or the level mastered.",
    schema: { type: "string", enum: [...CEFR_LEVELS] },
  },
  skill: {
    type: "ContextExtension",
    label: "skill",
    definition:
      "The language skill the training item practises, or in which a level was mastered (`overall` for the learner's overall level).",
    schema: { type: "string", enum: [...SKILLS, "overall"] },
  },
  xp: {
    type: "ResultExtension",
    label: "experience points",
    definition:
      "The experience points (XP) the attempt earned the learner on Lingua: 0 for a failed attempt.",
    schema: { type: "integer", minimum: 0 },
    verbs: ["answered"],
  },
};

/** The statement templates: one per kind of statement (docs/xapi.md, "Statements"). */
function templates(base: string, version: string): Template[] {
  const actor = { location: "$.actor", presence: "included" as const };
  const timestamp = { location: "$.timestamp", presence: "included" as const };
  const platform = { location: "$.context.platform", presence: "included" as const, any: ["Lingua"] };
  const level = {
    location: `$.context.extensions['${conceptIri(base, "cefrLevel")}']`,
    presence: "included" as const,
  };
  const skill = {
    location: `$.context.extensions['${conceptIri(base, "skill")}']`,
    presence: "included" as const,
  };
  const language = { location: "$.context.language", presence: "recommended" as const };
  const template = (
    name: string,
    label: string,
    definition: string,
    rest: Omit<Template, "id" | "type" | "inScheme" | "prefLabel" | "definition">,
  ): Template => ({
    id: `${profileIri(base)}#${name}`,
    type: "StatementTemplate",
    inScheme: version,
    prefLabel: { [EN]: label },
    definition: { [EN]: definition },
    ...rest,
  });
  return [
    template("answered-item", "answered a training item", "One attempt at a training item.", {
      verb: ADL_VERBS.answered,
      objectActivityType: ADL_ACTIVITY_TYPES.interaction,
      contextParentActivityType: [ADL_ACTIVITY_TYPES.lesson],
      contextGroupingActivityType: [ADL_ACTIVITY_TYPES.course],
      rules: [
        actor,
        timestamp,
        platform,
        language,
        level,
        skill,
        {
          location: "$.object.definition.interactionType",
          presence: "included",
          any: [...new Set(Object.values(INTERACTION_TYPES))],
        },
        { location: "$.result.success", presence: "included" },
        { location: "$.result.score.scaled", presence: "included" },
        { location: "$.result.duration", presence: "included" },
        { location: `$.result.extensions['${conceptIri(base, "xp")}']`, presence: "included" },
      ],
    }),
    template(
      "progressed-lesson",
      "progressed in a lesson",
      "A lesson's progress moved on without completing it.",
      {
        verb: ADL_VERBS.progressed,
        objectActivityType: ADL_ACTIVITY_TYPES.lesson,
        contextGroupingActivityType: [ADL_ACTIVITY_TYPES.course],
        rules: [
          actor,
          timestamp,
          platform,
          language,
          level,
          { location: "$.result.completion", presence: "included", any: [false] },
          { location: `$.result.extensions['${CMI5_PROGRESS}']`, presence: "included" },
        ],
      },
    ),
    template(
      "completed-lesson",
      "completed a lesson",
      "Every item of a lesson done, with the lesson's score.",
      {
        verb: ADL_VERBS.completed,
        objectActivityType: ADL_ACTIVITY_TYPES.lesson,
        contextGroupingActivityType: [ADL_ACTIVITY_TYPES.course],
        rules: [
          actor,
          timestamp,
          platform,
          language,
          level,
          { location: "$.result.completion", presence: "included", any: [true] },
          { location: "$.result.score.scaled", presence: "included" },
        ],
      },
    ),
    template("completed-course", "completed a course", "Every lesson of a course completed.", {
      verb: ADL_VERBS.completed,
      objectActivityType: ADL_ACTIVITY_TYPES.course,
      rules: [
        actor,
        timestamp,
        platform,
        language,
        { location: "$.result.completion", presence: "included", any: [true] },
      ],
    }),
    template("mastered-level", "mastered a CEFR level", "A CEFR level reached in a skill, or overall.", {
      verb: ADL_VERBS.mastered,
      objectActivityType: conceptIri(base, "proficiencyLevel"),
      rules: [
        actor,
        timestamp,
        platform,
        level,
        skill,
        { location: "$.result.success", presence: "included", any: [true] },
      ],
    }),
    template("earned-achievement", "earned an achievement", "An achievement unlocked.", {
      verb: conceptIri(base, "earned"),
      objectActivityType: conceptIri(base, "achievement"),
      rules: [actor, timestamp, platform],
    }),
  ];
}

/** The profile document for the platform at `base` (`ctx.config.publicBaseUrl`). */
export function profileDocument(base: string): XapiProfile {
  const version = profileVersionIri(base);
  const concepts: Concept[] = (Object.keys(CONCEPTS) as ProfileConcept[]).map((key) => {
    const concept = CONCEPTS[key];
    return {
      id: conceptIri(base, key),
      type: concept.type,
      inScheme: version,
      prefLabel: { [EN]: concept.label },
      definition: { [EN]: concept.definition },
      ...(concept.verbs ? { recommendedVerbs: concept.verbs.map((v) => ADL_VERBS[v]) } : {}),
      ...(concept.schema ? { inlineSchema: JSON.stringify(concept.schema) } : {}),
    };
  });
  return {
    "@context": "https://w3id.org/xapi/profiles/context",
    id: profileIri(base),
    type: "Profile",
    conformsTo: "https://w3id.org/xapi/profiles#1.0",
    prefLabel: { [EN]: "Lingua xAPI profile" },
    definition: {
      [EN]: "The statements Lingua, a language-learning platform, forwards to an institution's Learning Record Store: attempts at training items, lesson progress, completed lessons and courses, CEFR levels mastered and achievements earned. It borrows ADL's verbs and activity types and cmi5's progress extension, and defines the few concepts below.",
    },
    versions: [{ id: version, generatedAtTime: VERSION_1_AT }],
    author: { type: "Organization", name: "Lingua", url: base },
    concepts,
    templates: templates(base, version),
  };
}
