CREATE TABLE `xp_rank_counts` (
	`period` text NOT NULL,
	`scope` text NOT NULL,
	`level` integer NOT NULL,
	`bucket` integer NOT NULL,
	`learners` integer NOT NULL,
	PRIMARY KEY(`period`, `scope`, `level`, `bucket`)
) WITHOUT ROWID;--> statement-breakpoint
-- Hand-added to the generated migration: WITHOUT ROWID above (the primary key is the only access path,
-- so a counter write touches one b-tree, not a table and its key index), and the backfill below from
-- learner_stats (period 'all') and weekly_xp (period = the week), on the platform board and on the
-- learner's institution's, with the base and levels of src/domains/progress/rank.ts (RANK_BASE = 16,
-- RANK_LEVELS = 8); buckets of 0 are not stored.
INSERT INTO `xp_rank_counts` (`period`, `scope`, `level`, `bucket`, `learners`)
SELECT p.period, CASE s.k WHEN 0 THEN 'platform' ELSE p.inst END, l.key, p.xp / l.value, count(*)
FROM (
  SELECT 'all' AS period, `institution_id` AS inst, `xp_total` AS xp FROM `learner_stats` WHERE `xp_total` > 0
  UNION ALL
  SELECT `week` AS period, `institution_id` AS inst, `xp` AS xp FROM `weekly_xp` WHERE `xp` > 0
) p
JOIN (SELECT 0 AS k UNION ALL SELECT 1) s
JOIN json_each('[1,16,256,4096,65536,1048576,16777216,268435456]') l ON p.xp >= l.value
WHERE s.k = 0 OR p.inst IS NOT NULL
GROUP BY 1, 2, 3, 4;
