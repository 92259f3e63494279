import { type LearnerProgressRow, learnerProgressPageSql } from "../sql";
import { type ExportSource, keyBy } from "./source";

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
  page(ctx, scope, after, limit) {
    return ctx.db.values<LearnerProgressRow>(learnerProgressPageSql(scope, after, limit));
  },
  key: (row) => learnerProgressKey(row),
};

const learnerProgressKey = keyBy(learnerProgress.columns, ["user_id", "course_id"]);
