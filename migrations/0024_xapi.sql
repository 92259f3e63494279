CREATE TABLE `xapi_backfills` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`since` text NOT NULL,
	`until` text NOT NULL,
	`status` text NOT NULL,
	`cursor` text,
	`statements_queued` integer DEFAULT 0 NOT NULL,
	`generation` integer DEFAULT 0 NOT NULL,
	`lease_id` text,
	`lease_until` integer,
	`heartbeat_at` integer NOT NULL,
	`error` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`endpoint_id`) REFERENCES `xapi_endpoints`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `xapi_backfills_endpoint_idx` ON `xapi_backfills` (`endpoint_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `xapi_batches` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`claimed_until` integer,
	`last_response_status` integer,
	`last_error` text,
	`last_error_code` text,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`endpoint_id`) REFERENCES `xapi_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `xapi_batches_endpoint_idx` ON `xapi_batches` (`endpoint_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `xapi_batches_open_idx` ON `xapi_batches` (`status`,`next_attempt_at`) WHERE status IN ('pending', 'retrying');--> statement-breakpoint
CREATE TABLE `xapi_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`name` text NOT NULL,
	`endpoint` text NOT NULL,
	`version` text NOT NULL,
	`auth_type` text NOT NULL,
	`username` text,
	`token_url` text,
	`client_id` text,
	`scope` text,
	`secret_sealed` text NOT NULL,
	`credentials_version` integer DEFAULT 1 NOT NULL,
	`activities` text NOT NULL,
	`actor_format` text DEFAULT 'account' NOT NULL,
	`enabled` integer NOT NULL,
	`last_success_at` text,
	`last_error_at` text,
	`last_error` text,
	`failing_since` text,
	`failing_notified_at` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `xapi_endpoints_institution_idx` ON `xapi_endpoints` (`institution_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `xapi_statements` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`batch_id` text,
	`verb` text NOT NULL,
	`activity_id` text NOT NULL,
	`user_id` text NOT NULL,
	`occurred_at` text NOT NULL,
	`body` text,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`sent_at` text,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`endpoint_id`) REFERENCES `xapi_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `xapi_statements_endpoint_idx` ON `xapi_statements` (`endpoint_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `xapi_statements_batch_idx` ON `xapi_statements` (`batch_id`);--> statement-breakpoint
CREATE INDEX `xapi_statements_health_idx` ON `xapi_statements` (`endpoint_id`,`status`,`completed_at`);