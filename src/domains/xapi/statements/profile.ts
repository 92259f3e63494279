import { XAPI_PROFILE } from "../prefixes";

/**
 * Every IRI a Lingua statement uses: the ADL and cmi5 ones it borrows, and the few the Lingua xAPI
 * profile coins. The profile's own IRIs are fragments of the profile document
 * (`${base}/xapi/profile#earned`), so each resolves to `GET /xapi/profile`, which defines it
 * (xapi/profile-document.ts). `base` is `ctx.config.publicBaseUrl` (no trailing slash).
 */

/** The verbs borrowed from ADL's vocabulary, by Lingua's name of the activity. */
export const ADL_VERBS = {
  answered: "http://adlnet.gov/expapi/verbs/answered",
  completed: "http://adlnet.gov/expapi/verbs/completed",
  progressed: "http://adlnet.gov/expapi/verbs/progressed",
  mastered: "http://adlnet.gov/expapi/verbs/mastered",
} as const;

/** The activity types borrowed from ADL's vocabulary. */
export const ADL_ACTIVITY_TYPES = {
  interaction: "http://adlnet.gov/expapi/activities/cmi.interaction",
  lesson: "http://adlnet.gov/expapi/activities/lesson",
  course: "http://adlnet.gov/expapi/activities/course",
} as const;

/** cmi5's progress result extension: an integer 0–100. */
export const CMI5_PROGRESS = "https://w3id.org/xapi/cmi5/result/extensions/progress";

/** The Lingua profile's own IRI: the document at `GET /xapi/profile`. */
export function profileIri(base: string): string {
  return `${base}${XAPI_PROFILE}`;
}

/** The profile's version IRI, a fragment of the document like every IRI it coins (a new one per revision). */
export function profileVersionIri(base: string): string {
  return `${profileIri(base)}#v1`;
}

/** The fragment names of the concepts the profile coins (docs/xapi.md, "The Lingua xAPI profile"). */
export const PROFILE_CONCEPTS = {
  /** Verb: unlocked an achievement. */
  earned: "earned",
  /** Activity type: an achievement. */
  achievement: "achievement",
  /** Activity type: a CEFR level of one skill (or of the learner overall). */
  proficiencyLevel: "proficiency-level",
  /** Context extension: the CEFR level (`A1`…`C2`) of the item, lesson or level reached. */
  cefrLevel: "cefr-level",
  /** Context extension: the skill (`reading`, `listening`, …, `overall`). */
  skill: "skill",
  /** Result extension: the experience points an attempt earned. */
  xp: "xp",
} as const;
export type ProfileConcept = keyof typeof PROFILE_CONCEPTS;

/** The IRI of a concept the profile coins: `${base}/xapi/profile#<name>`. */
export function conceptIri(base: string, concept: ProfileConcept): string {
  return `${profileIri(base)}#${PROFILE_CONCEPTS[concept]}`;
}

/** The activity IRIs of the things statements are about, all below `${base}/xapi/activities/`. */
export const activityIri = {
  trainingItem: (base: string, id: string) => `${base}/xapi/activities/training-items/${segment(id)}`,
  lesson: (base: string, id: string) => `${base}/xapi/activities/lessons/${segment(id)}`,
  course: (base: string, id: string) => `${base}/xapi/activities/courses/${segment(id)}`,
  /** A CEFR level of a skill: `…/cefr/reading/B1`, `…/cefr/overall/B1`. */
  proficiencyLevel: (base: string, skill: string, level: string) =>
    `${base}/xapi/activities/cefr/${segment(skill)}/${segment(level)}`,
  achievement: (base: string, code: string) => `${base}/xapi/activities/achievements/${segment(code)}`,
};

/** Ids are URL-safe already; anything else is percent-encoded so the IRI stays valid. */
function segment(value: string): string {
  return encodeURIComponent(value);
}
