CREATE TABLE `export_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`requested_by` text NOT NULL,
	`type` text NOT NULL,
	`filters` text NOT NULL,
	`status` text NOT NULL,
	`row_count` integer,
	`byte_size` integer,
	`progress` integer DEFAULT 0 NOT NULL,
	`error` text,
	`r2_key` text NOT NULL,
	`upload_id` text,
	`part_size` integer,
	`parts` text NOT NULL,
	`cursor` text,
	`generation` integer DEFAULT 0 NOT NULL,
	`lease_id` text,
	`lease_until` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`heartbeat_at` integer NOT NULL,
	`created_at` text NOT NULL,
	`started_at` text,
	`completed_at` text,
	`expires_at` text,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`requested_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `export_jobs_institution_idx` ON `export_jobs` (`institution_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `export_jobs_status_idx` ON `export_jobs` (`status`,`expires_at`);