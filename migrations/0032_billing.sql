CREATE TABLE `billing_accounts` (
	`institution_id` text PRIMARY KEY NOT NULL,
	`stripe_customer_id` text NOT NULL,
	`ever_subscribed` integer DEFAULT false NOT NULL,
	`subscription_id` text,
	`subscription_status` text,
	`price_id` text,
	`interval` text,
	`quantity` integer,
	`current_period_start` text,
	`current_period_end` text,
	`cancel_at_period_end` integer DEFAULT false NOT NULL,
	`canceled_at` text,
	`trial_start` text,
	`trial_end` text,
	`discount` text,
	`latest_invoice_status` text,
	`payment_method_on_file` integer DEFAULT false NOT NULL,
	`pending_promotion_code_id` text,
	`pending_promo_code` text,
	`synced_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) NOT NULL,
	`updated_at` text,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_accounts_stripe_customer_id_unique` ON `billing_accounts` (`stripe_customer_id`);--> statement-breakpoint
CREATE TABLE `stripe_events` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`institution_id` text,
	`received_at` text NOT NULL,
	`processed_at` text
);
