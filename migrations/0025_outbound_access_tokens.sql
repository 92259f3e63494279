CREATE TABLE `outbound_access_tokens` (
	`holder` text NOT NULL,
	`scope` text NOT NULL,
	`version` integer NOT NULL,
	`token_sealed` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`holder`, `scope`)
);
