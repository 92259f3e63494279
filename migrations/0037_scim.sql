CREATE TABLE `scim_groups` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`display_name` text NOT NULL,
	`external_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `scim_groups_institution_name_idx` ON `scim_groups` (`institution_id`,`display_name`);--> statement-breakpoint
CREATE UNIQUE INDEX `scim_groups_institution_external_id_idx` ON `scim_groups` (`institution_id`,`external_id`);--> statement-breakpoint
CREATE TABLE `scim_settings` (
	`institution_id` text PRIMARY KEY NOT NULL,
	`department_as_group` integer DEFAULT false NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `scim_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`prefix` text NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`last_used_at` text,
	`revoked_at` text,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `scim_tokens_token_hash_unique` ON `scim_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `scim_tokens_institution_idx` ON `scim_tokens` (`institution_id`,`revoked_at`,`created_at`);--> statement-breakpoint
CREATE TABLE `scim_user_attributes` (
	`user_id` text NOT NULL,
	`institution_id` text NOT NULL,
	`given_name` text,
	`family_name` text,
	`emails` text,
	`department` text,
	`removed_at` text,
	PRIMARY KEY(`user_id`, `institution_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action
);
