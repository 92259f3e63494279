-- Hand-added to the generated migration: the fill at the end. Each batch names its statements (in
-- the order they happened); every statement stored before keeps its own state (its batch's
-- log_status stays null).
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_xapi_statements` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`batch_id` text,
	`verb` text NOT NULL,
	`activity_id` text NOT NULL,
	`user_id` text NOT NULL,
	`occurred_at` text NOT NULL,
	`status` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`sent_at` text,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`endpoint_id`) REFERENCES `xapi_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_xapi_statements`("id", "endpoint_id", "batch_id", "verb", "activity_id", "user_id", "occurred_at", "status", "attempts", "last_error", "sent_at", "created_at", "completed_at") SELECT "id", "endpoint_id", "batch_id", "verb", "activity_id", "user_id", "occurred_at", "status", "attempts", "last_error", "sent_at", "created_at", "completed_at" FROM `xapi_statements`;--> statement-breakpoint
DROP TABLE `xapi_statements`;--> statement-breakpoint
ALTER TABLE `__new_xapi_statements` RENAME TO `xapi_statements`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `xapi_statements_endpoint_idx` ON `xapi_statements` (`endpoint_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `xapi_statements_batch_idx` ON `xapi_statements` (`batch_id`,`occurred_at`,`id`);--> statement-breakpoint
CREATE INDEX `xapi_statements_health_idx` ON `xapi_statements` (`endpoint_id`,`status`,`completed_at`) WHERE status IS NOT NULL;--> statement-breakpoint
ALTER TABLE `xapi_batches` ADD `statement_ids` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `xapi_batches` ADD `statement_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `xapi_batches` ADD `log_status` text;--> statement-breakpoint
ALTER TABLE `xapi_batches` ADD `log_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `xapi_batches` ADD `log_error` text;--> statement-breakpoint
CREATE INDEX `xapi_batches_log_idx` ON `xapi_batches` (`endpoint_id`,`log_status`,`completed_at`) WHERE log_status IS NOT NULL;--> statement-breakpoint
UPDATE `xapi_batches` SET
  `statement_ids` = (SELECT json_group_array(`id`) FROM (SELECT `s`.`id` FROM `xapi_statements` `s` WHERE `s`.`batch_id` = `xapi_batches`.`id` ORDER BY `s`.`occurred_at`, `s`.`id`)),
  `statement_count` = (SELECT count(*) FROM `xapi_statements` `s` WHERE `s`.`batch_id` = `xapi_batches`.`id`);
