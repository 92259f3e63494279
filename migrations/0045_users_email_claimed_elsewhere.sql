-- An e-mail is unique across every database (docs/design/multi-database.md): a user of another
-- database is found by the e-mail's key in DB's directory_keys, claimed before that user is written.
-- In DB, a new or changed address that another institution's key claims is refused with the unique
-- constraint's own message, so every writer of users answers 409 email_taken as for a local
-- duplicate. In the other databases directory_keys is empty and these never fire. A key of the
-- user's own institution (an institution being moved away from DB) does not refuse.
CREATE TRIGGER `users_email_claimed_elsewhere_insert` BEFORE INSERT ON `users`
WHEN EXISTS (
  SELECT 1 FROM `directory_keys` WHERE `kind` = 'email' AND `key` = NEW.`email`
    AND `institution_id` IS NOT NEW.`institution_id`
)
BEGIN
  SELECT RAISE(ABORT, 'UNIQUE constraint failed: users.email');
END;
--> statement-breakpoint
CREATE TRIGGER `users_email_claimed_elsewhere_update` BEFORE UPDATE OF `email` ON `users`
WHEN NEW.`email` IS NOT OLD.`email` AND EXISTS (
  SELECT 1 FROM `directory_keys` WHERE `kind` = 'email' AND `key` = NEW.`email`
    AND `institution_id` IS NOT NEW.`institution_id`
)
BEGIN
  SELECT RAISE(ABORT, 'UNIQUE constraint failed: users.email');
END;
