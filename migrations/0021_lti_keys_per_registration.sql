-- Signing keys per registration (lti_keys.consumer_id). The platform-wide keys go: no release has
-- shipped with them, and no registration may sign with a key another one publishes.
DROP TABLE `lti_keys`;--> statement-breakpoint
CREATE TABLE `lti_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`consumer_id` text NOT NULL,
	`current_slot` text,
	`public_jwk` text NOT NULL,
	`private_key_sealed` text NOT NULL,
	`created_at` text NOT NULL,
	`retired_at` text,
	`published_until` text,
	FOREIGN KEY (`consumer_id`) REFERENCES `lti_consumers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lti_keys_consumer_current_idx` ON `lti_keys` (`consumer_id`,`current_slot`);--> statement-breakpoint
CREATE INDEX `lti_keys_consumer_idx` ON `lti_keys` (`consumer_id`,`created_at`);
--> statement-breakpoint
ALTER TABLE `lti_states` ADD `registration_bound` integer DEFAULT false NOT NULL;
