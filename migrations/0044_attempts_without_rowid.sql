-- Hand-written over the generated DROP INDEX (drizzle does not model WITHOUT ROWID): attempts rebuilt as
-- a WITHOUT ROWID table keyed by its id (docs/design/capacity.md, "Narrower attempt rows"). The row
-- lives in the primary key's b-tree, so the id's automatic index is gone, and so is
-- attempts_user_time_idx, which no statement reads. The id stays the primary key: a resent attempt and
-- an id of another learner are still found by one seek on it. Every row is copied, in id order (the
-- b-tree is written full); nothing references attempts, and no trigger is defined on it.
CREATE TABLE `__new_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`institution_id` text,
	`training_item_id` text NOT NULL,
	`lesson_id` text NOT NULL,
	`course_id` text NOT NULL,
	`skill` text NOT NULL,
	`cefr_level` text NOT NULL,
	`score` real NOT NULL,
	`correct` integer NOT NULL,
	`duration_seconds` integer NOT NULL,
	`occurred_at` text NOT NULL,
	`local_day` text NOT NULL,
	`xp_awarded` integer NOT NULL,
	`recorded_at` text NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_attempts` ("id", "user_id", "institution_id", "training_item_id", "lesson_id", "course_id", "skill", "cefr_level", "score", "correct", "duration_seconds", "occurred_at", "local_day", "xp_awarded", "recorded_at")
SELECT "id", "user_id", "institution_id", "training_item_id", "lesson_id", "course_id", "skill", "cefr_level", "score", "correct", "duration_seconds", "occurred_at", "local_day", "xp_awarded", "recorded_at"
FROM `attempts` ORDER BY "id";--> statement-breakpoint
DROP TABLE `attempts`;--> statement-breakpoint
ALTER TABLE `__new_attempts` RENAME TO `attempts`;--> statement-breakpoint
CREATE INDEX `attempts_institution_time_idx` ON `attempts` (`institution_id`,`occurred_at`,`id`);
