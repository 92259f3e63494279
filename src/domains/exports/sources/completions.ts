import { type SQL, sql } from "drizzle-orm";
import type { Cell } from "../csv";
import { type ExportSource, keyBy, membersFilter, rangeFilter, where } from "./source";

/** Sorts after every lesson position: a course's own row follows its lessons. */
const COURSE_ROW = 2_147_483_647;

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
  page(db, scope, after, limit) {
    const { filters } = scope;
    // Both arms walk course_progress by (institution, user, course); the keyset condition is
    // written into each arm so that each is an index range, and the ORDER BY merges them.
    const common = (completedAt: SQL) => [
      sql`cp.institution_id = ${scope.institutionId}`,
      sql`${completedAt} IS NOT NULL`,
      ...rangeFilter(completedAt, filters),
      filters.course_id ? sql`cp.course_id = ${filters.course_id}` : undefined,
      membersFilter(sql`cp.user_id`, filters),
    ];
    const afterKey = (seq: SQL) =>
      after ? sql`(cp.user_id, cp.course_id, ${seq}) > (${after[0]}, ${after[1]}, ${after[2]})` : undefined;
    return db.values<Cell[]>(sql`
      WITH page AS (
        SELECT cp.user_id AS user_id, cp.course_id AS course_id, l.position AS seq, 'lesson' AS kind, lp.lesson_id AS lesson_id,
               l.title AS lesson_title, lp.started_at AS started_at, lp.completed_at AS completed_at,
               CASE WHEN lp.items_done > 0 THEN round(lp.score_sum / lp.items_done, 3) END AS score, NULL AS xp
        FROM course_progress cp
        JOIN lesson_progress lp ON lp.user_id = cp.user_id AND lp.course_id = cp.course_id
        JOIN lessons l ON l.id = lp.lesson_id
        WHERE ${where([...common(sql`lp.completed_at`), afterKey(sql`l.position`)])}
        UNION ALL
        SELECT cp.user_id, cp.course_id, ${COURSE_ROW}, 'course', NULL, NULL, cp.started_at, cp.completed_at,
               (SELECT round(sum(s.score_sum) / sum(s.items_done), 3) FROM lesson_progress s
                 WHERE s.user_id = cp.user_id AND s.course_id = cp.course_id AND s.items_done > 0),
               cp.xp
        FROM course_progress cp
        WHERE ${where([...common(sql`cp.completed_at`), afterKey(sql`${COURSE_ROW}`)])}
        ORDER BY 1, 2, 3
        LIMIT ${limit}
      )
      SELECT page.kind, page.user_id, u.email, u.name, page.course_id, c.title, page.lesson_id, page.lesson_title,
             page.started_at, page.completed_at, page.score, page.xp, page.seq
      FROM page
      LEFT JOIN users u ON u.id = page.user_id
      LEFT JOIN courses c ON c.id = page.course_id
      ORDER BY page.user_id, page.course_id, page.seq`);
  },
  key: (row) => completionsKey(row),
};

/** The position within a course (lesson position, or COURSE_ROW) follows the visible cells. */
const completionsKey = keyBy(completions.columns, ["user_id", "course_id", "seq"], ["seq"]);
