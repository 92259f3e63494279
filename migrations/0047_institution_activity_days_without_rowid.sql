-- Hand-written over the generated rebuild (drizzle does not model WITHOUT ROWID):
-- institution_activity_days is rebuilt as a WITHOUT ROWID table keyed by (institution, learner, day,
-- course) (docs/design/capacity.md, "Narrower progress rows"). Its rows were a rowid table and three
-- b-trees beside it: the key's automatic index on (institution, day, learner, course), which only
-- kept the key unique, institution_activity_days_user_idx on (institution, learner, day), which the
-- triggers and a group's analytics read, and the pair's index. The new key is the learner's index
-- with the course appended: the same columns as before, so the same rows are unique, and the rows now
-- sit in the b-tree that the readers of a learner's days seek. The learner's index is dropped; the
-- pair's index stays (in a WITHOUT ROWID table it holds the key's columns only).
--
-- The triggers that read the learner's index named it (INDEXED BY): the table's own two (dropped with
-- it) and member_groups' three are dropped first and created again, unchanged but for NOT INDEXED in
-- its place, which in a WITHOUT ROWID table reads the key's b-tree and never the pair's index. Every
-- row is copied in key order, before the triggers exist, so the copy changes no rollup; nothing
-- references the table.
DROP TRIGGER IF EXISTS `member_groups_delete_rollups`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `member_groups_insert_rollups`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `member_groups_update_rollups`;
--> statement-breakpoint
CREATE TABLE `__new_institution_activity_days` (
	`institution_id` text NOT NULL,
	`day` text NOT NULL,
	`user_id` text NOT NULL,
	`course_id` text NOT NULL,
	`attempts` integer NOT NULL,
	`seconds` integer NOT NULL,
	`xp` integer NOT NULL,
	`lessons_completed` integer NOT NULL,
	`courses_completed` integer NOT NULL,
	PRIMARY KEY(`institution_id`, `user_id`, `day`, `course_id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_institution_activity_days`("institution_id", "day", "user_id", "course_id", "attempts", "seconds", "xp", "lessons_completed", "courses_completed")
SELECT "institution_id", "day", "user_id", "course_id", "attempts", "seconds", "xp", "lessons_completed", "courses_completed"
FROM `institution_activity_days` ORDER BY "institution_id", "user_id", "day", "course_id";
--> statement-breakpoint
DROP TABLE `institution_activity_days`;
--> statement-breakpoint
ALTER TABLE `__new_institution_activity_days` RENAME TO `institution_activity_days`;
--> statement-breakpoint
CREATE INDEX `institution_activity_days_user_course_idx` ON `institution_activity_days` (`institution_id`,`user_id`,`course_id`,`day`);
--> statement-breakpoint
CREATE TRIGGER `institution_activity_days_insert_rollups`
AFTER INSERT ON `institution_activity_days`
BEGIN
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, learners, attempts, seconds, xp, lessons_completed, courses_completed)
  VALUES (NEW.institution_id, 'all', 'd:' || NEW.day, '',
    NOT EXISTS (SELECT 1 FROM institution_activity_days r NOT INDEXED
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
  WHERE NOT EXISTS (SELECT 1 FROM institution_activity_days r NOT INDEXED
    WHERE r.institution_id = NEW.institution_id AND r.user_id = NEW.user_id
      AND r.day >= p.first AND r.day <= date(p.first, '+6 days')
      AND NOT (r.day = NEW.day AND r.course_id = NEW.course_id))
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET learners = learners + 1;
  INSERT INTO institution_activity_totals (institution_id, scope, period, key, learners)
  SELECT NEW.institution_id, 'all', 'm:' || p.first, '', 1
  FROM (SELECT substr(NEW.day, 1, 7) || '-01' AS first) p
  WHERE NOT EXISTS (SELECT 1 FROM institution_activity_days r NOT INDEXED
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
--> statement-breakpoint
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
  FROM institution_activity_days r NOT INDEXED, (SELECT 'd' AS kind UNION ALL SELECT 'm') k
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
  FROM institution_activity_days r NOT INDEXED, (SELECT 'd' AS kind UNION ALL SELECT 'm') k
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
  FROM institution_activity_days r NOT INDEXED, (SELECT 'd' AS kind UNION ALL SELECT 'm') k
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
  FROM institution_activity_days r NOT INDEXED, (SELECT 'd' AS kind UNION ALL SELECT 'm') k
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
