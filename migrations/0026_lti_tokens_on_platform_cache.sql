DROP TABLE `lti_access_tokens`;--> statement-breakpoint
ALTER TABLE `lti_consumers` ADD `credentials_version` integer DEFAULT 1 NOT NULL;