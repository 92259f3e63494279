-- The analytics rollups (docs/design/institution-analytics.md), kept by triggers inside the statement
-- that changes their source, so inside the recording's own D1 batch: never behind, and a statement
-- that writes nothing (a resent attempt is a duplicate the recording never writes; a failed batch is
-- rolled back) changes nothing. Every trigger also raises the institution's revision of what it
-- changed (institution_analytics_revisions), of which the analytics' ETag is made. The sources: institution_activity_days (the recording's per-day,
-- learner and course increments), member_groups, users and learner_stats.
--
-- institution_activity_days, a new (institution, day, learner, course) row: its sums go to the
-- institution's day, the course's day and month, and each of the learner's groups' day and month; the
-- learner is counted once per day, ISO week and month: when no other row of theirs lies in that period
-- (a probe of (institution, learner, day)); the (learner, course) pair's first and last day move.
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
-- An increment of an existing row: the difference goes to the same sums; nobody is newly active.
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
--> statement-breakpoint
-- A member joins a group: the group counts one more member and gains all of the member's activity in
-- the institution, before and after joining (a group's figures are those of its members now), and the
-- member's (learner, course) pairs carry the new list of groups.
CREATE TRIGGER `member_groups_insert_rollups`
AFTER INSERT ON `member_groups`
BEGIN
  INSERT INTO institution_member_counts (institution_id, group_name, members)
  VALUES (NEW.institution_id, NEW.group_name, 1)
  ON CONFLICT (institution_id, group_name) DO UPDATE SET members = members + excluded.members;
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
  SELECT NEW.institution_id, 'group',
    CASE k.kind WHEN 'd' THEN 'd:' || r.day ELSE 'm:' || substr(r.day, 1, 7) || '-01' END AS period,
    NEW.group_name, sum(r.attempts), sum(r.seconds), sum(r.xp),
    sum(r.lessons_completed), sum(r.courses_completed)
  FROM institution_activity_days r INDEXED BY institution_activity_days_user_idx, (SELECT 'd' AS kind UNION ALL SELECT 'm') k
  WHERE r.institution_id = NEW.institution_id AND r.user_id = NEW.user_id
  GROUP BY 3
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    attempts = attempts + excluded.attempts, seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  UPDATE institution_learner_courses SET groups =
    (SELECT coalesce(group_concat(group_name, char(31)), '') FROM (SELECT group_name FROM member_groups
      WHERE user_id = NEW.user_id AND +institution_id = NEW.institution_id ORDER BY group_name))
  WHERE institution_id = NEW.institution_id AND user_id = NEW.user_id;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT NEW.institution_id, '', 1 WHERE NEW.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
-- A member leaves a group: the same, taken away.
CREATE TRIGGER `member_groups_delete_rollups`
AFTER DELETE ON `member_groups`
BEGIN
  INSERT INTO institution_member_counts (institution_id, group_name, members)
  VALUES (OLD.institution_id, OLD.group_name, -1)
  ON CONFLICT (institution_id, group_name) DO UPDATE SET members = members + excluded.members;
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
  SELECT OLD.institution_id, 'group',
    CASE k.kind WHEN 'd' THEN 'd:' || r.day ELSE 'm:' || substr(r.day, 1, 7) || '-01' END AS period,
    OLD.group_name, -sum(r.attempts), -sum(r.seconds), -sum(r.xp),
    -sum(r.lessons_completed), -sum(r.courses_completed)
  FROM institution_activity_days r INDEXED BY institution_activity_days_user_idx, (SELECT 'd' AS kind UNION ALL SELECT 'm') k
  WHERE r.institution_id = OLD.institution_id AND r.user_id = OLD.user_id
  GROUP BY 3
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    attempts = attempts + excluded.attempts, seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  UPDATE institution_learner_courses SET groups =
    (SELECT coalesce(group_concat(group_name, char(31)), '') FROM (SELECT group_name FROM member_groups
      WHERE user_id = OLD.user_id AND +institution_id = OLD.institution_id ORDER BY group_name))
  WHERE institution_id = OLD.institution_id AND user_id = OLD.user_id;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT OLD.institution_id, '', 1 WHERE OLD.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
-- A membership row rewritten in place (no code does; a console might): leaving the old group, joining the new.
CREATE TRIGGER `member_groups_update_rollups`
AFTER UPDATE ON `member_groups`
BEGIN
  INSERT INTO institution_member_counts (institution_id, group_name, members)
  VALUES (OLD.institution_id, OLD.group_name, -1)
  ON CONFLICT (institution_id, group_name) DO UPDATE SET members = members + excluded.members;
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
  SELECT OLD.institution_id, 'group',
    CASE k.kind WHEN 'd' THEN 'd:' || r.day ELSE 'm:' || substr(r.day, 1, 7) || '-01' END AS period,
    OLD.group_name, -sum(r.attempts), -sum(r.seconds), -sum(r.xp),
    -sum(r.lessons_completed), -sum(r.courses_completed)
  FROM institution_activity_days r INDEXED BY institution_activity_days_user_idx, (SELECT 'd' AS kind UNION ALL SELECT 'm') k
  WHERE r.institution_id = OLD.institution_id AND r.user_id = OLD.user_id
  GROUP BY 3
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    attempts = attempts + excluded.attempts, seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  UPDATE institution_learner_courses SET groups =
    (SELECT coalesce(group_concat(group_name, char(31)), '') FROM (SELECT group_name FROM member_groups
      WHERE user_id = OLD.user_id AND +institution_id = OLD.institution_id ORDER BY group_name))
  WHERE institution_id = OLD.institution_id AND user_id = OLD.user_id;
  INSERT INTO institution_member_counts (institution_id, group_name, members)
  VALUES (NEW.institution_id, NEW.group_name, 1)
  ON CONFLICT (institution_id, group_name) DO UPDATE SET members = members + excluded.members;
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
  SELECT NEW.institution_id, 'group',
    CASE k.kind WHEN 'd' THEN 'd:' || r.day ELSE 'm:' || substr(r.day, 1, 7) || '-01' END AS period,
    NEW.group_name, sum(r.attempts), sum(r.seconds), sum(r.xp),
    sum(r.lessons_completed), sum(r.courses_completed)
  FROM institution_activity_days r INDEXED BY institution_activity_days_user_idx, (SELECT 'd' AS kind UNION ALL SELECT 'm') k
  WHERE r.institution_id = NEW.institution_id AND r.user_id = NEW.user_id
  GROUP BY 3
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    attempts = attempts + excluded.attempts, seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  UPDATE institution_learner_courses SET groups =
    (SELECT coalesce(group_concat(group_name, char(31)), '') FROM (SELECT group_name FROM member_groups
      WHERE user_id = NEW.user_id AND +institution_id = NEW.institution_id ORDER BY group_name))
  WHERE institution_id = NEW.institution_id AND user_id = NEW.user_id;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT NEW.institution_id, '', 1 WHERE NEW.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT OLD.institution_id, '', 1 WHERE OLD.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
-- Members now: a user counts for their institution (and as a learner with the learner role), and
-- their learner_stats levels for the CEFR distribution of its learners.
CREATE TRIGGER `users_insert_rollups`
AFTER INSERT ON `users`
WHEN NEW.institution_id IS NOT NULL
BEGIN
  INSERT INTO institution_member_counts (institution_id, group_name, members, learners)
  SELECT NEW.institution_id, '', 1, (NEW.role = 'learner') WHERE NEW.institution_id IS NOT NULL
  ON CONFLICT (institution_id, group_name) DO UPDATE SET
    members = members + excluded.members, learners = learners + excluded.learners;
  INSERT INTO institution_cefr_counts (institution_id, skill, level, learners)
  SELECT NEW.institution_id, je.key, je.value, 1 FROM learner_stats ls, json_each(ls.cefr_levels) je
  WHERE ls.user_id = NEW.id AND NEW.role = 'learner' AND NEW.institution_id IS NOT NULL AND je.type = 'text'
  ON CONFLICT (institution_id, skill, level) DO UPDATE SET learners = learners + excluded.learners;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT NEW.institution_id, '', 1 WHERE NEW.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `users_delete_rollups`
AFTER DELETE ON `users`
WHEN OLD.institution_id IS NOT NULL
BEGIN
  INSERT INTO institution_member_counts (institution_id, group_name, members, learners)
  SELECT OLD.institution_id, '', -1, -(OLD.role = 'learner') WHERE OLD.institution_id IS NOT NULL
  ON CONFLICT (institution_id, group_name) DO UPDATE SET
    members = members + excluded.members, learners = learners + excluded.learners;
  INSERT INTO institution_cefr_counts (institution_id, skill, level, learners)
  SELECT OLD.institution_id, je.key, je.value, -1 FROM learner_stats ls, json_each(ls.cefr_levels) je
  WHERE ls.user_id = OLD.id AND OLD.role = 'learner' AND OLD.institution_id IS NOT NULL AND je.type = 'text'
  ON CONFLICT (institution_id, skill, level) DO UPDATE SET learners = learners + excluded.learners;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT OLD.institution_id, '', 1 WHERE OLD.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `users_update_rollups`
AFTER UPDATE OF institution_id, role ON `users`
WHEN OLD.institution_id IS NOT NEW.institution_id OR OLD.role IS NOT NEW.role
BEGIN
  INSERT INTO institution_member_counts (institution_id, group_name, members, learners)
  SELECT OLD.institution_id, '', -1, -(OLD.role = 'learner') WHERE OLD.institution_id IS NOT NULL
  ON CONFLICT (institution_id, group_name) DO UPDATE SET
    members = members + excluded.members, learners = learners + excluded.learners;
  INSERT INTO institution_cefr_counts (institution_id, skill, level, learners)
  SELECT OLD.institution_id, je.key, je.value, -1 FROM learner_stats ls, json_each(ls.cefr_levels) je
  WHERE ls.user_id = OLD.id AND OLD.role = 'learner' AND OLD.institution_id IS NOT NULL AND je.type = 'text'
  ON CONFLICT (institution_id, skill, level) DO UPDATE SET learners = learners + excluded.learners;
  INSERT INTO institution_member_counts (institution_id, group_name, members, learners)
  SELECT NEW.institution_id, '', 1, (NEW.role = 'learner') WHERE NEW.institution_id IS NOT NULL
  ON CONFLICT (institution_id, group_name) DO UPDATE SET
    members = members + excluded.members, learners = learners + excluded.learners;
  INSERT INTO institution_cefr_counts (institution_id, skill, level, learners)
  SELECT NEW.institution_id, je.key, je.value, 1 FROM learner_stats ls, json_each(ls.cefr_levels) je
  WHERE ls.user_id = NEW.id AND NEW.role = 'learner' AND NEW.institution_id IS NOT NULL AND je.type = 'text'
  ON CONFLICT (institution_id, skill, level) DO UPDATE SET learners = learners + excluded.learners;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT OLD.institution_id, '', 1 WHERE OLD.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT NEW.institution_id, '', 1 WHERE NEW.institution_id IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
-- A learner's levels: counted when they appear, moved when they change (a recording rewrites
-- learner_stats; the levels' text is compared, so an unchanged one costs nothing more).
CREATE TRIGGER `learner_stats_insert_rollups`
AFTER INSERT ON `learner_stats`
BEGIN
  INSERT INTO institution_cefr_counts (institution_id, skill, level, learners)
  SELECT u.institution_id, je.key, je.value, 1 FROM users u, json_each(NEW.cefr_levels) je
  WHERE u.id = NEW.user_id AND u.role = 'learner' AND u.institution_id IS NOT NULL AND je.type = 'text'
  ON CONFLICT (institution_id, skill, level) DO UPDATE SET learners = learners + excluded.learners;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT (SELECT institution_id FROM users WHERE id = NEW.user_id AND role = 'learner'), '', 1 WHERE (SELECT institution_id FROM users WHERE id = NEW.user_id AND role = 'learner') IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `learner_stats_update_rollups`
AFTER UPDATE OF cefr_levels ON `learner_stats`
WHEN OLD.cefr_levels IS NOT NEW.cefr_levels
BEGIN
  INSERT INTO institution_cefr_counts (institution_id, skill, level, learners)
  SELECT u.institution_id, je.key, je.value, -1 FROM users u, json_each(OLD.cefr_levels) je
  WHERE u.id = OLD.user_id AND u.role = 'learner' AND u.institution_id IS NOT NULL AND je.type = 'text'
  ON CONFLICT (institution_id, skill, level) DO UPDATE SET learners = learners + excluded.learners;
  INSERT INTO institution_cefr_counts (institution_id, skill, level, learners)
  SELECT u.institution_id, je.key, je.value, 1 FROM users u, json_each(NEW.cefr_levels) je
  WHERE u.id = NEW.user_id AND u.role = 'learner' AND u.institution_id IS NOT NULL AND je.type = 'text'
  ON CONFLICT (institution_id, skill, level) DO UPDATE SET learners = learners + excluded.learners;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT (SELECT institution_id FROM users WHERE id = NEW.user_id AND role = 'learner'), '', 1 WHERE (SELECT institution_id FROM users WHERE id = NEW.user_id AND role = 'learner') IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `learner_stats_delete_rollups`
AFTER DELETE ON `learner_stats`
BEGIN
  INSERT INTO institution_cefr_counts (institution_id, skill, level, learners)
  SELECT u.institution_id, je.key, je.value, -1 FROM users u, json_each(OLD.cefr_levels) je
  WHERE u.id = OLD.user_id AND u.role = 'learner' AND u.institution_id IS NOT NULL AND je.type = 'text'
  ON CONFLICT (institution_id, skill, level) DO UPDATE SET learners = learners + excluded.learners;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  SELECT (SELECT institution_id FROM users WHERE id = OLD.user_id AND role = 'learner'), '', 1 WHERE (SELECT institution_id FROM users WHERE id = OLD.user_id AND role = 'learner') IS NOT NULL
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
