-- Rebuilds every analytics rollup from its sources: the members' counts and CEFR levels from users,
-- member_groups and learner_stats; institution_activity_days from attempts, lesson_progress and
-- course_progress, as the migration that introduced it did; then what the triggers of 0034 derive
-- from it (per-period, per-course and per-group sums, distinct learners per day, week and month, the
-- (learner, course) pairs), set-based: the two triggers on institution_activity_days are dropped for
-- the rebuild (row by row they would take minutes for a large institution) and created again, the
-- same, at the end. Idempotent: it empties what it rebuilds first. test/institutions/analytics.test.ts
-- checks that its figures equal those of live recording.
DROP TRIGGER IF EXISTS `institution_activity_days_insert_rollups`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `institution_activity_days_update_rollups`;
--> statement-breakpoint
DELETE FROM institution_activity_totals;
--> statement-breakpoint
DELETE FROM institution_learner_courses;
--> statement-breakpoint
DELETE FROM institution_member_counts;
--> statement-breakpoint
DELETE FROM institution_cefr_counts;
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

--> statement-breakpoint
-- The institution's days: sums, and the distinct learners of each day.
INSERT INTO institution_activity_totals
  (institution_id, scope, period, key, learners, attempts, seconds, xp, lessons_completed, courses_completed)
SELECT institution_id, 'all', 'd:' || day, '', count(DISTINCT user_id), sum(attempts), sum(seconds), sum(xp),
  sum(lessons_completed), sum(courses_completed)
