import type { ltiLaunches, ltiPassbacks, outboxEvents } from "../../../db/schema";

/**
 * LTI grades' raw SQL: the completion subscriber's match, insert and re-read, one round trip each,
 * the ids and rows travelling as one JSON parameter. Each statement has a test in
 * test/lti/grades-sql.test.ts.
 */

type Launch = typeof ltiLaunches.$inferSelect;
type Passback = typeof ltiPassbacks.$inferSelect;
type OutboxEvent = typeof outboxEvents.$inferSelect;

/**
 * For each completion among the events in ?1 (a JSON array of ids), the launches of its learner that
 * opened the completed lesson or course and can take a score: the newest per (registration, line
 * item), so one assignment gets one score.
 */
export const COMPLETION_LAUNCHES_SQL = `SELECT e.id AS event_id, e.type, e.payload, max(l.id) AS launch_id, l.institution_id, l.ags
  FROM outbox_events e
  JOIN lti_launches l ON l.user_id = e.user_id AND l.institution_id = e.institution_id
    AND l.status = 'succeeded' AND l.ags IS NOT NULL
    AND ((e.type = 'lesson.completed' AND l.target_type = 'lesson' AND l.target_id = e.payload ->> '$.lesson_id')
      OR (e.type = 'course.completed' AND l.target_type = 'course' AND l.target_id = e.payload ->> '$.course_id'))
  WHERE e.id IN (SELECT value FROM json_each(?1)) AND e.type IN ('lesson.completed', 'course.completed')
  GROUP BY e.id, l.consumer_id, l.ags ->> '$.lineitem'`;
/** A row of COMPLETION_LAUNCHES_SQL: `payload` and `ags` are JSON text. */
export interface CompletionLaunchRow {
  event_id: OutboxEvent["id"];
  type: OutboxEvent["type"];
  payload: string;
  launch_id: Launch["id"];
  institution_id: NonNullable<Launch["institutionId"]>;
  ags: string;
}

/**
 * The completions' passbacks, ?1 a JSON array of [id, launch, institution, event, score fraction,
 * scored at], ?2 now (text): pending, untried, `Completed` / `FullyGraded`. A (launch, event) pair
 * that has one already is skipped.
 */
export const INSERT_COMPLETION_PASSBACKS_SQL = `INSERT INTO lti_passbacks (id, launch_id, institution_id, event_id, score_fraction,
    activity_progress, grading_progress, scored_at, status, attempt_count, created_at)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, 'Completed', 'FullyGraded', value ->> 5, 'pending', 0, ?2
  FROM json_each(?1) WHERE true
  ON CONFLICT DO NOTHING`;

/**
 * The passbacks of the events in ?1 (a JSON array of ids) not yet tried: the ones just inserted, and
 * any an earlier run inserted but stopped before queuing (the consumer's claim keeps a twin message
 * from sending twice).
 */
export const UNSENT_PASSBACKS_SQL = `SELECT id FROM lti_passbacks WHERE event_id IN (SELECT value FROM json_each(?1))
  AND status = 'pending' AND attempt_count = 0`;
/** A row of UNSENT_PASSBACKS_SQL. */
export type UnsentPassbackRow = Pick<Passback, "id">;
