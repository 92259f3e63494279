import type { XapiActorFormat } from "../../../db/schema";
import type { Fact } from "./facts";
import {
  actorOf,
  adlVerb,
  clip,
  courseActivity,
  courseContext,
  isoDuration,
  itemActivity,
  itemContext,
  lessonActivity,
  lessonContext,
  levelAndSkill,
  NAME_MAX,
  OWN_LANGUAGE,
  rfc3339,
  score,
  VERB_DISPLAY,
} from "./parts";
import { activityIri, CMI5_PROGRESS, conceptIri } from "./profile";
import type { References } from "./references";
import type { Activity, XapiStatement } from "./shape";

export { INTERACTION_TYPES, type InteractionType, type XapiStatement } from "./shape";

/** What a statement is built with besides its fact: where IRIs live, how the actor is named, its id. */
export interface BuildOptions {
  /** `ctx.config.publicBaseUrl`, no trailing slash. */
  baseUrl: string;
  actorFormat: XapiActorFormat;
  /** The statement's UUID (statements/ids.ts). */
  id: string;
}

/** One built statement and the columns of the forwarding log that come from it. */
export interface Built {
  activityId: string;
  occurredAt: string;
  statement: XapiStatement;
}

/**
 * The statement of one fact, or null when something it is about no longer exists (its learner,
 * item, lesson or course): such a fact is left out. Pure: everything read comes in `refs`.
 */
export function buildStatement(fact: Fact, refs: References, options: BuildOptions): Built | null {
  const base = options.baseUrl;
  const learner = refs.learners.get(fact.verb === "answered" ? fact.attempt.userId : fact.userId);
  if (!learner) return null;
  const actor = actorOf(learner, options.actorFormat, base);
  switch (fact.verb) {
    case "answered": {
      const { attempt } = fact;
      const item = refs.items.get(attempt.trainingItemId);
      const lesson = refs.lessons.get(attempt.lessonId);
      const course = refs.courses.get(attempt.courseId);
      if (!item || !lesson || !course) return null;
      const object = itemActivity(base, item, course);
      return built(options, object, attempt.occurredAt, {
        actor,
        verb: adlVerb("answered"),
        result: {
          success: attempt.correct,
          score: score(attempt.score),
          duration: isoDuration(attempt.durationSeconds),
          extensions: { [conceptIri(base, "xp")]: attempt.xpAwarded },
        },
        context: itemContext(base, item, lesson, course),
      });
    }
    case "progressed": {
      const lesson = refs.lessons.get(fact.lessonId);
      const course = refs.courses.get(fact.courseId);
      if (!lesson || !course) return null;
      const progress =
        fact.itemsTotal > 0
          ? Math.min(100, Math.max(0, Math.floor((fact.itemsDone / fact.itemsTotal) * 100)))
          : 0;
      return built(options, lessonActivity(base, lesson, course), fact.at, {
        actor,
        verb: adlVerb("progressed"),
        result: { completion: false, extensions: { [CMI5_PROGRESS]: progress } },
        context: lessonContext(base, lesson, course),
      });
    }
    case "completed": {
      const course = refs.courses.get(fact.courseId);
      if (!course) return null;
      if (fact.object === "course")
        return built(options, courseActivity(base, course), fact.at, {
          actor,
          verb: adlVerb("completed"),
          result: { completion: true },
          context: courseContext(course),
        });
      const lesson = refs.lessons.get(fact.lessonId);
      if (!lesson) return null;
      return built(options, lessonActivity(base, lesson, course), fact.at, {
        actor,
        verb: adlVerb("completed"),
        result: { completion: true, score: score(fact.score) },
        context: lessonContext(base, lesson, course),
      });
    }
    case "mastered": {
      const { skill } = fact;
      const object: Activity = {
        objectType: "Activity",
        id: activityIri.proficiencyLevel(base, skill, fact.level),
        definition: {
          name: { [OWN_LANGUAGE]: `CEFR ${fact.level} (${skill})` },
          description: {
            [OWN_LANGUAGE]:
              skill === "overall"
                ? `Level ${fact.level} of the Common European Framework of Reference for Languages, overall.`
                : `Level ${fact.level} of the Common European Framework of Reference for Languages in ${skill}.`,
          },
          type: conceptIri(base, "proficiencyLevel"),
        },
      };
      return built(options, object, fact.at, {
        actor,
        verb: adlVerb("mastered"),
        result: { success: true, completion: true },
        context: { platform: "Lingua", extensions: levelAndSkill(base, fact.level, skill) },
      });
    }
    case "earned": {
      const object: Activity = {
        objectType: "Activity",
        id: activityIri.achievement(base, fact.code),
        definition: {
          name: { [OWN_LANGUAGE]: clip(fact.name, NAME_MAX) || fact.code },
          type: conceptIri(base, "achievement"),
        },
      };
      return built(options, object, fact.at, {
        actor,
        verb: { id: conceptIri(base, "earned"), display: { "en-US": VERB_DISPLAY.earned } },
        context: { platform: "Lingua" },
      });
    }
  }
}

function built(
  options: BuildOptions,
  object: Activity,
  at: string,
  parts: Omit<XapiStatement, "id" | "object" | "timestamp">,
): Built {
  const timestamp = rfc3339(at);
  const statement: XapiStatement = {
    id: options.id,
    actor: parts.actor,
    verb: parts.verb,
    object,
    ...(parts.result ? { result: parts.result } : {}),
    context: parts.context,
    timestamp,
  };
  return { activityId: object.id, occurredAt: timestamp, statement };
}
