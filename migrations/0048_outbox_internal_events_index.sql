-- The purge of internal events a day after their dispatch (INTERNAL_EVENT_RETENTION_MS, src/platform/events.ts):
-- partial, so it holds only the last day's internal events (docs/design/capacity.md, "The outbox").
CREATE INDEX `outbox_events_internal_idx` ON `outbox_events` (`created_at`) WHERE type = 'attempts.recorded';
