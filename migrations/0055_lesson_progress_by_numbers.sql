-- Hand-written over the generated rebuild (drizzle does not model WITHOUT ROWID): lesson_progress on
-- numbers (docs/design/capacity.md, "Integer keys"). The learner is `users.number`, the lesson
-- `lessons.number` and its course `courses.number` (migration …_numbers gave every row one) instead of
-- their ids. The table becomes WITHOUT ROWID, copied in key order: the row sits in its key's b-tree
-- (learner, lesson), which needed an index of its own before; the course index (learner, course) stays.
-- A row whose learner, lesson or course has no number cannot be copied: its NULL fails NOT NULL and
-- the whole migration with it, rather than dropping the row. Nothing references the table and no
-- trigger is defined on it.
CREATE TABLE `__new_lesson_progress` (
	`user_number` integer NOT NULL,
	`lesson_number` integer NOT NULL,
	`course_number` integer NOT NULL,
	`items_done` integer NOT NULL,
	`items_total` integer NOT NULL,
	`score_sum` real NOT NULL,
	`status` text NOT NULL,
	`started_at` text NOT NULL,
	`completed_at` text,
	`last_activity_at` text NOT NULL,
	PRIMARY KEY(`user_number`, `lesson_number`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_lesson_progress`("user_number", "lesson_number", "course_number", "items_done", "items_total", "score_sum", "status", "started_at", "completed_at", "last_activity_at")
SELECT u."number", l."number", c."number", p."items_done", p."items_total", p."score_sum", p."status", p."started_at", p."completed_at", p."last_activity_at"
FROM `lesson_progress` AS p
LEFT JOIN `users` AS u ON u."id" = p."user_id"
LEFT JOIN `lessons` AS l ON l."id" = p."lesson_id"
LEFT JOIN `courses` AS c ON c."id" = p."course_id"
ORDER BY 1, 2;
--> statement-breakpoint
DROP TABLE `lesson_progress`;
--> statement-breakpoint
ALTER TABLE `__new_lesson_progress` RENAME TO `lesson_progress`;
--> statement-breakpoint
CREATE INDEX `lesson_progress_course_idx` ON `lesson_progress` (`user_number`,`course_number`);
