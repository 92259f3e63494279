/**
 * The paths this domain answers, as route-group prefixes (each path and everything below it): app.ts
 * routes a request to the group from these without loading the routes, and the route modules build
 * their paths from them, so the two cannot drift. No imports: a fresh isolate reads this file at start.
 */
export const COURSES = "/api/courses";
export const LESSONS = "/api/lessons";
export const TRAININGS = "/api/trainings";
export const TRAINING_ITEMS = "/api/trainingItems";
export const PREFIXES = [COURSES, LESSONS, TRAININGS, TRAINING_ITEMS] as const;
