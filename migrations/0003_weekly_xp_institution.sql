ALTER TABLE `weekly_xp` ADD `institution_id` text;--> statement-breakpoint
-- Backfill from the learners' institutions (hand-added to the generated migration).
UPDATE `weekly_xp` SET `institution_id` = (SELECT `institution_id` FROM `users` WHERE `users`.`id` = `weekly_xp`.`user_id`);--> statement-breakpoint
CREATE INDEX `weekly_xp_institution_rank_idx` ON `weekly_xp` (`institution_id`,`week`,`xp`,`user_id`);