FROM institution_activity_days GROUP BY institution_id, day;
--> statement-breakpoint
-- The distinct learners of each ISO week and month.
INSERT INTO institution_activity_totals (institution_id, scope, period, key, learners)
SELECT institution_id, 'all', 'w:' || date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days'), '', count(DISTINCT user_id)
FROM institution_activity_days GROUP BY institution_id, date(day, '-' || ((CAST(strftime('%w', day) AS INTEGER) + 6) % 7) || ' days');
--> statement-breakpoint
INSERT INTO institution_activity_totals (institution_id, scope, period, key, learners)
SELECT institution_id, 'all', 'm:' || substr(day, 1, 7) || '-01', '', count(DISTINCT user_id)
FROM institution_activity_days GROUP BY institution_id, substr(day, 1, 7);
--> statement-breakpoint
-- Courses' and groups' (members now) sums per day and per month.
INSERT INTO institution_activity_totals
  (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
SELECT r.institution_id, 'course', CASE k.kind WHEN 'd' THEN 'd:' || r.day ELSE 'm:' || substr(r.day, 1, 7) || '-01' END AS p,
  r.course_id, sum(r.attempts), sum(r.seconds), sum(r.xp), sum(r.lessons_completed), sum(r.courses_completed)
FROM institution_activity_days r CROSS JOIN (SELECT 'd' AS kind UNION ALL SELECT 'm') k
GROUP BY r.institution_id, p, r.course_id;
--> statement-breakpoint
INSERT INTO institution_activity_totals
  (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
SELECT r.institution_id, 'group', CASE k.kind WHEN 'd' THEN 'd:' || r.day ELSE 'm:' || substr(r.day, 1, 7) || '-01' END AS p,
  mg.group_name, sum(r.attempts), sum(r.seconds), sum(r.xp), sum(r.lessons_completed), sum(r.courses_completed)
FROM institution_activity_days r
CROSS JOIN member_groups mg ON mg.user_id = r.user_id AND +mg.institution_id = r.institution_id
CROSS JOIN (SELECT 'd' AS kind UNION ALL SELECT 'm') k
GROUP BY r.institution_id, p, mg.group_name;
--> statement-breakpoint
-- Each (learner, course) pair's first and last day, and the learner's groups now.
INSERT INTO institution_learner_courses (institution_id, user_id, course_id, first_day, last_day, groups)
SELECT r.institution_id, r.user_id, r.course_id, min(r.day), max(r.day),
  coalesce((SELECT group_concat(group_name, char(31)) FROM (SELECT group_name FROM member_groups mg
    WHERE mg.user_id = r.user_id AND +mg.institution_id = r.institution_id ORDER BY group_name)), '')
FROM institution_activity_days r GROUP BY r.institution_id, r.user_id, r.course_id;
--> statement-breakpoint
-- Every revision raised, and one for each month and institution new to them: an ETag issued before
-- the rebuild is not taken for one after it.
UPDATE institution_analytics_revisions SET revision = revision + 1;
--> statement-breakpoint
INSERT INTO institution_analytics_revisions (institution_id, month, revision)
SELECT institution_id, month, 1 FROM (
  SELECT DISTINCT institution_id, substr(day, 1, 7) AS month FROM institution_activity_days
  UNION SELECT institution_id, '' FROM institution_member_counts)
WHERE true
ON CONFLICT (institution_id, month) DO NOTHING;
--> statement-breakpoint
-- The triggers of 0034 on institution_activity_days, as they were.
CREATE TRIGGER `institution_activity_days_insert_rollups`
AFTER INSERT ON `institution_activity_days`
BEGIN
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, learners, attempts, seconds, xp, lessons_completed, courses_completed)
  VALUES (NEW.institution_id, 'all', 'd:' || NEW.day, '',
    NOT EXISTS (SELECT 1 FROM institution_activity_days r INDEXED BY institution_activity_days_user_idx
      WHERE r.institution_id = NEW.institution_id AND r.user_id = NEW.user_id AND r.day = NEW.day
        AND r.course_id <> NEW.course_id),
    NEW.attempts, NEW.seconds, NEW.xp, NEW.lessons_completed, NEW.courses_completed)
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    learners = learners + excluded.learners, attempts = attempts + excluded.attempts,
    seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  INSERT INTO institution_activity_totals (institution_id, scope, period, key, learners)
  SELECT NEW.institution_id, 'all', 'w:' || p.first, '', 1
  FROM (SELECT date(NEW.day, '-' || ((CAST(strftime('%w', NEW.day) AS INTEGER) + 6) % 7) || ' days') AS first) p
  WHERE NOT EXISTS (SELECT 1 FROM institution_activity_days r INDEXED BY institution_activity_days_user_idx
    WHERE r.institution_id = NEW.institution_id AND r.user_id = NEW.user_id
      AND r.day >= p.first AND r.day <= date(p.first, '+6 days')
      AND NOT (r.day = NEW.day AND r.course_id = NEW.course_id))
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET learners = learners + 1;
  INSERT INTO institution_activity_totals (institution_id, scope, period, key, learners)
  SELECT NEW.institution_id, 'all', 'm:' || p.first, '', 1
  FROM (SELECT substr(NEW.day, 1, 7) || '-01' AS first) p
  WHERE NOT EXISTS (SELECT 1 FROM institution_activity_days r INDEXED BY institution_activity_days_user_idx
    WHERE r.institution_id = NEW.institution_id AND r.user_id = NEW.user_id
      AND r.day >= p.first AND r.day <= date(p.first, '+1 month', '-1 day')
      AND NOT (r.day = NEW.day AND r.course_id = NEW.course_id))
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET learners = learners + 1;
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
  SELECT NEW.institution_id, s.scope, p.period, s.key,
    NEW.attempts, NEW.seconds, NEW.xp, NEW.lessons_completed, NEW.courses_completed
  FROM (SELECT 'course' AS scope, NEW.course_id AS key
        UNION ALL
        SELECT 'group', group_name FROM member_groups
        WHERE user_id = NEW.user_id AND +institution_id = NEW.institution_id) s,
       (SELECT 'd:' || NEW.day AS period UNION ALL SELECT 'm:' || substr(NEW.day, 1, 7) || '-01') p
  WHERE true
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    attempts = attempts + excluded.attempts, seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  INSERT INTO institution_learner_courses (institution_id, user_id, course_id, first_day, last_day, groups)
  VALUES (NEW.institution_id, NEW.user_id, NEW.course_id, NEW.day, NEW.day,
    (SELECT coalesce(group_concat(group_name, char(31)), '') FROM (SELECT group_name FROM member_groups
      WHERE user_id = NEW.user_id AND +institution_id = NEW.institution_id ORDER BY group_name)))
  ON CONFLICT (institution_id, user_id, course_id) DO UPDATE SET
    first_day = min(first_day, excluded.first_day), last_day = max(last_day, excluded.last_day);
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT NEW.institution_id, substr(NEW.day, 1, 7), 1 WHERE NEW.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `institution_activity_days_update_rollups`
AFTER UPDATE ON `institution_activity_days`
BEGIN
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
  SELECT NEW.institution_id, s.scope, s.period, s.key,
    NEW.attempts - OLD.attempts, NEW.seconds - OLD.seconds, NEW.xp - OLD.xp,
    NEW.lessons_completed - OLD.lessons_completed, NEW.courses_completed - OLD.courses_completed
  FROM (SELECT 'all' AS scope, 'd:' || NEW.day AS period, '' AS key
        UNION ALL SELECT 'course', 'd:' || NEW.day, NEW.course_id
        UNION ALL SELECT 'course', 'm:' || substr(NEW.day, 1, 7) || '-01', NEW.course_id
        UNION ALL SELECT 'group', p.period, mg.group_name FROM member_groups mg,
          (SELECT 'd:' || NEW.day AS period UNION ALL SELECT 'm:' || substr(NEW.day, 1, 7) || '-01') p
          WHERE mg.user_id = NEW.user_id AND +mg.institution_id = NEW.institution_id) s
  WHERE true
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    attempts = attempts + excluded.attempts, seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT NEW.institution_id, substr(NEW.day, 1, 7), 1 WHERE NEW.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
