DROP TABLE `sealing_upgrades`;--> statement-breakpoint
ALTER TABLE `bulk_job_rows` DROP COLUMN `invitation_sealed`;