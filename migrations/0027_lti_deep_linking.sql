ALTER TABLE `lti_launches` ADD `kind` text;--> statement-breakpoint
ALTER TABLE `lti_launches` ADD `deep_linking` text;--> statement-breakpoint
ALTER TABLE `lti_launches` ADD `deep_linking_responded_at` text;--> statement-breakpoint
-- Every launch accepted before deep linking was a resource-link launch.
UPDATE `lti_launches` SET `kind` = 'resource_link' WHERE `status` = 'succeeded';
