-- Hand-written over the generated rebuild (drizzle does not model WITHOUT ROWID):
-- institution_activity_days on numbers (docs/design/capacity.md, "Integer keys"). The institution is
-- `institutions.number`, the learner `users.number` and the course `courses.number` (migration
-- …_numbers gave every row one) instead of their ids. It stays WITHOUT ROWID, keyed (institution,
-- learner, day, course), with its pair index (institution, learner, course, day), copied in key order.
-- A row whose institution, learner or course has no number cannot be copied: its NULL fails NOT NULL
-- and the whole migration with it, rather than dropping the row. Nothing references the table.
--
-- The triggers that read it are dropped first and created again (as 0047 did): its own two go with
-- the table; member_groups' three are dropped here. They are the same but for the numbers: the
-- rollups they write (institution_activity_totals, institution_learner_courses,
-- institution_analytics_revisions) keep ids, so a trigger of institution_activity_days finds the ids
-- of its row's numbers, and one of member_groups the numbers of its row's ids, each a seek on a unique
-- index (`users_number_unique`, `institutions_number_unique`, `courses_number_idx`) or a key. A number
-- without its row gives a NULL id, which fails the rollup's NOT NULL: the recording fails loudly rather
-- than counting nowhere. `NOT INDEXED` stays: it reads the key's b-tree, never the pair index. The
-- rows are copied before the triggers exist, so the copy changes no rollup.
DROP TRIGGER IF EXISTS `member_groups_delete_rollups`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `member_groups_insert_rollups`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `member_groups_update_rollups`;
--> statement-breakpoint
CREATE TABLE `__new_institution_activity_days` (
	`institution_number` integer NOT NULL,
	`day` text NOT NULL,
	`user_number` integer NOT NULL,
	`course_number` integer NOT NULL,
	`attempts` integer NOT NULL,
	`seconds` integer NOT NULL,
	`xp` integer NOT NULL,
	`lessons_completed` integer NOT NULL,
	`courses_completed` integer NOT NULL,
	PRIMARY KEY(`institution_number`, `user_number`, `day`, `course_number`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_institution_activity_days`("institution_number", "day", "user_number", "course_number", "attempts", "seconds", "xp", "lessons_completed", "courses_completed")
SELECT i."number", r."day", u."number", c."number", r."attempts", r."seconds", r."xp", r."lessons_completed", r."courses_completed"
FROM `institution_activity_days` AS r
LEFT JOIN `institutions` AS i ON i."id" = r."institution_id"
LEFT JOIN `users` AS u ON u."id" = r."user_id"
LEFT JOIN `courses` AS c ON c."id" = r."course_id"
ORDER BY 1, 3, 2, 4;
--> statement-breakpoint
DROP TABLE `institution_activity_days`;
--> statement-breakpoint
ALTER TABLE `__new_institution_activity_days` RENAME TO `institution_activity_days`;
--> statement-breakpoint
CREATE INDEX `institution_activity_days_user_course_idx` ON `institution_activity_days` (`institution_number`,`user_number`,`course_number`,`day`);
--> statement-breakpoint
CREATE TRIGGER `institution_activity_days_insert_rollups`
AFTER INSERT ON `institution_activity_days`
BEGIN
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, learners, attempts, seconds, xp, lessons_completed, courses_completed)
  VALUES ((SELECT id FROM institutions WHERE number = NEW.institution_number), 'all', 'd:' || NEW.day, '',
    NOT EXISTS (SELECT 1 FROM institution_activity_days r NOT INDEXED
      WHERE r.institution_number = NEW.institution_number AND r.user_number = NEW.user_number AND r.day = NEW.day
        AND r.course_number <> NEW.course_number),
    NEW.attempts, NEW.seconds, NEW.xp, NEW.lessons_completed, NEW.courses_completed)
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    learners = learners + excluded.learners, attempts = attempts + excluded.attempts,
    seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  INSERT INTO institution_activity_totals (institution_id, scope, period, key, learners)
  SELECT (SELECT id FROM institutions WHERE number = NEW.institution_number), 'all', 'w:' || p.first, '', 1
  FROM (SELECT date(NEW.day, '-' || ((CAST(strftime('%w', NEW.day) AS INTEGER) + 6) % 7) || ' days') AS first) p
  WHERE NOT EXISTS (SELECT 1 FROM institution_activity_days r NOT INDEXED
    WHERE r.institution_number = NEW.institution_number AND r.user_number = NEW.user_number
      AND r.day >= p.first AND r.day <= date(p.first, '+6 days')
      AND NOT (r.day = NEW.day AND r.course_number = NEW.course_number))
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET learners = learners + 1;
  INSERT INTO institution_activity_totals (institution_id, scope, period, key, learners)
  SELECT (SELECT id FROM institutions WHERE number = NEW.institution_number), 'all', 'm:' || p.first, '', 1
  FROM (SELECT substr(NEW.day, 1, 7) || '-01' AS first) p
  WHERE NOT EXISTS (SELECT 1 FROM institution_activity_days r NOT INDEXED
    WHERE r.institution_number = NEW.institution_number AND r.user_number = NEW.user_number
      AND r.day >= p.first AND r.day <= date(p.first, '+1 month', '-1 day')
      AND NOT (r.day = NEW.day AND r.course_number = NEW.course_number))
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET learners = learners + 1;
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
  SELECT (SELECT id FROM institutions WHERE number = NEW.institution_number), s.scope, p.period, s.key,
    NEW.attempts, NEW.seconds, NEW.xp, NEW.lessons_completed, NEW.courses_completed
  FROM (SELECT 'course' AS scope, (SELECT id FROM courses WHERE number = NEW.course_number) AS key
        UNION ALL
        SELECT 'group', group_name FROM member_groups
        WHERE user_id = (SELECT id FROM users WHERE number = NEW.user_number)
          AND +institution_id = (SELECT id FROM institutions WHERE number = NEW.institution_number)) s,
       (SELECT 'd:' || NEW.day AS period UNION ALL SELECT 'm:' || substr(NEW.day, 1, 7) || '-01') p
  WHERE true
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    attempts = attempts + excluded.attempts, seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  INSERT INTO institution_learner_courses (institution_id, user_id, course_id, first_day, last_day, groups)
  SELECT k.institution_id, k.user_id, (SELECT id FROM courses WHERE number = NEW.course_number), NEW.day, NEW.day,
    (SELECT coalesce(group_concat(group_name, char(31)), '') FROM (SELECT group_name FROM member_groups
      WHERE user_id = k.user_id AND +institution_id = k.institution_id ORDER BY group_name))
  FROM (SELECT (SELECT id FROM institutions WHERE number = NEW.institution_number) AS institution_id,
    (SELECT id FROM users WHERE number = NEW.user_number) AS user_id) k
  WHERE true
  ON CONFLICT (institution_id, user_id, course_id) DO UPDATE SET
    first_day = min(first_day, excluded.first_day), last_day = max(last_day, excluded.last_day);
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  VALUES ((SELECT id FROM institutions WHERE number = NEW.institution_number), substr(NEW.day, 1, 7), 1)
  ON CONFLICT (institution_id, month) DO UPDATE SET revision = revision + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `institution_activity_days_update_rollups`
AFTER UPDATE ON `institution_activity_days`
BEGIN
  INSERT INTO institution_activity_totals
    (institution_id, scope, period, key, attempts, seconds, xp, lessons_completed, courses_completed)
  SELECT (SELECT id FROM institutions WHERE number = NEW.institution_number), s.scope, s.period, s.key,
    NEW.attempts - OLD.attempts, NEW.seconds - OLD.seconds, NEW.xp - OLD.xp,
    NEW.lessons_completed - OLD.lessons_completed, NEW.courses_completed - OLD.courses_completed
  FROM (SELECT 'all' AS scope, 'd:' || NEW.day AS period, '' AS key
        UNION ALL SELECT 'course', 'd:' || NEW.day, (SELECT id FROM courses WHERE number = NEW.course_number)
        UNION ALL SELECT 'course', 'm:' || substr(NEW.day, 1, 7) || '-01', (SELECT id FROM courses WHERE number = NEW.course_number)
        UNION ALL SELECT 'group', p.period, mg.group_name FROM member_groups mg,
          (SELECT 'd:' || NEW.day AS period UNION ALL SELECT 'm:' || substr(NEW.day, 1, 7) || '-01') p
          WHERE mg.user_id = (SELECT id FROM users WHERE number = NEW.user_number)
            AND +mg.institution_id = (SELECT id FROM institutions WHERE number = NEW.institution_number)) s
  WHERE true
  ON CONFLICT (institution_id, scope, period, key) DO UPDATE SET
    attempts = attempts + excluded.attempts, seconds = seconds + excluded.seconds, xp = xp + excluded.xp,
    lessons_completed = lessons_completed + excluded.lessons_completed,
    courses_completed = courses_completed + excluded.courses_completed;
  INSERT INTO institution_analytics_revisions (institution_id, month, revision)
  VALUES ((SELECT id FROM institutions WHERE number = NEW.institution_number), substr(NEW.day, 1, 7), 1)
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
  WHERE r.institution_number = (SELECT number FROM institutions WHERE id = OLD.institution_id)
    AND r.user_number = (SELECT number FROM users WHERE id = OLD.user_id)
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
  WHERE r.institution_number = (SELECT number FROM institutions WHERE id = NEW.institution_id)
    AND r.user_number = (SELECT number FROM users WHERE id = NEW.user_id)
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
  WHERE r.institution_number = (SELECT number FROM institutions WHERE id = OLD.institution_id)
    AND r.user_number = (SELECT number FROM users WHERE id = OLD.user_id)
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
  WHERE r.institution_number = (SELECT number FROM institutions WHERE id = NEW.institution_id)
    AND r.user_number = (SELECT number FROM users WHERE id = NEW.user_id)
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
