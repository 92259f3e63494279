import type { z } from "@hono/zod-openapi";
import { ACHIEVEMENTS, currentStreak } from "../../rules";
import { ANONYMOUS_NAME, type GamificationStatsSchema, type LeaderboardEntrySchema } from "./schemas";
import type { LeaderboardRow, readGamification } from "./service";

/** Counters, achievements and boards → their wire shapes. Pure: no I/O. */

export function presentGamification(
  userId: string,
  today: string,
  week: string,
  data: Awaited<ReturnType<typeof readGamification>>,
): z.infer<typeof GamificationStatsSchema> {
  const stats = data.stats;
  const definitions = new Map<string, (typeof ACHIEVEMENTS)[number]>(ACHIEVEMENTS.map((a) => [a.code, a]));
  const unlocked = data.unlocked.flatMap((u) => {
    const a = definitions.get(u.code);
    return a ? [{ code: a.code, name: a.name, description: a.description, unlocked_at: u.unlockedAt }] : [];
  });
  const have = new Set(unlocked.map((u) => u.code));
  const locked = ACHIEVEMENTS.filter((a) => !have.has(a.code)).map((a) => ({
    code: a.code,
    name: a.name,
    description: a.description,
    progress: { current: Math.min(stats?.[a.metric] ?? 0, a.target), target: a.target },
  }));
  return {
    user_id: userId,
    xp_total: stats?.xpTotal ?? 0,
    xp_this_week: data.weekXp,
    week,
    current_streak: currentStreak(stats?.currentStreak ?? 0, stats?.lastActiveDay ?? null, today),
    longest_streak: stats?.longestStreak ?? 0,
    last_active_day: stats?.lastActiveDay ?? null,
    achievements: { unlocked, locked },
  };
}

// ---------------------------------------------------------------------------------------------

export interface Viewer {
  /** The learner the request is about: never anonymised to the caller. */
  subjectId: string;
  /** The caller's institution; learners of other institutions are anonymised on the platform scope. */
  institutionId: string | null;
  /** Platform staff see every institution's names (opted-out learners stay anonymous). */
  staff: boolean;
}

function entry(
  row: LeaderboardRow,
  rank: number,
  scope: "institution" | "platform",
  viewer: Viewer,
): z.infer<typeof LeaderboardEntrySchema> {
  const isMe = row.userId === viewer.subjectId;
  const foreign = scope === "platform" && !viewer.staff && row.institutionId !== viewer.institutionId;
  const anonymous = !isMe && (row.optOut || foreign);
  return {
    rank,
    user_id: anonymous ? null : row.userId,
    display_name: anonymous ? ANONYMOUS_NAME : row.name,
    xp: row.xp,
    is_me: isMe,
  };
}

/** Ranks are 1 + the number with more XP: in a list sorted by XP that is the index of the first equal. */
export function presentLeaderboard(input: {
  period: "week" | "all_time";
  scope: "institution" | "platform";
  week: string;
  viewer: Viewer;
  top: LeaderboardRow[];
  me: LeaderboardRow;
  above: number;
}) {
  let firstOfXp = 0;
  const entries = input.top.map((row, i) => {
    if (i === 0 || row.xp !== input.top[i - 1]?.xp) firstOfXp = i;
    return entry(row, firstOfXp + 1, input.scope, input.viewer);
  });
  return {
    period: input.period,
    scope: input.scope,
    week: input.period === "week" ? input.week : null,
    entries,
    me: entry(input.me, input.above + 1, input.scope, input.viewer),
  };
}
