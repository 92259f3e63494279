-- Hand-written (drizzle does not model WITHOUT ROWID): the forwarding log packed per batch
-- (docs/design/xapi-forwarding.md, "The log packed per batch"). A statement no longer has a row while it
-- shares its batch's state: its id is one entry of xapi_statement_keys (unique per endpoint, the
-- batch that stored it), and its verb, activity, learner and time are one entry of its batch's
-- `entries`. Statements stored before keep their rows, each given the state it shared (so no batch of
-- before shares any more), every one of them keyed, and named by its batch's `entries` in the order the
-- batch named them: an open batch of before is still sent, its pending rows as they were.
CREATE TABLE `xapi_statement_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`batch_id` text NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `xapi_statement_keys` (`id`, `batch_id`) SELECT `id`, coalesce(`batch_id`, '') FROM `xapi_statements` ORDER BY `id`;--> statement-breakpoint
UPDATE `xapi_statements` SET
  `status` = coalesce((SELECT b.`log_status` FROM `xapi_batches` b WHERE b.`id` = `xapi_statements`.`batch_id`), 'pending'),
  `attempts` = coalesce((SELECT b.`log_attempts` FROM `xapi_batches` b WHERE b.`id` = `xapi_statements`.`batch_id`), `attempts`),
  `last_error` = (SELECT b.`log_error` FROM `xapi_batches` b WHERE b.`id` = `xapi_statements`.`batch_id`),
  `sent_at` = (SELECT b.`completed_at` FROM `xapi_batches` b WHERE b.`id` = `xapi_statements`.`batch_id` AND b.`log_status` = 'sent'),
  `completed_at` = (SELECT b.`completed_at` FROM `xapi_batches` b WHERE b.`id` = `xapi_statements`.`batch_id` AND b.`log_status` = 'sent')
  WHERE `status` IS NULL;--> statement-breakpoint
ALTER TABLE `xapi_batches` ADD `entries` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
UPDATE `xapi_batches` SET
  `entries` = (SELECT json_group_array(json_array(e.`id`, e.`verb`, e.`activity_id`, e.`user_id`, e.`occurred_at`)) FROM (
    SELECT s.`id`, s.`verb`, s.`activity_id`, s.`user_id`, s.`occurred_at` FROM json_each(`xapi_batches`.`statement_ids`) j
      JOIN `xapi_statements` s ON s.`id` = j.`value` AND s.`batch_id` = `xapi_batches`.`id` ORDER BY j.`key`) e),
  `statement_count` = (SELECT count(*) FROM json_each(`xapi_batches`.`statement_ids`) j
      JOIN `xapi_statements` s ON s.`id` = j.`value` AND s.`batch_id` = `xapi_batches`.`id`),
  `log_status` = NULL;--> statement-breakpoint
ALTER TABLE `xapi_batches` DROP COLUMN `statement_ids`;--> statement-breakpoint
DROP INDEX `xapi_batches_endpoint_idx`;--> statement-breakpoint
CREATE INDEX `xapi_batches_endpoint_idx` ON `xapi_batches` (`endpoint_id`,`created_at`,`id`);
