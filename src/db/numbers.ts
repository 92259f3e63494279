import { type SQL, sql } from "drizzle-orm";
import { courses, institutions, lessons, trainingItems, users } from "./schema";

/*
 * The rows kept for good name a learner, an institution and a catalogue row by number, not id
 * (docs/design/capacity.md, "Integer keys"); the API names them by id. A statement that reads or
 * writes such rows by id finds the number in the same statement: one seek on the key of `users`,
 * `institutions` or the catalogue's table, no round trip.
 */

/** The number of the user `userId` (null for no such user). */
export function userNumberOf(userId: string | SQL): SQL<number | null> {
  return sql<number | null>`(SELECT ${users.number} FROM ${users} WHERE ${users.id} = ${userId})`;
}

/** The number of the institution `institutionId` (null for no such institution). */
export function institutionNumberOf(institutionId: string | SQL): SQL<number | null> {
  return sql<
    number | null
  >`(SELECT ${institutions.number} FROM ${institutions} WHERE ${institutions.id} = ${institutionId})`;
}

/** The number of the course `courseId` (null for no such course). */
export function courseNumberOf(courseId: string | SQL): SQL<number | null> {
  return sql<number | null>`(SELECT ${courses.number} FROM ${courses} WHERE ${courses.id} = ${courseId})`;
}

/** The number of the lesson `lessonId` (null for no such lesson). */
export function lessonNumberOf(lessonId: string | SQL): SQL<number | null> {
  return sql<number | null>`(SELECT ${lessons.number} FROM ${lessons} WHERE ${lessons.id} = ${lessonId})`;
}

/** The numbers of the training items whose ids `ids` lists (a subquery: `SELECT value FROM json_each(…)`). */
export function itemNumbersIn(ids: SQL): SQL {
  return sql`(SELECT ${trainingItems.number} FROM ${trainingItems} WHERE ${trainingItems.id} IN ${ids})`;
}

/** A number read with a row that must have one: a row without it is refused, loudly. */
export function requiredNumber(number: number | null | undefined, what: string): number {
  if (number === null || number === undefined) throw new Error(`${what} has no number`);
  return number;
}
