ALTER TABLE `lti_states` ADD `storage_target` text;--> statement-breakpoint
ALTER TABLE `lti_states` ADD `login_origin` text;