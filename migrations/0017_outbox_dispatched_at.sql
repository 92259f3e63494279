DROP INDEX `outbox_events_unpublished_idx`;--> statement-breakpoint
ALTER TABLE `outbox_events` ADD `dispatched_at` text;--> statement-breakpoint
CREATE INDEX `outbox_events_undispatched_idx` ON `outbox_events` (`created_at`) WHERE dispatched_at IS NULL;