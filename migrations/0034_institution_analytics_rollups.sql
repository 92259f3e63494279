CREATE TABLE `institution_activity_totals` (
	`institution_id` text NOT NULL,
	`scope` text NOT NULL,
	`period` text NOT NULL,
	`key` text NOT NULL,
	`learners` integer DEFAULT 0 NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`seconds` integer DEFAULT 0 NOT NULL,
	`xp` integer DEFAULT 0 NOT NULL,
	`lessons_completed` integer DEFAULT 0 NOT NULL,
	`courses_completed` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`institution_id`, `scope`, `period`, `key`)
);
--> statement-breakpoint
CREATE TABLE `institution_analytics_revisions` (
	`institution_id` text NOT NULL,
	`month` text NOT NULL,
	`revision` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`institution_id`, `month`)
);
--> statement-breakpoint
CREATE TABLE `institution_cefr_counts` (
	`institution_id` text NOT NULL,
	`skill` text NOT NULL,
	`level` text NOT NULL,
	`learners` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`institution_id`, `skill`, `level`)
);
--> statement-breakpoint
CREATE TABLE `institution_learner_courses` (
	`institution_id` text NOT NULL,
	`user_id` text NOT NULL,
	`course_id` text NOT NULL,
	`first_day` text NOT NULL,
	`last_day` text NOT NULL,
	`groups` text DEFAULT '' NOT NULL,
	PRIMARY KEY(`institution_id`, `user_id`, `course_id`)
);
--> statement-breakpoint
CREATE TABLE `institution_member_counts` (
	`institution_id` text NOT NULL,
	`group_name` text NOT NULL,
	`members` integer DEFAULT 0 NOT NULL,
	`learners` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`institution_id`, `group_name`)
);
--> statement-breakpoint
CREATE INDEX `institution_activity_days_user_course_idx` ON `institution_activity_days` (`institution_id`,`user_id`,`course_id`,`day`);