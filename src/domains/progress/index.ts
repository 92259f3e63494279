import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerCefrReport } from "./routes/cefr-report";
import { registerGamificationStats } from "./routes/gamification-stats";
import { registerLeaderboard } from "./routes/leaderboard";
import { registerLearningInsights } from "./routes/learning-insights";
import { registerLessonProgress } from "./routes/lesson-progress";
import { registerPlatformStats } from "./routes/platform-stats";
import { registerProgressHistory } from "./routes/progress-history";
import { registerRecordAttempts } from "./routes/record-attempts";

export function registerProgress(app: OpenAPIHono<AppEnv>) {
  registerRecordAttempts(app);
  registerLessonProgress(app);
  registerProgressHistory(app);
  registerCefrReport(app);
  registerLearningInsights(app);
  registerGamificationStats(app);
  registerLeaderboard(app);
  registerPlatformStats(app);
}
