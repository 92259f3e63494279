// The parts statements are assembled from (actor, verb, activities, contexts, values), each made
// once per set of references and shared by every statement that names it.
import type { ItemType, XapiActorFormat } from "../../../db/schema";
import { ADL_ACTIVITY_TYPES, ADL_VERBS, activityIri, conceptIri } from "./profile";
import type { CourseRef, ItemRef, LearnerRef, LessonRef } from "./references";
import { type Activity, INTERACTION_TYPES, type XapiStatement } from "./shape";

const ITEM_TYPE_LABELS: Record<ItemType, string> = {
  vocabulary: "Vocabulary",
  grammar: "Grammar",
  listening: "Listening",
  reading: "Reading",
  speaking: "Speaking",
  writing: "Writing",
  multiple_choice: "Multiple choice",
  translation: "Translation",
  matching: "Matching",
};

export const VERB_DISPLAY = {
  answered: "answered",
  completed: "completed",
  progressed: "progressed",
  mastered: "mastered",
  earned: "earned",
} as const;

/** The language of what Lingua writes itself (achievement names, CEFR level names). */
export const OWN_LANGUAGE = "en";
export const NAME_MAX = 120;
const DESCRIPTION_MAX = 500;

/** A learner's actor, made once per set of references (and format and base URL) like the activities. */
const actors = new WeakMap<
  LearnerRef,
  { format: XapiActorFormat; base: string; actor: XapiStatement["actor"] }
>();

export function actorOf(learner: LearnerRef, format: XapiActorFormat, base: string): XapiStatement["actor"] {
  const hit = actors.get(learner);
  if (hit && hit.format === format && hit.base === base) return hit.actor;
  const actor = makeActor(learner, format, base);
  actors.set(learner, { format, base, actor });
  return actor;
}

function makeActor(learner: LearnerRef, format: XapiActorFormat, base: string): XapiStatement["actor"] {
  const name = learner.name.trim();
  const named = name ? { name } : {};
  if (format === "mbox") return { objectType: "Agent", ...named, mbox: `mailto:${learner.email}` };
  return { objectType: "Agent", ...named, account: { homePage: base, name: learner.id } };
}

const adlVerbs = new Map<keyof typeof ADL_VERBS, XapiStatement["verb"]>();

/** An ADL verb, one object per verb for every statement. */
export function adlVerb(verb: keyof typeof ADL_VERBS): XapiStatement["verb"] {
  let made = adlVerbs.get(verb);
  if (!made) {
    made = { id: ADL_VERBS[verb], display: { "en-US": VERB_DISPLAY[verb] } };
    adlVerbs.set(verb, made);
  }
  return made;
}

/** A 0–1 score as xAPI's score: `scaled` the same, `raw` the percentage (0–100), to 4 and 2 decimals. */
export function score(value: number): { scaled: number; raw: number; min: number; max: number } {
  const scaled = Math.min(1, Math.max(0, Number.isFinite(value) ? value : 0));
  return {
    scaled: Math.round(scaled * 10_000) / 10_000,
    raw: Math.round(scaled * 10_000) / 100,
    min: 0,
    max: 100,
  };
}

/** Whole seconds as an ISO 8601 duration: `PT0S`, `PT45S`, `PT2M5S`, `PT1H0M3S`. */
export function isoDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `PT${h}H${m}M${s}S`;
  if (m > 0) return `PT${m}M${s}S`;
  return `PT${s}S`;
}

/** An ISO 8601 instant as RFC 3339 UTC (`2026-11-21T09:30:00Z`; milliseconds only when there are any). */
export function rfc3339(at: string): string {
  // The attempts of one request often share their time: the last one answered again as it was.
  if (at === lastInstant.at) return lastInstant.timestamp;
  const ms = Date.parse(at);
  if (!Number.isFinite(ms)) throw new RangeError(`not a timestamp: ${at}`);
  const timestamp = new Date(ms).toISOString().replace(".000Z", "Z");
  lastInstant = { at, timestamp };
  return timestamp;
}
let lastInstant = { at: "", timestamp: "" };

/**
 * Whether `tag` is a well-formed RFC 5646 language tag of the usual shape: language (2–3 letters,
 * or 4–8), optional script, region and variants (`es`, `pt-BR`, `zh-Hant-TW`, `sr-Latn`).
 */
export function isLanguageTag(tag: string): boolean {
  return /^[a-z]{2,3}(-[a-z]{3}){0,3}(-[a-z]{4})?(-([a-z]{2}|\d{3}))?(-([a-z\d]{5,8}|\d[a-z\d]{3}))*$|^[a-z]{4,8}$/i.test(
    tag,
  );
}

/** The course's context: `language` is the language learnt, when it is a valid tag. */
export function courseContext(course: CourseRef): XapiStatement["context"] {
  return isLanguageTag(course.targetLanguage)
    ? { platform: "Lingua", language: course.targetLanguage }
    : { platform: "Lingua" };
}

/** The key of the names Lingua's authors write: the course's instruction (source) language. */
function titleLanguage(course: CourseRef): string {
  return isLanguageTag(course.sourceLanguage) ? course.sourceLanguage : "und";
}

