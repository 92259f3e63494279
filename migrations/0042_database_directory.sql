CREATE TABLE `directory_keys` (
	`kind` text NOT NULL,
	`key` text NOT NULL,
	`institution_id` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`kind`, `key`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `institution_databases` (
	`institution_id` text PRIMARY KEY NOT NULL,
	`binding` text NOT NULL,
	`epoch` integer DEFAULT 0 NOT NULL,
	`state` text DEFAULT 'active' NOT NULL,
	`updated_at` text NOT NULL
);
