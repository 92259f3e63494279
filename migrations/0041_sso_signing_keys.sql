CREATE TABLE `sso_signing_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`current_slot` text,
	`public_jwk` text NOT NULL,
	`private_key_sealed` text NOT NULL,
	`created_at` text NOT NULL,
	`retired_at` text,
	`published_until` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sso_signing_keys_current_idx` ON `sso_signing_keys` (`institution_id`,`current_slot`);--> statement-breakpoint
CREATE INDEX `sso_signing_keys_institution_idx` ON `sso_signing_keys` (`institution_id`,`created_at`);