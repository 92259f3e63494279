CREATE TABLE `saml_assertion_replays` (
	`institution_id` text NOT NULL,
	`assertion_id` text NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`institution_id`, `assertion_id`)
);
--> statement-breakpoint
CREATE INDEX `saml_assertion_replays_expiry_idx` ON `saml_assertion_replays` (`institution_id`,`expires_at`);