-- Rows written before updated_at existed: they were last changed when created, as far as anyone knows.
UPDATE `institutions` SET `updated_at` = `created_at` WHERE `updated_at` IS NULL;--> statement-breakpoint
UPDATE `users` SET `updated_at` = `created_at` WHERE `updated_at` IS NULL;--> statement-breakpoint
-- Last activity: the last use of any of the member's tokens.
UPDATE `users` SET `last_active_at` = (SELECT max(`last_used_at`) FROM `api_tokens` WHERE `api_tokens`.`user_id` = `users`.`id`)
WHERE `last_active_at` IS NULL;
