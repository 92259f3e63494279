-- Hand-written over the generated rebuild (drizzle does not model WITHOUT ROWID): item_progress and
-- daily_activity on numbers (docs/design/capacity.md, "Integer keys"). The learner is `users.number`
-- and the item `training_items.number` (migration …_numbers gave every row one) instead of their ids;
-- item_progress also loses `attempts` and `last_attempt_at`, which no statement read. Both stay
-- WITHOUT ROWID, copied in key order. A row whose learner or item has no number cannot be copied: its
-- NULL fails NOT NULL and the whole migration with it, rather than dropping the row. Nothing
-- references these tables and no trigger is defined on them.
CREATE TABLE `__new_item_progress` (
	`user_number` integer NOT NULL,
	`item_number` integer NOT NULL,
	`best_score` real NOT NULL,
	`completed_at` integer,
	PRIMARY KEY(`user_number`, `item_number`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_item_progress`("user_number", "item_number", "best_score", "completed_at")
SELECT u."number", i."number", p."best_score", p."completed_at"
FROM `item_progress` AS p
LEFT JOIN `users` AS u ON u."id" = p."user_id"
LEFT JOIN `training_items` AS i ON i."id" = p."training_item_id"
ORDER BY 1, 2;--> statement-breakpoint
DROP TABLE `item_progress`;--> statement-breakpoint
ALTER TABLE `__new_item_progress` RENAME TO `item_progress`;--> statement-breakpoint
CREATE TABLE `__new_daily_activity` (
	`user_number` integer NOT NULL,
	`day` text NOT NULL,
	`attempts` integer NOT NULL,
	`items_completed` integer NOT NULL,
	`correct` integer NOT NULL,
	`xp` integer NOT NULL,
	`seconds` integer NOT NULL,
	PRIMARY KEY(`user_number`, `day`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_daily_activity`("user_number", "day", "attempts", "items_completed", "correct", "xp", "seconds")
SELECT u."number", d."day", d."attempts", d."items_completed", d."correct", d."xp", d."seconds"
FROM `daily_activity` AS d
LEFT JOIN `users` AS u ON u."id" = d."user_id"
ORDER BY 1, 2;--> statement-breakpoint
DROP TABLE `daily_activity`;--> statement-breakpoint
ALTER TABLE `__new_daily_activity` RENAME TO `daily_activity`;
