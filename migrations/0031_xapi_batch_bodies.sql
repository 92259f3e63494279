ALTER TABLE `xapi_batches` ADD `bodies` text;--> statement-breakpoint
UPDATE `xapi_batches` SET `bodies` = (SELECT json_group_array(json(s.`body`)) FROM `xapi_statements` s WHERE s.`batch_id` = `xapi_batches`.`id` AND s.`body` IS NOT NULL) WHERE `status` IN ('pending', 'retrying');--> statement-breakpoint
ALTER TABLE `xapi_statements` DROP COLUMN `body`;