export function levelAndSkill(base: string, level: string, skill?: string): Record<string, string> {
  const extensions: Record<string, string> = { [conceptIri(base, "cefrLevel")]: level };
  if (skill) extensions[conceptIri(base, "skill")] = skill;
  return extensions;
}

/**
 * An activity made once per item, lesson or course of one set of references (and base URL and
 * course), then shared by every statement about it: the statements of a burst name the same few
 * activities thousands of times. Only ever serialised, never changed.
 */
type ActivityCache = WeakMap<object, { base: string; course: CourseRef | null; activity: Activity }>;
const courseActivities: ActivityCache = new WeakMap();
const lessonActivities: ActivityCache = new WeakMap();
const itemActivities: ActivityCache = new WeakMap();

function cached(
  cache: ActivityCache,
  of: object,
  base: string,
  course: CourseRef | null,
  make: () => Activity,
) {
  const hit = cache.get(of);
  if (hit && hit.base === base && hit.course === course) return hit.activity;
  const activity = make();
  cache.set(of, { base, course, activity });
  return activity;
}

export function courseActivity(base: string, course: CourseRef): Activity {
  return cached(courseActivities, course, base, null, () => makeCourseActivity(base, course));
}

export function lessonActivity(base: string, lesson: LessonRef, course: CourseRef): Activity {
  return cached(lessonActivities, lesson, base, course, () => makeLessonActivity(base, lesson, course));
}

export function itemActivity(base: string, item: ItemRef, course: CourseRef): Activity {
  return cached(itemActivities, item, base, course, () => makeItemActivity(base, item, course));
}

/** The context of an answer to `item`: made once per item of a set of references, like its activity. */
const itemContexts = new WeakMap<
  ItemRef,
  { base: string; lesson: LessonRef; course: CourseRef; context: XapiStatement["context"] }
>();

export function itemContext(base: string, item: ItemRef, lesson: LessonRef, course: CourseRef) {
  const hit = itemContexts.get(item);
  if (hit && hit.base === base && hit.lesson === lesson && hit.course === course) return hit.context;
  const context: XapiStatement["context"] = {
    ...courseContext(course),
    contextActivities: {
      parent: [lessonActivity(base, lesson, course)],
      grouping: [courseActivity(base, course)],
    },
    extensions: levelAndSkill(base, item.cefrLevel, item.skill),
  };
  itemContexts.set(item, { base, lesson, course, context });
  return context;
}

/** The context of a lesson's progress or completion: made once per lesson of a set of references. */
const lessonContexts = new WeakMap<
  LessonRef,
  { base: string; course: CourseRef; context: XapiStatement["context"] }
>();

export function lessonContext(base: string, lesson: LessonRef, course: CourseRef) {
  const hit = lessonContexts.get(lesson);
  if (hit && hit.base === base && hit.course === course) return hit.context;
  const context: XapiStatement["context"] = {
    ...courseContext(course),
    contextActivities: { grouping: [courseActivity(base, course)] },
    extensions: levelAndSkill(base, lesson.cefrLevel),
  };
  lessonContexts.set(lesson, { base, course, context });
  return context;
}

function makeCourseActivity(base: string, course: CourseRef): Activity {
  return {
    objectType: "Activity",
    id: activityIri.course(base, course.id),
    definition: {
      name: { [titleLanguage(course)]: clip(course.title, NAME_MAX) || course.id },
      type: ADL_ACTIVITY_TYPES.course,
    },
  };
}

function makeLessonActivity(base: string, lesson: LessonRef, course: CourseRef): Activity {
  return {
    objectType: "Activity",
    id: activityIri.lesson(base, lesson.id),
    definition: {
      name: { [titleLanguage(course)]: clip(lesson.title, NAME_MAX) || `Lesson ${lesson.position}` },
      type: ADL_ACTIVITY_TYPES.lesson,
    },
  };
}

/**
 * A training item as an interaction. Items have no title: the name is the item type and its
 * prompt (`Vocabulary: What does «la manzana» mean?`), the description the whole prompt. Options,
 * answers, transcripts and example answers are never sent.
 */
function makeItemActivity(base: string, item: ItemRef, course: CourseRef): Activity {
  const label = ITEM_TYPE_LABELS[item.type] ?? "Item";
  const prompt = typeof item.content.prompt === "string" ? collapse(item.content.prompt) : "";
  const language = titleLanguage(course);
  const definition: Activity["definition"] = {
    name: { [language]: prompt ? clip(`${label}: ${prompt}`, NAME_MAX) : `${label} item ${item.position}` },
    type: ADL_ACTIVITY_TYPES.interaction,
    interactionType: INTERACTION_TYPES[item.type] ?? "other",
  };
  if (prompt) definition.description = { [language]: clip(prompt, DESCRIPTION_MAX) };
  return { objectType: "Activity", id: activityIri.trainingItem(base, item.id), definition };
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export function clip(text: string, max: number): string {
  const value = collapse(text);
  return value.length <= max ? value : `${value.slice(0, max - 1).trimEnd()}…`;
}
