PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_sso_domains` (
	`institution_id` text NOT NULL,
	`domain` text NOT NULL,
	`token` text DEFAULT (lower(hex(randomblob(16)))) NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`method` text,
	`verified_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	PRIMARY KEY(`institution_id`, `domain`)
);
--> statement-breakpoint
-- Claims made before verification existed start pending, each with a random token of its own (the column's default).
INSERT INTO `__new_sso_domains`("institution_id", "domain") SELECT "institution_id", "domain" FROM `sso_domains`;--> statement-breakpoint
DROP TABLE `sso_domains`;--> statement-breakpoint
ALTER TABLE `__new_sso_domains` RENAME TO `sso_domains`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `sso_domains_verified_idx` ON `sso_domains` (`domain`) WHERE status = 'verified';