import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerGetCourse } from "./routes/get-course";
import { registerListCourses } from "./routes/list-courses";
import { registerListLessons } from "./routes/list-lessons";
import { registerListTrainingItems } from "./routes/list-training-items";
import { registerListTrainings } from "./routes/list-trainings";
import { registerUpdateCourse } from "./routes/update-course";

/** Courses → lessons → training blocks → training items, for token holders with `content:read`. */
export function registerContent(app: OpenAPIHono<AppEnv>) {
  registerListCourses(app);
  registerGetCourse(app);
  registerUpdateCourse(app);
  registerListLessons(app);
  registerListTrainings(app);
  registerListTrainingItems(app);
}
