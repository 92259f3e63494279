import type { ExportType } from "../../../db/schema";
import { activity } from "./activity";
import { completions } from "./completions";
import { learnerProgress } from "./learner-progress";
import type { ExportSource } from "./source";

export { inKeyOrder } from "./activity";
export type { ExportColumn, ExportSource, Row, RowKey, SourceScope, TextPage } from "./source";

/** Every export type's columns and keyset query (one file per type). */
export const SOURCES: Record<ExportType, ExportSource> = {
  learner_progress: learnerProgress,
  completions,
  activity,
};
