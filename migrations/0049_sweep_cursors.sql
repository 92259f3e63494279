CREATE TABLE `sweep_cursors` (
	`name` text PRIMARY KEY NOT NULL,
	`position` text NOT NULL,
	`updated_at` text NOT NULL
);
