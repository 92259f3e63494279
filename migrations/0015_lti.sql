CREATE TABLE `lti_access_tokens` (
	`consumer_id` text NOT NULL,
	`scope` text NOT NULL,
	`token_sealed` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`consumer_id`, `scope`),
	FOREIGN KEY (`consumer_id`) REFERENCES `lti_consumers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `lti_consumers` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text NOT NULL,
	`name` text NOT NULL,
	`issuer` text NOT NULL,
	`client_id` text NOT NULL,
	`deployment_ids` text NOT NULL,
	`auth_login_url` text NOT NULL,
	`auth_token_url` text NOT NULL,
	`jwks_url` text NOT NULL,
	`auth_token_audience` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`institution_id`) REFERENCES `institutions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lti_consumers_issuer_client_idx` ON `lti_consumers` (`issuer`,`client_id`);--> statement-breakpoint
CREATE INDEX `lti_consumers_institution_idx` ON `lti_consumers` (`institution_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `lti_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`current_slot` text,
	`public_jwk` text NOT NULL,
	`private_key_sealed` text NOT NULL,
	`created_at` text NOT NULL,
	`retired_at` text,
	`published_until` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lti_keys_current_slot_unique` ON `lti_keys` (`current_slot`);--> statement-breakpoint
CREATE TABLE `lti_launches` (
	`id` text PRIMARY KEY NOT NULL,
	`institution_id` text,
	`consumer_id` text,
	`status` text NOT NULL,
	`failure_reason` text,
	`failure_detail` text,
	`deployment_id` text,
	`message_type` text,
	`sub` text,
	`user_id` text,
	`roles` text,
	`context` text,
	`resource_link` text,
	`custom` text,
	`target_link_uri` text,
	`target_type` text,
	`target_id` text,
	`target_title` text,
	`ags` text,
	`nrps` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `lti_launches_institution_idx` ON `lti_launches` (`institution_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `lti_launches_target_idx` ON `lti_launches` (`user_id`,`target_type`,`target_id`) WHERE status = 'succeeded' AND ags IS NOT NULL;--> statement-breakpoint
CREATE TABLE `lti_passbacks` (
	`id` text PRIMARY KEY NOT NULL,
	`launch_id` text NOT NULL,
	`institution_id` text NOT NULL,
	`event_id` text,
	`score_given` real,
	`score_maximum` real,
	`score_fraction` real,
	`activity_progress` text NOT NULL,
	`grading_progress` text NOT NULL,
	`comment` text,
	`scored_at` text NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`claimed_until` integer,
	`platform_status` integer,
	`last_error` text,
	`response_body` text,
	`created_at` text NOT NULL,
	`sent_at` text,
	`completed_at` text,
	FOREIGN KEY (`launch_id`) REFERENCES `lti_launches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lti_passbacks_launch_event_idx` ON `lti_passbacks` (`launch_id`,`event_id`) WHERE event_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `lti_passbacks_launch_idx` ON `lti_passbacks` (`launch_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `lti_session_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`launch_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer
);
--> statement-breakpoint
CREATE TABLE `lti_states` (
	`state` text PRIMARY KEY NOT NULL,
	`nonce` text NOT NULL,
	`consumer_id` text NOT NULL,
	`browser_binding` text NOT NULL,
	`target_link_uri` text NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`consumer_id`) REFERENCES `lti_consumers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lti_states_nonce_unique` ON `lti_states` (`nonce`);--> statement-breakpoint
CREATE TABLE `lti_user_links` (
	`consumer_id` text NOT NULL,
	`sub` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`consumer_id`, `sub`),
	FOREIGN KEY (`consumer_id`) REFERENCES `lti_consumers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
