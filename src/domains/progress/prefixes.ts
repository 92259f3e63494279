/**
 * The paths this domain answers, as route-group prefixes (each path and everything below it): app.ts
 * routes a request to the group from these without loading the routes, and the route modules build
 * their paths from them, so the two cannot drift. No imports: a fresh isolate reads this file at start.
 */
export const PROGRESS = "/api/progress";
export const PROGRESS_HISTORY = "/api/progress-history";
export const CEFR = "/api/cefr";
export const LEARNING_INSIGHTS = "/api/learning-insights";
export const GAMIFICATION = "/api/gamification";
export const STATS = "/api/stats";
/** A course's lesson progress is answered below content's `/api/courses` (the learning group holds both). */
export const PREFIXES = [PROGRESS, PROGRESS_HISTORY, CEFR, LEARNING_INSIGHTS, GAMIFICATION, STATS] as const;
