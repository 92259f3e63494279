ALTER TABLE `bulk_job_rows` ADD `cells` text;--> statement-breakpoint
ALTER TABLE `bulk_jobs` ADD `header` text DEFAULT '[]' NOT NULL;