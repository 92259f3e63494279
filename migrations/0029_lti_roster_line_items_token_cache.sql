CREATE TABLE `lti_roster_syncs` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`launch_id` text NOT NULL,
	`status` text NOT NULL,
	`active_count` integer,
	`inactive_count` integer,
	`created_count` integer DEFAULT 0 NOT NULL,
	`already_linked_count` integer DEFAULT 0 NOT NULL,
	`seats_exhausted_count` integer DEFAULT 0 NOT NULL,
	`error` text,
	`generation` integer DEFAULT 0 NOT NULL,
	`lease_id` text,
	`lease_until` integer,
	`heartbeat_at` integer,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`launch_id`) REFERENCES `lti_launches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lti_roster_syncs_active_idx` ON `lti_roster_syncs` (`launch_id`) WHERE status IN ('queued', 'processing');--> statement-breakpoint
CREATE INDEX `lti_roster_syncs_launch_idx` ON `lti_roster_syncs` (`launch_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `lti_roster_syncs_lease_idx` ON `lti_roster_syncs` (`lease_until`) WHERE status IN ('queued', 'processing');--> statement-breakpoint
DROP TABLE `lti_access_tokens`;--> statement-breakpoint
ALTER TABLE `lti_consumers` ADD `credentials_version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `lti_passbacks` ADD `line_item_url` text;