CREATE TABLE `course_tags` (
	`course_id` text NOT NULL,
	`tag` text NOT NULL,
	PRIMARY KEY(`course_id`, `tag`),
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `course_tags_tag_idx` ON `course_tags` (`tag`,`course_id`);--> statement-breakpoint
CREATE TABLE `courses` (
	`id` text PRIMARY KEY NOT NULL,
	`slug` text NOT NULL,
	`title` text NOT NULL,
	`description` text NOT NULL,
	`target_language` text NOT NULL,
	`source_language` text NOT NULL,
	`cefr_from` text NOT NULL,
	`cefr_to` text NOT NULL,
	`published` integer DEFAULT false NOT NULL,
	`published_at` text,
	`lesson_count` integer DEFAULT 0 NOT NULL,
	`item_count` integer DEFAULT 0 NOT NULL,
	`estimated_minutes` integer DEFAULT 0 NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `courses_slug_unique` ON `courses` (`slug`);--> statement-breakpoint
CREATE INDEX `courses_published_title_idx` ON `courses` (`published`,`title`,`id`);--> statement-breakpoint
CREATE INDEX `courses_language_idx` ON `courses` (`target_language`,`title`,`id`);--> statement-breakpoint
CREATE TABLE `lessons` (
	`id` text PRIMARY KEY NOT NULL,
	`course_id` text NOT NULL,
	`position` integer NOT NULL,
	`title` text NOT NULL,
	`cefr_level` text NOT NULL,
	`objectives` text NOT NULL,
	`item_count` integer DEFAULT 0 NOT NULL,
	`estimated_minutes` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lessons_course_position_idx` ON `lessons` (`course_id`,`position`);--> statement-breakpoint
CREATE TABLE `training_items` (
	`id` text PRIMARY KEY NOT NULL,
	`training_id` text NOT NULL,
	`lesson_id` text NOT NULL,
	`course_id` text NOT NULL,
	`position` integer NOT NULL,
	`type` text NOT NULL,
	`skill` text NOT NULL,
	`cefr_level` text NOT NULL,
	`xp` integer NOT NULL,
	`content` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	FOREIGN KEY (`training_id`) REFERENCES `trainings`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `training_items_training_position_idx` ON `training_items` (`training_id`,`position`);--> statement-breakpoint
CREATE INDEX `training_items_type_idx` ON `training_items` (`type`,`id`);--> statement-breakpoint
CREATE INDEX `training_items_skill_idx` ON `training_items` (`skill`,`id`);--> statement-breakpoint
CREATE INDEX `training_items_level_idx` ON `training_items` (`cefr_level`,`id`);--> statement-breakpoint
CREATE TABLE `trainings` (
	`id` text PRIMARY KEY NOT NULL,
	`lesson_id` text NOT NULL,
	`course_id` text NOT NULL,
	`position` integer NOT NULL,
	`kind` text NOT NULL,
	`title` text NOT NULL,
	`item_count` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	FOREIGN KEY (`lesson_id`) REFERENCES `lessons`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`course_id`) REFERENCES `courses`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `trainings_lesson_position_idx` ON `trainings` (`lesson_id`,`position`);--> statement-breakpoint
CREATE TABLE `achievements` (
	`user_id` text NOT NULL,
	`code` text NOT NULL,
	`unlocked_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `code`)
);
--> statement-breakpoint
CREATE TABLE `attempts` (
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
);
--> statement-breakpoint
CREATE INDEX `attempts_user_time_idx` ON `attempts` (`user_id`,`occurred_at`,`id`);--> statement-breakpoint
CREATE INDEX `attempts_institution_time_idx` ON `attempts` (`institution_id`,`occurred_at`,`id`);--> statement-breakpoint
CREATE TABLE `course_progress` (
	`user_id` text NOT NULL,
	`course_id` text NOT NULL,
	`institution_id` text,
	`lessons_completed` integer NOT NULL,
	`lessons_total` integer NOT NULL,
	`items_done` integer NOT NULL,
	`xp` integer NOT NULL,
	`started_at` text NOT NULL,
	`completed_at` text,
	`last_activity_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `course_id`)
);
--> statement-breakpoint
CREATE INDEX `course_progress_institution_idx` ON `course_progress` (`institution_id`,`user_id`,`course_id`);--> statement-breakpoint
CREATE TABLE `daily_activity` (
	`user_id` text NOT NULL,
	`day` text NOT NULL,
	`attempts` integer NOT NULL,
	`items_completed` integer NOT NULL,
	`correct` integer NOT NULL,
	`xp` integer NOT NULL,
	`seconds` integer NOT NULL,
	PRIMARY KEY(`user_id`, `day`)
);
--> statement-breakpoint
CREATE TABLE `item_progress` (
	`user_id` text NOT NULL,
	`training_item_id` text NOT NULL,
	`lesson_id` text NOT NULL,
	`best_score` real NOT NULL,
	`attempts` integer NOT NULL,
	`completed_at` text,
	`last_attempt_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `training_item_id`)
);
--> statement-breakpoint
CREATE TABLE `learner_stats` (
	`user_id` text PRIMARY KEY NOT NULL,
	`institution_id` text,
	`xp_total` integer NOT NULL,
	`attempts` integer NOT NULL,
	`correct` integer NOT NULL,
	`seconds` integer NOT NULL,
	`items_completed` integer NOT NULL,
	`lessons_completed` integer NOT NULL,
	`courses_completed` integer NOT NULL,
	`perfect_lessons` integer NOT NULL,
	`current_streak` integer NOT NULL,
	`longest_streak` integer NOT NULL,
	`last_active_day` text,
	`cefr_levels` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `learner_stats_xp_idx` ON `learner_stats` (`xp_total`,`user_id`);--> statement-breakpoint
CREATE INDEX `learner_stats_active_idx` ON `learner_stats` (`last_active_day`);--> statement-breakpoint
CREATE TABLE `lesson_progress` (
	`user_id` text NOT NULL,
	`lesson_id` text NOT NULL,
	`course_id` text NOT NULL,
	`items_done` integer NOT NULL,
	`items_total` integer NOT NULL,
	`score_sum` real NOT NULL,
	`status` text NOT NULL,
	`started_at` text NOT NULL,
	`completed_at` text,
	`last_activity_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `lesson_id`)
);
--> statement-breakpoint
CREATE INDEX `lesson_progress_course_idx` ON `lesson_progress` (`user_id`,`course_id`);--> statement-breakpoint
CREATE TABLE `platform_counters` (
	`name` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `skill_evidence` (
	`user_id` text NOT NULL,
	`skill` text NOT NULL,
	`cefr_level` text NOT NULL,
	`attempts` integer NOT NULL,
	`correct` integer NOT NULL,
	`score_sum` real NOT NULL,
	PRIMARY KEY(`user_id`, `skill`, `cefr_level`)
);
--> statement-breakpoint
CREATE TABLE `study_time` (
	`user_id` text NOT NULL,
	`weekday` integer NOT NULL,
	`hour` integer NOT NULL,
	`seconds` integer NOT NULL,
	`attempts` integer NOT NULL,
	PRIMARY KEY(`user_id`, `weekday`, `hour`)
);
--> statement-breakpoint
CREATE TABLE `weekly_xp` (
	`week` text NOT NULL,
	`user_id` text NOT NULL,
	`xp` integer NOT NULL,
	PRIMARY KEY(`week`, `user_id`)
);
--> statement-breakpoint
CREATE INDEX `weekly_xp_rank_idx` ON `weekly_xp` (`week`,`xp`,`user_id`);--> statement-breakpoint
CREATE TABLE `outbox_events` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`institution_id` text,
	`user_id` text,
	`payload` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `outbox_events_institution_idx` ON `outbox_events` (`institution_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `outbox_events_created_idx` ON `outbox_events` (`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `users` ADD `leaderboard_opt_out` integer DEFAULT false NOT NULL;