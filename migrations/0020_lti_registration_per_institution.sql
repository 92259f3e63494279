DROP INDEX `lti_consumers_issuer_client_idx`;--> statement-breakpoint
CREATE UNIQUE INDEX `lti_consumers_institution_issuer_client_idx` ON `lti_consumers` (`institution_id`,`issuer`,`client_id`);--> statement-breakpoint
CREATE INDEX `lti_consumers_issuer_client_idx` ON `lti_consumers` (`issuer`,`client_id`);