import { jsonArrays } from "../../../platform/batch";
import { newId, nowIso } from "../../../platform/ids";
import type { ServiceContext } from "../../../platform/service/context";
import { SCORE_SCOPE } from "../claims";
import { usableLineItem } from "./line-item";
import { enqueuePassbacks } from "./passback-target";

/**
 * LTI's subscription to the outbox: a learner's `lesson.completed` / `course.completed` becomes a
 * score for the launches that opened that lesson or course (the newest launch per line item, so one
 * assignment gets one score), sent through the passback queue. The unique (launch, event) index makes
 * a repeated delivery of the event a no-op.
 */
export const LTI_EVENT_TYPES = ["lesson.completed", "course.completed"] as const;

// Launches of the events' learners that target the completed lesson or course and can take a score.
const MATCH_SQL = `SELECT e.id AS event_id, e.type, e.payload, max(l.id) AS launch_id, l.institution_id, l.ags
  FROM outbox_events e
  JOIN lti_launches l ON l.user_id = e.user_id AND l.institution_id = e.institution_id
    AND l.status = 'succeeded' AND l.ags IS NOT NULL
    AND ((e.type = 'lesson.completed' AND l.target_type = 'lesson' AND l.target_id = e.payload ->> '$.lesson_id')
      OR (e.type = 'course.completed' AND l.target_type = 'course' AND l.target_id = e.payload ->> '$.course_id'))
  WHERE e.id IN (SELECT value FROM json_each(?1)) AND e.type IN ('lesson.completed', 'course.completed')
  GROUP BY e.id, l.consumer_id, l.ags ->> '$.lineitem'`;

const INSERT_SQL = `INSERT INTO lti_passbacks (id, launch_id, institution_id, event_id, score_fraction,
    activity_progress, grading_progress, scored_at, status, attempt_count, created_at)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, 'Completed', 'FullyGraded', value ->> 5, 'pending', 0, ?2
  FROM json_each(?1) WHERE true
  ON CONFLICT DO NOTHING`;

// This batch's events' passbacks not yet tried: the ones just inserted, and any an earlier run
// inserted but stopped before queuing (the consumer's claim keeps a twin message from sending twice).
const UNSENT_SQL = `SELECT id FROM lti_passbacks WHERE event_id IN (SELECT value FROM json_each(?1))
  AND status = 'pending' AND attempt_count = 0`;

interface Match {
  event_id: string;
  type: string;
  payload: string;
  launch_id: string;
  institution_id: string;
  ags: string;
}

/** The score of a completion, as a fraction of 1: the lesson's score, or 1 for a course. */
function fractionOf(match: Match): number {
  if (match.type === "course.completed") return 1;
  const score = (JSON.parse(match.payload) as { score?: unknown }).score;
  return typeof score === "number" && Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 1;
}

/** The outbox subscriber `(ctx, eventIds)`: the completions' scores, inserted and queued. */
export async function passbackCompletions(ctx: ServiceContext, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  const d1 = ctx.env.DB;
  const list = JSON.stringify(eventIds);
  const matches = (await d1.prepare(MATCH_SQL).bind(list).all<Match>()).results.filter((m) => {
    const ags = (JSON.parse(m.ags) as { scope?: unknown; lineitem?: unknown }) ?? {};
    return (
      usableLineItem(ctx.env, ags.lineitem) !== null &&
      Array.isArray(ags.scope) &&
      ags.scope.includes(SCORE_SCOPE)
    );
  });
  if (matches.length === 0) return;
  const now = new Date(ctx.now());
  const rows = matches.map((m) => [
    newId("lpb"),
    m.launch_id,
    m.institution_id,
    m.event_id,
    fractionOf(m),
    now.toISOString(),
  ]);
  const matchedEvents = JSON.stringify([...new Set(matches.map((m) => m.event_id))]);
  const insert = d1.prepare(INSERT_SQL);
  const results = await d1.batch<{ id: string }>([
    ...jsonArrays(rows).map((part) => insert.bind(part, nowIso(now.getTime()))),
    d1.prepare(UNSENT_SQL).bind(matchedEvents),
  ]);
  const ids = (results.at(-1)?.results ?? []).map((r) => r.id);
  if (ids.length > 0) await enqueuePassbacks(ctx, ids);
}
