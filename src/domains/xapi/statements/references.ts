import { inArray } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { courses, lessons, trainingItems, users } from "../../../db/schema";
import { chunk } from "../../../platform/batch";
import type { ServiceContext } from "../../../platform/service/context";
import { type Fact, factUser } from "./facts";

export interface ItemRef {
  id: string;
  type: (typeof trainingItems.$inferSelect)["type"];
  skill: string;
  cefrLevel: string;
  position: number;
  content: Record<string, unknown>;
}
export interface LessonRef {
  id: string;
  title: string;
  cefrLevel: string;
  position: number;
}
export interface CourseRef {
  id: string;
  title: string;
  targetLanguage: string;
  sourceLanguage: string;
}
export interface LearnerRef {
  id: string;
  name: string;
  email: string;
}

/** What the facts refer to, by id; an id missing from its map no longer exists. */
export interface References {
  items: Map<string, ItemRef>;
  lessons: Map<string, LessonRef>;
  courses: Map<string, CourseRef>;
  learners: Map<string, LearnerRef>;
}

/** Ids per `IN (…)`: D1 binds at most 100 parameters per statement. */
const IDS_PER_STATEMENT = 90;

/** The ids each fact refers to. */
export function referencedIds(facts: readonly Fact[]) {
  const ids = {
    items: new Set<string>(),
    lessons: new Set<string>(),
    courses: new Set<string>(),
    learners: new Set<string>(),
  };
  for (const fact of facts) {
    ids.learners.add(factUser(fact));
    switch (fact.verb) {
      case "answered":
        ids.items.add(fact.attempt.trainingItemId);
        ids.lessons.add(fact.attempt.lessonId);
        ids.courses.add(fact.attempt.courseId);
        break;
      case "progressed":
        ids.lessons.add(fact.lessonId);
        ids.courses.add(fact.courseId);
        break;
      case "completed":
        if (fact.object === "lesson") ids.lessons.add(fact.lessonId);
        ids.courses.add(fact.courseId);
        break;
      case "mastered":
      case "earned":
        break;
    }
  }
  return ids;
}

/** No references known yet. */
export function noReferences(): References {
  return { items: new Map(), lessons: new Map(), courses: new Map(), learners: new Map() };
}

/**
 * Reads the items, lessons, courses and learners `facts` refer to in one D1 round trip: one batch
 * of drizzle selects, each `IN (…)` of at most IDS_PER_STATEMENT ids. With `known` (the references
 * an offer read for its earlier commits, moments ago), only the ids it lacks are read, into it: a
 * burst's commits name the same items, lessons and courses again and again.
 */
export async function loadReferences(
  ctx: ServiceContext,
  facts: readonly Fact[],
  known: References = noReferences(),
): Promise<References> {
  const refs = known;
  const ids = referencedIds(facts);
  for (const kind of ["items", "lessons", "courses", "learners"] as const)
    for (const id of ids[kind]) if (refs[kind].has(id)) ids[kind].delete(id);
  const { db } = ctx;
  type Read = { kind: keyof References; query: BatchItem<"sqlite"> };
  const reads: Read[] = [];
  for (const part of chunk([...ids.items], IDS_PER_STATEMENT))
    reads.push({
      kind: "items",
      query: db
        .select({
          id: trainingItems.id,
          type: trainingItems.type,
          skill: trainingItems.skill,
          cefrLevel: trainingItems.cefrLevel,
          position: trainingItems.position,
          content: trainingItems.content,
        })
        .from(trainingItems)
        .where(inArray(trainingItems.id, part)),
    });
  for (const part of chunk([...ids.lessons], IDS_PER_STATEMENT))
    reads.push({
      kind: "lessons",
      query: db
        .select({
          id: lessons.id,
          title: lessons.title,
          cefrLevel: lessons.cefrLevel,
          position: lessons.position,
        })
        .from(lessons)
        .where(inArray(lessons.id, part)),
    });
  for (const part of chunk([...ids.courses], IDS_PER_STATEMENT))
    reads.push({
      kind: "courses",
      query: db
        .select({
          id: courses.id,
          title: courses.title,
          targetLanguage: courses.targetLanguage,
          sourceLanguage: courses.sourceLanguage,
        })
        .from(courses)
        .where(inArray(courses.id, part)),
    });
  for (const part of chunk([...ids.learners], IDS_PER_STATEMENT))
    reads.push({
      kind: "learners",
      query: db
        .select({ id: users.id, name: users.name, email: users.email })
        .from(users)
        .where(inArray(users.id, part)),
    });
  if (reads.length === 0) return refs;
  const results = (await db.batch(
    reads.map((r) => r.query) as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]],
  )) as unknown as { id: string }[][];
  reads.forEach((read, index) => {
    const map = refs[read.kind] as Map<string, unknown>;
    for (const row of results[index] ?? []) map.set(row.id, row);
  });
  return refs;
}
