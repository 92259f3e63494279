import { describe, expect, it } from "vitest";
import {
  cefrReport,
  currentStreak,
  localTime,
  overallLevel,
  passes,
  reachedAchievements,
  type SkillEvidenceRow,
  skillLevel,
  streaks,
  weekOf,
  xpFor,
} from "../../src/domains/progress/rules";

describe("passing and XP", () => {
  it("passes on a correct answer or a score of at least 0.6", () => {
    expect(passes({ score: 0, correct: true })).toBe(true);
    expect(passes({ score: 0.6, correct: false })).toBe(true);
    expect(passes({ score: 0.59, correct: false })).toBe(false);
  });

  it("gives the item's XP for the first pass, 1 for practice, 0 for a miss", () => {
    expect(xpFor({ score: 1, correct: true }, 15, false)).toBe(15);
    expect(xpFor({ score: 1, correct: true }, 15, true)).toBe(1);
    expect(xpFor({ score: 0.1, correct: false }, 15, false)).toBe(0);
  });
});

describe("calendar", () => {
  it("places an instant on the learner's local day, weekday and hour", () => {
    // 2026-11-21 is a Saturday; 23:30 UTC is already Sunday morning in Auckland (UTC+13).
    expect(localTime("2026-11-21T23:30:00Z", "UTC")).toEqual({ day: "2026-11-21", weekday: 5, hour: 23 });
    expect(localTime("2026-11-21T23:30:00Z", "Pacific/Auckland")).toEqual({
      day: "2026-11-22",
      weekday: 6,
      hour: 12,
    });
    expect(localTime("2026-11-21T03:00:00Z", "America/Los_Angeles")).toEqual({
      day: "2026-11-20",
      weekday: 4,
      hour: 19,
    });
  });

  it("finds the Monday of a week", () => {
    expect(weekOf("2026-11-22")).toBe("2026-11-16");
    expect(weekOf("2026-11-16")).toBe("2026-11-16");
    expect(weekOf("2027-01-01")).toBe("2026-12-28");
  });
});

describe("streaks", () => {
  it("measures the latest run and the longest one over unordered, repeated days", () => {
    expect(
      streaks(["2026-11-03", "2026-11-01", "2026-11-02", "2026-11-02", "2026-11-10", "2026-11-11"]),
    ).toEqual({ latestRun: 2, latestDay: "2026-11-11", longest: 3 });
    expect(streaks([])).toEqual({ latestRun: 0, latestDay: null, longest: 0 });
    expect(streaks(["2026-02-28", "2026-03-01"]).latestRun).toBe(2);
  });

  it("keeps the current streak alive through yesterday, not beyond", () => {
    expect(currentStreak(4, "2026-11-21", "2026-11-21")).toBe(4);
    expect(currentStreak(4, "2026-11-20", "2026-11-21")).toBe(4);
    expect(currentStreak(4, "2026-11-19", "2026-11-21")).toBe(0);
  });
});

describe("CEFR scoring", () => {
  const row = (
    skill: SkillEvidenceRow["skill"],
    cefrLevel: SkillEvidenceRow["cefrLevel"],
    attempts: number,
    accuracy: number,
  ): SkillEvidenceRow => ({
    skill,
    cefrLevel,
    attempts,
    correct: Math.round(attempts * accuracy),
    scoreSum: attempts * accuracy,
  });

  it("reaches a level with 10 attempts at 70% there, and only without gaps from A1", () => {
    const level = skillLevel("reading", [
      row("reading", "A1", 10, 0.8),
      row("reading", "A2", 12, 0.7),
      row("reading", "B2", 30, 0.9),
    ]);
    expect(level.level).toBe("A2");
    expect(level.next).toBe("B1");
    expect(level.progressToNext).toBe(0);
    expect(level.evidence.map((e) => e.level)).toEqual(["A1", "A2", "B2"]);
  });

  it("measures progress to the next level by the weaker of volume and accuracy", () => {
    const level = skillLevel("grammar", [row("grammar", "A1", 5, 0.9)]);
    expect(level.level).toBeNull();
    expect(level.next).toBe("A1");
    expect(level.progressToNext).toBe(0.5);
    const accurate = skillLevel("grammar", [row("grammar", "A1", 20, 0.35)]);
    expect(accurate.progressToNext).toBe(0.5);
  });

  it("takes the lower median of the skills with evidence as the overall level", () => {
    const rows = [
      row("reading", "A1", 10, 1),
      row("reading", "A2", 10, 1),
      row("listening", "A1", 10, 1),
      row("writing", "A1", 3, 1),
    ];
    const report = cefrReport(rows);
    expect(report.skills.find((s) => s.skill === "reading")!.level).toBe("A2");
    expect(report.skills.find((s) => s.skill === "speaking")!.evidence).toEqual([]);
    // reading A2, listening A1, writing none → [none, A1, A2] → A1
    expect(report.overall).toBe("A1");
    expect(overallLevel(cefrReport([]).skills)).toBeNull();
  });
});

describe("achievements", () => {
  it("unlocks by thresholds", () => {
    const none = {
      itemsCompleted: 0,
      lessonsCompleted: 0,
      coursesCompleted: 0,
      xpTotal: 0,
      longestStreak: 0,
      perfectLessons: 0,
    };
    expect(reachedAchievements(none)).toEqual([]);
    expect(reachedAchievements({ ...none, itemsCompleted: 1, xpTotal: 1000, longestStreak: 7 })).toEqual([
      "first_steps",
      "xp_1000",
      "streak_7",
    ]);
  });
});
