-- A member's last activity is the last use of any of their tokens: D1 keeps it as the token gate
-- writes last_used_at (at most once a minute per token), so no request path writes users for it.
CREATE TRIGGER IF NOT EXISTS `api_tokens_last_used_touches_user`
AFTER UPDATE OF `last_used_at` ON `api_tokens`
WHEN NEW.`last_used_at` IS NOT NULL
BEGIN
  UPDATE `users` SET `last_active_at` = NEW.`last_used_at`
  WHERE `id` = NEW.`user_id` AND (`last_active_at` IS NULL OR `last_active_at` < NEW.`last_used_at`);
END;
