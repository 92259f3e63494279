import { type CompletionsRow, completionsPageSql } from "../sql";
import { type ExportSource, keyBy } from "./source";

export const completions: ExportSource = {
  type: "completions",
  summary: "one row per completed lesson and per completed course",
  rangeColumn: "completed_at",
  order: "by `user_id`, then `course_id`; within a course its lessons by position, then the course itself",
  columns: [
    { name: "kind", description: "`lesson` or `course`." },
    { name: "user_id", description: "The learner." },
    { name: "user_email", description: "The learner's e-mail address." },
    { name: "user_name", description: "The learner's name." },
    { name: "course_id", description: "The course." },
    { name: "course_title", description: "The course's title." },
    { name: "lesson_id", description: "The lesson (empty on course rows)." },
    { name: "lesson_title", description: "The lesson's title (empty on course rows)." },
    { name: "started_at", description: "First attempt in the lesson or course." },
    { name: "completed_at", description: "When it was completed." },
    { name: "score", description: "Mean best score of the passed items, 0–1, three decimals." },
    { name: "xp", description: "XP earned in the course (course rows only)." },
  ],
  page(ctx, scope, after, limit) {
    return ctx.db.values<CompletionsRow>(completionsPageSql(scope, after, limit));
  },
  key: (row) => completionsKey(row),
};

/** The position within a course (lesson position, or sql.ts's COURSE_ROW) follows the visible cells. */
const completionsKey = keyBy(completions.columns, ["user_id", "course_id", "seq"], ["seq"]);
