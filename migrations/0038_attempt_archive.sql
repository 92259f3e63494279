CREATE TABLE `attempt_archive_claims` (
	`institution_id` text NOT NULL,
	`day` text NOT NULL,
	`lease_id` text NOT NULL,
	`lease_until` integer NOT NULL,
	PRIMARY KEY(`institution_id`, `day`)
);
--> statement-breakpoint
CREATE TABLE `attempt_archive_files` (
	`institution_id` text NOT NULL,
	`day` text NOT NULL,
	`part` integer NOT NULL,
	`object_key` text NOT NULL,
	`schema_version` integer NOT NULL,
	`rows` integer NOT NULL,
	`bytes` integer NOT NULL,
	`sha256` text NOT NULL,
	`first_occurred_at` text NOT NULL,
	`first_id` text NOT NULL,
	`last_occurred_at` text NOT NULL,
	`last_id` text NOT NULL,
	`verified_at` text NOT NULL,
	PRIMARY KEY(`institution_id`, `day`, `part`)
);
