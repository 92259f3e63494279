CREATE TABLE `institution_moves` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`source` text NOT NULL,
	`target` text NOT NULL,
	`state` text NOT NULL,
	`cursor` text,
	`progress` text NOT NULL,
	`frozen_at` integer,
	`switched_at` integer,
	`generation` integer DEFAULT 0 NOT NULL,
	`lease_id` text,
	`lease_until` integer,
	`heartbeat_at` integer NOT NULL,
	`error` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`completed_at` text
);
--> statement-breakpoint
CREATE INDEX `institution_moves_institution_idx` ON `institution_moves` (`institution_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `institution_moves_one_active_idx` ON `institution_moves` (`institution_id`) WHERE state IN ('queued', 'copying', 'switching', 'deleting');