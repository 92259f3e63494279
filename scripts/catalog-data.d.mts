// Types for catalog-data.mjs, which the Workers-runtime tests import (test/helpers/catalog.ts).

export type Cefr = "A1" | "A2" | "B1" | "B2" | "C1" | "C2";
type Range = number | [number, number];

export interface CourseSpec {
  /** Id suffix: crs_<code>, les_<code>_01, trn_<code>_01_1, itm_<code>_01_1_01. */
  code: string;
  slug: string;
  title: string;
  language: string;
  source?: string;
  from: Cefr;
  to: Cefr;
  published: boolean;
  publishedAt?: string | null;
  createdAt: string;
  tags?: string[];
  description?: string;
  intro?: string;
  lessons: Range;
  blocksPerLesson: Range;
  itemsPerBlock: Range;
  seed?: number;
}

export interface CourseRowSet {
  course: Record<string, string | number | null> & { id: string; slug: string; title: string };
  courseTags: { course_id: string; tag: string }[];
  lessons: (Record<string, string | number | null> & {
    id: string;
    position: number;
    cefr_level: Cefr;
    item_count: number;
  })[];
  trainings: (Record<string, string | number | null> & {
    id: string;
    lesson_id: string;
    position: number;
    item_count: number;
  })[];
  items: (Record<string, string | number | null> & {
    id: string;
    training_id: string;
    lesson_id: string;
    type: string;
    skill: string;
    cefr_level: Cefr;
    xp: number;
    content: string;
  })[];
}

export const CATALOG_SEED: number;
export const CEFR_LEVELS: Cefr[];
export const ITEM_TYPES: string[];
export const SKILLS: string[];
export const DEMO_COURSES: CourseSpec[];
export function mulberry32(seed: number): () => number;
export function buildCourse(spec: CourseSpec): CourseRowSet;
export function buildDemoCatalog(): CourseRowSet[];
export function catalogSeedSql(): string;
