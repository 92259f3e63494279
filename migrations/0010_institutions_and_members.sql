CREATE TABLE `member_groups` (
	`institution_id` text NOT NULL,
	`user_id` text NOT NULL,
	`group_name` text NOT NULL,
	PRIMARY KEY(`user_id`, `group_name`),
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `member_groups_institution_group_idx` ON `member_groups` (`institution_id`,`group_name`,`user_id`);--> statement-breakpoint
CREATE TABLE `bulk_job_rows` (
	`job_id` text NOT NULL,
	`line` integer NOT NULL,
	`email` text,
	`external_id` text,
	`outcome` text NOT NULL,
	`errors` text NOT NULL,
	`cells` text,
	`user_id` text,
	`invitation_sealed` text,
	PRIMARY KEY(`job_id`, `line`),
	FOREIGN KEY (`job_id`) REFERENCES `bulk_jobs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `bulk_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`uploaded_by` text NOT NULL,
	`uploader_role` text NOT NULL,
	`mode` text NOT NULL,
	`dry_run` integer NOT NULL,
	`force` integer DEFAULT false NOT NULL,
	`status` text NOT NULL,
	`header` text DEFAULT '[]' NOT NULL,
	`r2_key` text,
	`total_rows` integer NOT NULL,
	`next_row` integer DEFAULT 0 NOT NULL,
	`created` integer DEFAULT 0 NOT NULL,
	`updated` integer DEFAULT 0 NOT NULL,
	`unchanged` integer DEFAULT 0 NOT NULL,
	`suspended` integer DEFAULT 0 NOT NULL,
	`rejected` integer DEFAULT 0 NOT NULL,
	`error` text,
	`lease_id` text,
	`lease_until` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`heartbeat_at` integer NOT NULL,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`uploaded_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `bulk_jobs_institution_idx` ON `bulk_jobs` (`institution_id`,`created_at`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `bulk_jobs_one_active_idx` ON `bulk_jobs` (`institution_id`) WHERE status in ('queued', 'processing');--> statement-breakpoint
CREATE TABLE `invitations` (
	`user_id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` text NOT NULL,
	`accepted_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_token_hash_idx` ON `invitations` (`token_hash`);--> statement-breakpoint
ALTER TABLE `institutions` ADD `seats` integer;--> statement-breakpoint
ALTER TABLE `institutions` ADD `branding` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `institutions` ADD `locale` text DEFAULT 'en' NOT NULL;--> statement-breakpoint
ALTER TABLE `institutions` ADD `time_zone` text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE `institutions` ADD `updated_at` text;--> statement-breakpoint
ALTER TABLE `users` ADD `status` text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `external_id` text;--> statement-breakpoint
ALTER TABLE `users` ADD `updated_at` text;--> statement-breakpoint
ALTER TABLE `users` ADD `last_active_at` text;--> statement-breakpoint
CREATE UNIQUE INDEX `users_institution_external_id_idx` ON `users` (`institution_id`,`external_id`);