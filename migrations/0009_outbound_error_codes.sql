ALTER TABLE `webhook_deliveries` ADD `last_error_code` text;--> statement-breakpoint
ALTER TABLE `webhook_delivery_attempts` ADD `error_code` text;