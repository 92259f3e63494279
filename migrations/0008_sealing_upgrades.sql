CREATE TABLE `sealing_upgrades` (
	`name` text PRIMARY KEY NOT NULL,
	`completed_at` text NOT NULL
);
