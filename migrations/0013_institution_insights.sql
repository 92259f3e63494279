CREATE TABLE `compliance_documents` (
	`institution_id` text NOT NULL,
	`type` text NOT NULL,
	`required` integer NOT NULL,
	`status` text NOT NULL,
	`signed_at` text,
	`expires_at` text,
	`document_url` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`institution_id`, `type`)
);
--> statement-breakpoint
CREATE TABLE `institution_activity_days` (
	`institution_id` text NOT NULL,
	`day` text NOT NULL,
	`user_id` text NOT NULL,
	`course_id` text NOT NULL,
	`attempts` integer NOT NULL,
	`seconds` integer NOT NULL,
	`xp` integer NOT NULL,
	`lessons_completed` integer NOT NULL,
	`courses_completed` integer NOT NULL,
	PRIMARY KEY(`institution_id`, `day`, `user_id`, `course_id`)
);
--> statement-breakpoint
CREATE INDEX `institution_activity_days_user_idx` ON `institution_activity_days` (`institution_id`,`user_id`,`day`);--> statement-breakpoint
CREATE TABLE `sso_connections` (
	`institution_id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`state` text NOT NULL,
	`enforced` integer DEFAULT false NOT NULL,
	`saml` text,
	`oidc` text,
	`client_secret_sealed` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sso_domains` (
	`domain` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sso_domains_institution_idx` ON `sso_domains` (`institution_id`,`domain`);