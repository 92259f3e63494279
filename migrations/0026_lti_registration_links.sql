CREATE TABLE `lti_registration_links` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`secret_hash` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` integer NOT NULL,
	`claim_id` text,
	`claimed_until` integer,
	`used_at` integer,
	`consumer_id` text,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lti_registration_links_secret_hash_unique` ON `lti_registration_links` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `lti_registration_links_institution_idx` ON `lti_registration_links` (`institution_id`,`created_at`);