import { describe, expect, it } from "vitest";
import {
  buildDemoCatalog,
  catalogSeedSql,
  DEMO_COURSES,
  ITEM_TYPES,
  SKILLS,
} from "../../scripts/catalog-data.mjs";

describe("the demo catalogue generator (scripts/catalog-data.mjs)", () => {
  it("is deterministic and idempotent SQL", () => {
    const sql = catalogSeedSql();
    expect(catalogSeedSql()).toBe(sql);
    const statements = sql.split(";\n").filter((s) => s.trim().startsWith("INSERT"));
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) expect(statement.trimEnd()).toMatch(/ON CONFLICT DO NOTHING$/);
    for (const statement of statements) expect(statement.length).toBeLessThan(100_000);
  });

  it("has 12 courses in at least 3 languages, exactly one unpublished, with fixed ids", () => {
    const catalog = buildDemoCatalog();
    expect(catalog).toHaveLength(12);
    expect(new Set(catalog.map((c) => c.course.target_language)).size).toBeGreaterThanOrEqual(3);
    expect(catalog.filter((c) => c.course.published === 0)).toHaveLength(1);
    expect(catalog[0]!.course.id).toBe("crs_demo_es_a1");
    expect(catalog[0]!.lessons[0]!.id).toBe("les_demo_es_a1_01");
    expect(new Set(catalog.map((c) => c.course.slug)).size).toBe(12);
    expect(DEMO_COURSES).toHaveLength(12);
  });

  it("keeps counts and minutes consistent at every level, with realistic sizes", () => {
    for (const { course, lessons, trainings, items, courseTags } of buildDemoCatalog()) {
      expect(course.lesson_count).toBe(lessons.length);
      expect(lessons.length).toBeGreaterThanOrEqual(36);
      expect(lessons.length).toBeLessThanOrEqual(44);
      expect(course.item_count).toBe(items.length);
      expect(course.estimated_minutes).toBe(lessons.reduce((s, l) => s + (l.estimated_minutes as number), 0));
      expect(JSON.parse(course.tags as string)).toEqual(courseTags.map((t) => t.tag));
      const levels = ["A1", "A2", "B1", "B2", "C1", "C2"];
      let previous = levels.indexOf(course.cefr_from as string);
      for (const lesson of lessons) {
        const blocks = trainings.filter((t) => t.lesson_id === lesson.id);
        expect(blocks.length).toBeGreaterThanOrEqual(3);
        expect(blocks.length).toBeLessThanOrEqual(5);
        const lessonItems = items.filter((i) => i.lesson_id === lesson.id);
        expect(lesson.item_count).toBe(lessonItems.length);
        for (const block of blocks) {
          const blockItems = items.filter((i) => i.training_id === block.id);
          expect(block.item_count).toBe(blockItems.length);
          expect(blockItems.length).toBeGreaterThanOrEqual(8);
          expect(blockItems.length).toBeLessThanOrEqual(12);
        }
        // CEFR levels rise through the course's range.
        const level = levels.indexOf(lesson.cefr_level);
        expect(level).toBeGreaterThanOrEqual(previous);
        expect(level).toBeLessThanOrEqual(levels.indexOf(course.cefr_to as string));
        previous = level;
        expect(new Set(lessonItems.map((i) => i.type)).size).toBe(ITEM_TYPES.length);
      }
      expect(new Set(items.map((i) => i.skill))).toEqual(new Set(SKILLS));
      for (const item of items) {
        expect(item.xp).toBeGreaterThanOrEqual(5);
        expect(item.xp).toBeLessThanOrEqual(20);
        expect(typeof JSON.parse(item.content).prompt).toBe("string");
      }
    }
  });
});
