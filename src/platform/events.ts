import { outboxEvents } from "../db/schema";
import { newId } from "./ids";

/**
 * Domain events. Each is a row of the outbox, written in the same D1 batch as the change it
 * reports; consumers (webhooks, xAPI, LTI passback) read the outbox, so nothing is lost in between.
 */
export const EVENT_TYPES = {
  "lesson.completed": "A learner completed every item of a lesson.",
  "course.completed": "A learner completed every lesson of a course.",
  "achievement.unlocked": "A learner unlocked an achievement.",
  "cefr.level_changed": "A learner's CEFR level changed for a skill (or overall).",
  "streak.milestone": "A learner's daily streak reached a milestone (3, 7, 14, 30, 60, 100, 365 days).",
} as const;

export type EventType = keyof typeof EVENT_TYPES;

export type OutboxRow = typeof outboxEvents.$inferInsert;

export function domainEvent(type: EventType, scope: { institutionId: string | null; userId: string | null }, data: Record<string, unknown>, createdAt: string): OutboxRow {
  return { id: newId("evt"), type, institutionId: scope.institutionId, userId: scope.userId, payload: data, createdAt };
}
