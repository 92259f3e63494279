-- Rows written before updated_at existed: they were last changed when created, as far as anyone knows.
UPDATE `institutions` SET `updated_at` = `created_at` WHERE `updated_at` IS NULL;--> statement-breakpoint
UPDATE `users` SET `updated_at` = `created_at` WHERE `updated_at` IS NULL;
