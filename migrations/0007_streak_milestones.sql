ALTER TABLE `learner_stats` ADD `streak_milestones` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
-- Hand-added backfill: before this column, a milestone was announced only when the run reached it on the
-- learner's today, and which ones were announced is not recorded anywhere that outlives the outbox's 30
-- days. Every milestone the stored latest run has reached counts as announced for that run (dated by its
-- last active day, which lies within it), so existing streaks never announce one twice; those the old
-- rule missed stay unannounced for that run.
UPDATE `learner_stats` SET `streak_milestones` = (
  SELECT json_group_object(CAST(m.value AS TEXT), `learner_stats`.`last_active_day`)
  FROM json_each('[3,7,14,30,60,100,365]') m
  WHERE m.value <= `learner_stats`.`current_streak`
)
WHERE `current_streak` >= 3 AND `last_active_day` IS NOT NULL;
