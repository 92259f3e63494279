import { sql } from "drizzle-orm";
import type { Cell } from "../csv";
import { type ExportSource, keyBy, membersFilter, rangeFilter, where } from "./source";

export const learnerProgress: ExportSource = {
  type: "learner_progress",
  summary: "one row per learner and course the learner has started",
  rangeColumn: "last_activity_at",
  order: "by `user_id`, then `course_id`",
  columns: [
    { name: "user_id", description: "The learner." },
    { name: "user_email", description: "The learner's e-mail address." },
    { name: "user_name", description: "The learner's name." },
    { name: "course_id", description: "The course." },
    { name: "course_title", description: "The course's title." },
    { name: "progress_percent", description: "Items done of the course's items, 0–100, rounded." },
    { name: "lessons_completed", description: "Lessons of the course completed." },
    { name: "lessons_total", description: "Lessons in the course." },
    { name: "items_done", description: "Training items passed." },
    { name: "items_total", description: "Training items in the course." },
    { name: "xp", description: "XP earned in the course." },
    { name: "cefr_level", description: "The learner's overall CEFR level (empty before A1)." },
    { name: "started_at", description: "First attempt in the course." },
    { name: "completed_at", description: "When the last lesson was completed (empty if not yet)." },
    { name: "last_activity_at", description: "Latest attempt in the course." },
  ],
  page(db, scope, after, limit) {
    const { filters } = scope;
    return db.values<Cell[]>(sql`
      SELECT cp.user_id, u.email, u.name, cp.course_id, c.title,
             CASE WHEN c.item_count > 0 THEN CAST(round(min(cp.items_done, c.item_count) * 100.0 / c.item_count) AS INTEGER) ELSE 0 END,
             cp.lessons_completed, cp.lessons_total, cp.items_done, c.item_count, cp.xp,
             json_extract(ls.cefr_levels, '$.overall'), cp.started_at, cp.completed_at, cp.last_activity_at
      FROM course_progress cp
      LEFT JOIN users u ON u.id = cp.user_id
      LEFT JOIN courses c ON c.id = cp.course_id
      LEFT JOIN learner_stats ls ON ls.user_id = cp.user_id
      WHERE ${where([
        sql`cp.institution_id = ${scope.institutionId}`,
        ...rangeFilter(sql`cp.last_activity_at`, filters),
        filters.course_id ? sql`cp.course_id = ${filters.course_id}` : undefined,
        membersFilter(sql`cp.user_id`, filters),
        after ? sql`(cp.user_id, cp.course_id) > (${after[0]}, ${after[1]})` : undefined,
      ])}
      ORDER BY cp.user_id, cp.course_id
      LIMIT ${limit}`);
  },
  key: (row) => learnerProgressKey(row),
};

const learnerProgressKey = keyBy(learnerProgress.columns, ["user_id", "course_id"]);
