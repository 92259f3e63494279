import { describe, expect, it } from "vitest";
import { callJson } from "../../helpers/api";
import { createPublishedCourse } from "../../helpers/progress-fixture";
import { createTenant } from "../../helpers/tenants";
import { attempt, record } from "./support";

const untouched = (skill: string) => ({
  skill,
  level: null,
  next_level: "A1",
  progress_to_next: 0,
  evidence: [],
});

describe("GET /api/cefr/report", () => {
  it("reports each skill's level, progress to the next and its evidence, the overall level and the method", async () => {
    const { learner } = await createTenant();
    // Items: 0 reading A1, 1 listening A1, 2 reading A2, 3 listening A2.
    const course = await createPublishedCourse({
      lessons: 1,
      blocksPerLesson: 1,
      itemsPerBlock: 4,
      skills: ["reading", "listening"],
      levels: ["A1", "A1", "A2", "A2"],
    });
    const [readingA1, listeningA1, readingA2] = course.items;

    const before = await callJson("/api/cefr/report", { token: learner.token });
    expect(before.res.status).toBe(200);
    expect(before.body.overall_level).toBeNull();
    expect(before.body.skills).toEqual(
      ["reading", "listening", "writing", "speaking", "vocabulary", "grammar"].map(untouched),
    );

    // Reading: 10 attempts at A1 with a mean score of 0.8 reach A1; 4 at A2 with 0.7 are 40% of the way.
    await record(learner.token, [
      ...Array.from({ length: 10 }, () => attempt(readingA1!, { score: 0.8 })),
      ...Array.from({ length: 4 }, () => attempt(readingA2!, { score: 0.7 })),
    ]);
    const reading = {
      skill: "reading",
      level: "A1",
      next_level: "A2",
      progress_to_next: 0.4,
      evidence: [
        { level: "A1", attempts: 10, correct: 10, accuracy: 0.8 },
        { level: "A2", attempts: 4, correct: 4, accuracy: 0.7 },
      ],
    };
    const afterReading = await callJson("/api/cefr/report", { token: learner.token });
    expect(afterReading.body).toEqual({
      user_id: learner.id,
      overall_level: "A1",
      skills: [reading, ...["listening", "writing", "speaking", "vocabulary", "grammar"].map(untouched)],
      method: {
        evidence_needed: 10,
        accuracy_needed: 0.7,
        levels: ["A1", "A2", "B1", "B2", "C1", "C2"],
        description: expect.stringContaining("at least 10 attempts"),
      },
    });

    // Listening: 3 weak attempts at A1: 30% of the volume, half the accuracy → 0.3; the overall level is
    // the lower median of (below A1, A1): none.
    await record(
      learner.token,
      Array.from({ length: 3 }, () => attempt(listeningA1!, { score: 0.35, correct: false })),
    );
    const afterListening = await callJson("/api/cefr/report", { token: learner.token });
    expect(afterListening.body.overall_level).toBeNull();
    expect(afterListening.body.skills.slice(0, 2)).toEqual([
      reading,
      {
        skill: "listening",
        level: null,
        next_level: "A1",
        progress_to_next: 0.3,
        evidence: [{ level: "A1", attempts: 3, correct: 0, accuracy: 0.35 }],
      },
    ]);
  });
});
