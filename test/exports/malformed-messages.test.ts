import { afterEach, describe, expect, it, vi } from "vitest";
import { deliver, HeldQueue, heldBindings } from "./support";

// An exports message is parsed with its schema (platform/queue.ts parseMessage): one that does not
// fit can never succeed, so it goes to the dead-letter queue at once instead of being retried.

afterEach(() => {
  vi.restoreAllMocks();
});

/** The structured log lines written to console.error while `run` runs. */
async function logsOf<T>(run: () => Promise<T>) {
  const lines: Record<string, unknown>[] = [];
  vi.spyOn(console, "error").mockImplementation((line: unknown) => {
    lines.push(typeof line === "string" && line.startsWith("{") ? JSON.parse(line) : { line });
  });
  const result = await run();
  vi.restoreAllMocks();
  return { result, lines };
}

const MISFITS: [string, unknown, RegExp][] = [
  ["no body", null, /\(body\)/],
  ["a string", "generate exp_1", /\(body\)/],
  ["a numeric job id", { job_id: 5, generation: 1 }, /job_id/],
  ["no generation", { job_id: "exp_1" }, /generation/],
  ["a fractional generation", { job_id: "exp_1", generation: 1.5 }, /generation/],
  ["a negative generation", { job_id: "exp_1", generation: -1 }, /generation/],
];

describe("an exports message that does not fit its schema", () => {
  it.each(MISFITS)(
    "(%s) is dead-lettered as it came, acknowledged, not retried, and the reason logged",
    async (_, body, reason) => {
      const dlq = new HeldQueue();
      const bindings = heldBindings(new HeldQueue(), { EXPORTS_DLQ: dlq });
      const { result, lines } = await logsOf(() => deliver(bindings, body));
      expect(result).toEqual({ acked: true, retried: null });
      expect(dlq.messages).toEqual([body]);
      const logged = lines.find((l) => l.message === "message does not fit its schema; dead-lettered");
      expect(logged).toMatchObject({ level: "error", queue: "lingua-exports" });
      expect(String(logged?.reason)).toMatch(reason);
    },
  );

  it("is retried when the dead-letter queue cannot take it, so that the queue dead-letters it itself", async () => {
    const failingDlq = {
      send: async () => {
        throw new Error("queue unavailable");
      },
    };
    const bindings = heldBindings(new HeldQueue(), { EXPORTS_DLQ: failingDlq });
    const { result, lines } = await logsOf(() => deliver(bindings, { job: "exp_1" }));
    expect(result.acked).toBe(false);
    expect(result.retried).not.toBeNull();
    expect(lines.some((l) => String(l.message).includes("dead-lettering failed"))).toBe(true);
  });

  it("arriving on the dead-letter queue is logged and acknowledged, and sent nowhere", async () => {
    const dlq = new HeldQueue();
    const bindings = heldBindings(new HeldQueue(), { EXPORTS_DLQ: dlq });
    const { result, lines } = await logsOf(() =>
      deliver(bindings, { job_id: 42 }, { queue: "lingua-exports-dlq" }),
    );
    expect(result).toEqual({ acked: true, retried: null });
    expect(dlq.messages).toEqual([]);
    expect(lines.find((l) => l.queue === "lingua-exports-dlq")).toMatchObject({
      level: "error",
      message: "dead letter does not fit its schema; dropped",
    });
  });
});
