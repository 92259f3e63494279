CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`claimed_until` integer,
	`last_response_status` integer,
	`last_error` text,
	`redelivery_of` text,
	`created_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`event_id`) REFERENCES `outbox_events`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_event_webhook_idx` ON `webhook_deliveries` (`event_id`,`webhook_id`) WHERE redelivery_of IS NULL;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_open_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`) WHERE status IN ('pending', 'retrying');--> statement-breakpoint
CREATE TABLE `webhook_delivery_attempts` (
	`delivery_id` text NOT NULL,
	`number` integer NOT NULL,
	`started_at` text NOT NULL,
	`duration_ms` integer NOT NULL,
	`response_status` integer,
	`error` text,
	`response_body` text,
	PRIMARY KEY(`delivery_id`, `number`),
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`events` text NOT NULL,
	`enabled` integer NOT NULL,
	`disabled_reason` text,
	`disabled_at` text,
	`secret_sealed` text NOT NULL,
	`previous_secret_sealed` text,
	`previous_secret_expires_at` text,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`failing_since` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhooks_institution_idx` ON `webhooks` (`institution_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `outbox_events` ADD `fanned_out_at` text;--> statement-breakpoint
ALTER TABLE `outbox_events` ADD `requeued_at` integer;--> statement-breakpoint
CREATE INDEX `outbox_events_type_idx` ON `outbox_events` (`institution_id`,`type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `outbox_events_unpublished_idx` ON `outbox_events` (`created_at`) WHERE fanned_out_at IS NULL;--> statement-breakpoint
-- Events from before webhooks existed had nobody to go to: mark them published, or the sweep would
-- re-send the whole history to the fan-out queue.
UPDATE `outbox_events` SET `fanned_out_at` = `created_at` WHERE `fanned_out_at` IS NULL;
