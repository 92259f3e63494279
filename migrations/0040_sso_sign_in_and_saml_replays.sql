CREATE TABLE `saml_assertion_replays` (
	`institution_id` text NOT NULL,
	`assertion_id` text NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`institution_id`, `assertion_id`)
);
--> statement-breakpoint
CREATE INDEX `saml_assertion_replays_expiry_idx` ON `saml_assertion_replays` (`institution_id`,`expires_at`);--> statement-breakpoint
CREATE TABLE `sso_identities` (
	`institution_id` text NOT NULL,
	`subject` text NOT NULL,
	`user_id` text NOT NULL,
	`protocol` text NOT NULL,
	`created_at` text NOT NULL,
	`last_sign_in_at` text NOT NULL,
	PRIMARY KEY(`institution_id`, `subject`)
);
--> statement-breakpoint
CREATE INDEX `sso_identities_user_idx` ON `sso_identities` (`user_id`);--> statement-breakpoint
CREATE TABLE `sso_requests` (
	`state` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`protocol` text NOT NULL,
	`browser_binding_hash` text NOT NULL,
	`nonce` text NOT NULL,
	`code_verifier` text,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sso_requests_expires_idx` ON `sso_requests` (`expires_at`);--> statement-breakpoint
CREATE TABLE `sso_session_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`institution_id` text NOT NULL,
	`sign_in_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer
);
--> statement-breakpoint
CREATE TABLE `sso_sign_ins` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`protocol` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`detail` text,
	`subject` text,
	`email` text,
	`user_id` text,
	`provisioned` integer DEFAULT false NOT NULL,
	`request_id` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sso_sign_ins_institution_idx` ON `sso_sign_ins` (`institution_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `break_glass_user_id` text;--> statement-breakpoint
ALTER TABLE `sso_connections` ADD `mapping_may_grant_admin` integer DEFAULT false NOT NULL;