-- Numbers for learners, institutions and the catalogue (docs/design/capacity.md, "Integer keys"):
-- the rows kept for good carry them instead of the ids. Hand-written over the generated file.
--
-- Learners and institutions: `sequence × 128 + this database's index`, from `database_numbering`,
-- which the migration runners write before the migrations (scripts/database-index.mjs): the index
-- is not the same everywhere, the migrations are. The INSERT below fails (NOT NULL) where no runner
-- wrote it, so this migration never leaves a database without its index.
CREATE TABLE IF NOT EXISTS `database_numbering` (
	`id` integer PRIMARY KEY NOT NULL,
	`database_index` integer NOT NULL,
	`next_sequence` integer NOT NULL,
	CONSTRAINT "database_numbering_one_row" CHECK("database_numbering"."id" = 1),
	CONSTRAINT "database_numbering_index" CHECK("database_numbering"."database_index" BETWEEN 0 AND 127)
);
--> statement-breakpoint
INSERT INTO `database_numbering` (`id`, `database_index`, `next_sequence`)
SELECT 1, NULL, 0 WHERE NOT EXISTS (SELECT 1 FROM `database_numbering`);--> statement-breakpoint
ALTER TABLE `courses` ADD `number` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `courses_number_idx` ON `courses` (`number`);--> statement-breakpoint
ALTER TABLE `lessons` ADD `number` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `lessons_number_idx` ON `lessons` (`number`);--> statement-breakpoint
ALTER TABLE `training_items` ADD `number` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `training_items_number_idx` ON `training_items` (`number`);--> statement-breakpoint
ALTER TABLE `institutions` ADD `number` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `institutions_number_unique` ON `institutions` (`number`);--> statement-breakpoint
ALTER TABLE `users` ADD `number` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `users_number_unique` ON `users` (`number`);--> statement-breakpoint
-- The catalogue's rows get 1, 2, … in the order they were written (rowid), which is what the
-- trigger below gives a catalogue written the same way: every database loads the same catalogue in
-- the same order, and copies carry the number, so a number is the same row in every database.
UPDATE `courses` SET `number` = n.rn
FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS rn FROM `courses`) AS n
WHERE `courses`.rowid = n.r;--> statement-breakpoint
UPDATE `lessons` SET `number` = n.rn
FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS rn FROM `lessons`) AS n
WHERE `lessons`.rowid = n.r;--> statement-breakpoint
UPDATE `training_items` SET `number` = n.rn
FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS rn FROM `training_items`) AS n
WHERE `training_items`.rowid = n.r;--> statement-breakpoint
-- Existing institutions, then existing users, from the sequence; then the sequence past them.
UPDATE `institutions` SET `number` = (s.next_sequence + n.rn - 1) * 128 + s.database_index
FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS rn FROM `institutions`) AS n, `database_numbering` AS s
WHERE `institutions`.rowid = n.r;--> statement-breakpoint
UPDATE `database_numbering` SET `next_sequence` = `next_sequence` + (SELECT count(*) FROM `institutions`);--> statement-breakpoint
UPDATE `users` SET `number` = (s.next_sequence + n.rn - 1) * 128 + s.database_index
FROM (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS rn FROM `users`) AS n, `database_numbering` AS s
WHERE `users`.rowid = n.r;--> statement-breakpoint
UPDATE `database_numbering` SET `next_sequence` = `next_sequence` + (SELECT count(*) FROM `users`);--> statement-breakpoint
-- Allocation, inside the statement that inserts the row: concurrent creations get distinct numbers,
-- and every creator (members, invitations, bulk upload, SCIM, SSO, LTI, placement) gets one without
-- code of its own. A row inserted with its number (a move's copy) keeps it.
CREATE TRIGGER `users_number_allocate` AFTER INSERT ON `users` WHEN NEW.`number` IS NULL
BEGIN
  SELECT RAISE(ABORT, 'database_numbering: this database has no index')
  WHERE NOT EXISTS (SELECT 1 FROM `database_numbering`);
  UPDATE `database_numbering` SET `next_sequence` = `next_sequence` + 1 WHERE `id` = 1;
  UPDATE `users` SET `number` = (SELECT (`next_sequence` - 1) * 128 + `database_index` FROM `database_numbering` WHERE `id` = 1)
  WHERE rowid = NEW.rowid;
END;--> statement-breakpoint
CREATE TRIGGER `institutions_number_allocate` AFTER INSERT ON `institutions` WHEN NEW.`number` IS NULL
BEGIN
  SELECT RAISE(ABORT, 'database_numbering: this database has no index')
  WHERE NOT EXISTS (SELECT 1 FROM `database_numbering`);
  UPDATE `database_numbering` SET `next_sequence` = `next_sequence` + 1 WHERE `id` = 1;
  UPDATE `institutions` SET `number` = (SELECT (`next_sequence` - 1) * 128 + `database_index` FROM `database_numbering` WHERE `id` = 1)
  WHERE rowid = NEW.rowid;
END;--> statement-breakpoint
CREATE TRIGGER `courses_number_allocate` AFTER INSERT ON `courses` WHEN NEW.`number` IS NULL
BEGIN
  UPDATE `courses` SET `number` = (SELECT coalesce(max(`number`), 0) + 1 FROM `courses`) WHERE rowid = NEW.rowid;
END;--> statement-breakpoint
CREATE TRIGGER `lessons_number_allocate` AFTER INSERT ON `lessons` WHEN NEW.`number` IS NULL
BEGIN
  UPDATE `lessons` SET `number` = (SELECT coalesce(max(`number`), 0) + 1 FROM `lessons`) WHERE rowid = NEW.rowid;
END;--> statement-breakpoint
CREATE TRIGGER `training_items_number_allocate` AFTER INSERT ON `training_items` WHEN NEW.`number` IS NULL
BEGIN
  UPDATE `training_items` SET `number` = (SELECT coalesce(max(`number`), 0) + 1 FROM `training_items`) WHERE rowid = NEW.rowid;
END;--> statement-breakpoint
-- A number is never changed or taken away: the rows kept for good point at it.
CREATE TRIGGER `users_number_kept` BEFORE UPDATE OF `number` ON `users`
WHEN OLD.`number` IS NOT NULL AND NEW.`number` IS NOT OLD.`number`
BEGIN
  SELECT RAISE(ABORT, 'users.number never changes');
END;--> statement-breakpoint
CREATE TRIGGER `institutions_number_kept` BEFORE UPDATE OF `number` ON `institutions`
WHEN OLD.`number` IS NOT NULL AND NEW.`number` IS NOT OLD.`number`
BEGIN
  SELECT RAISE(ABORT, 'institutions.number never changes');
END;--> statement-breakpoint
CREATE TRIGGER `courses_number_kept` BEFORE UPDATE OF `number` ON `courses`
WHEN OLD.`number` IS NOT NULL AND NEW.`number` IS NOT OLD.`number`
BEGIN
  SELECT RAISE(ABORT, 'courses.number never changes');
END;--> statement-breakpoint
CREATE TRIGGER `lessons_number_kept` BEFORE UPDATE OF `number` ON `lessons`
WHEN OLD.`number` IS NOT NULL AND NEW.`number` IS NOT OLD.`number`
BEGIN
  SELECT RAISE(ABORT, 'lessons.number never changes');
END;--> statement-breakpoint
CREATE TRIGGER `training_items_number_kept` BEFORE UPDATE OF `number` ON `training_items`
WHEN OLD.`number` IS NOT NULL AND NEW.`number` IS NOT OLD.`number`
BEGIN
  SELECT RAISE(ABORT, 'training_items.number never changes');
END;
