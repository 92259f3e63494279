-- Hand-written over the generated rebuild (drizzle does not model WITHOUT ROWID): the two per-learner
-- progress tables that only grow are rebuilt narrower (docs/design/capacity.md, "Narrower progress
-- rows"). Both become WITHOUT ROWID tables on the key they already had: the row lives in the key's
-- b-tree, so the key's automatic index is gone. Every row is copied in key order (the b-tree is
-- written full); nothing references these tables, and no trigger is defined on them.
--
-- item_progress also loses `lesson_id` (training_items has it; no statement reads it here), and its
-- two times become Unix seconds: the recording writes whole seconds ('YYYY-MM-DDTHH:MM:SSZ'), which
-- unixepoch() reads exactly.
CREATE TABLE `__new_item_progress` (
	`user_id` text NOT NULL,
	`training_item_id` text NOT NULL,
	`best_score` real NOT NULL,
	`attempts` integer NOT NULL,
	`completed_at` integer,
	`last_attempt_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `training_item_id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_item_progress`("user_id", "training_item_id", "best_score", "attempts", "completed_at", "last_attempt_at")
SELECT "user_id", "training_item_id", "best_score", "attempts", unixepoch("completed_at"), unixepoch("last_attempt_at")
FROM `item_progress` ORDER BY "user_id", "training_item_id";--> statement-breakpoint
DROP TABLE `item_progress`;--> statement-breakpoint
ALTER TABLE `__new_item_progress` RENAME TO `item_progress`;--> statement-breakpoint
CREATE TABLE `__new_daily_activity` (
	`user_id` text NOT NULL,
	`day` text NOT NULL,
	`attempts` integer NOT NULL,
	`items_completed` integer NOT NULL,
	`correct` integer NOT NULL,
	`xp` integer NOT NULL,
	`seconds` integer NOT NULL,
	PRIMARY KEY(`user_id`, `day`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_daily_activity`("user_id", "day", "attempts", "items_completed", "correct", "xp", "seconds")
SELECT "user_id", "day", "attempts", "items_completed", "correct", "xp", "seconds"
FROM `daily_activity` ORDER BY "user_id", "day";--> statement-breakpoint
DROP TABLE `daily_activity`;--> statement-breakpoint
ALTER TABLE `__new_daily_activity` RENAME TO `daily_activity`;
