-- Rebuilds every analytics rollup from its sources: the members' counts and CEFR levels from users,
-- member_groups and learner_stats; institution_activity_days from attempts, lesson_progress and
-- course_progress, as the migration that introduced it did, inserted row by row so that the triggers
-- of 0034 derive the per-period, per-course and per-group rollups exactly as a live recording does.
-- Idempotent: it empties what it rebuilds first.
DELETE FROM institution_activity_totals;
--> statement-breakpoint
DELETE FROM institution_learner_courses;
--> statement-breakpoint
DELETE FROM institution_member_counts;
--> statement-breakpoint
DELETE FROM institution_cefr_counts;
--> statement-breakpoint
UPDATE institution_analytics_revisions SET revision = revision + 1;
--> statement-breakpoint
DELETE FROM institution_activity_days;
--> statement-breakpoint
INSERT INTO institution_member_counts (institution_id, group_name, members, learners)
SELECT institution_id, '', count(*), sum(role = 'learner') FROM users
WHERE institution_id IS NOT NULL GROUP BY institution_id;
--> statement-breakpoint
INSERT INTO institution_member_counts (institution_id, group_name, members, learners)
SELECT institution_id, group_name, count(*), 0 FROM member_groups GROUP BY institution_id, group_name;
--> statement-breakpoint
INSERT INTO institution_cefr_counts (institution_id, skill, level, learners)
SELECT u.institution_id, je.key, je.value, count(*)
FROM users u JOIN learner_stats ls ON ls.user_id = u.id, json_each(ls.cefr_levels) je
WHERE u.role = 'learner' AND u.institution_id IS NOT NULL AND je.type = 'text'
GROUP BY u.institution_id, je.key, je.value;
--> statement-breakpoint
-- A lesson or course completion counts on the local day of the attempt that completed it: its
-- occurred_at is the recorded completed_at (among attempts of the same second, the smallest id).
INSERT INTO institution_activity_days
  (institution_id, day, user_id, course_id, attempts, seconds, xp, lessons_completed, courses_completed)
SELECT institution_id, local_day, user_id, course_id, count(*), sum(duration_seconds), sum(xp_awarded), 0, 0
FROM attempts
WHERE institution_id IS NOT NULL
GROUP BY institution_id, local_day, user_id, course_id
ON CONFLICT (institution_id, day, user_id, course_id) DO NOTHING;
--> statement-breakpoint
WITH completions AS (
  SELECT a.institution_id, a.local_day AS day, a.user_id, a.course_id, count(*) AS n
  FROM lesson_progress lp
  JOIN attempts a ON a.id = (
    SELECT min(a2.id) FROM attempts a2
    WHERE a2.user_id = lp.user_id AND a2.lesson_id = lp.lesson_id AND a2.occurred_at = lp.completed_at
  )
  WHERE lp.completed_at IS NOT NULL AND a.institution_id IS NOT NULL
  GROUP BY a.institution_id, a.local_day, a.user_id, a.course_id
)
UPDATE institution_activity_days SET lessons_completed = completions.n
FROM completions
WHERE institution_activity_days.institution_id = completions.institution_id
  AND institution_activity_days.day = completions.day
  AND institution_activity_days.user_id = completions.user_id
  AND institution_activity_days.course_id = completions.course_id;
--> statement-breakpoint
WITH completions AS (
  SELECT a.institution_id, a.local_day AS day, a.user_id, a.course_id, count(*) AS n
  FROM course_progress cp
  JOIN attempts a ON a.id = (
    SELECT min(a2.id) FROM attempts a2
    WHERE a2.user_id = cp.user_id AND a2.course_id = cp.course_id AND a2.occurred_at = cp.completed_at
  )
  WHERE cp.completed_at IS NOT NULL AND a.institution_id IS NOT NULL
  GROUP BY a.institution_id, a.local_day, a.user_id, a.course_id
)
UPDATE institution_activity_days SET courses_completed = completions.n
FROM completions
WHERE institution_activity_days.institution_id = completions.institution_id
  AND institution_activity_days.day = completions.day
  AND institution_activity_days.user_id = completions.user_id
  AND institution_activity_days.course_id = completions.course_id;
