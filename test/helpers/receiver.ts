import { inject } from "vitest";
import type { ReceivedRequest, ScriptedAnswer } from "./receiver-server";

export type { ReceivedRequest };

/**
 * One endpoint of the loopback receiver (test/helpers/receiver-server.ts): its URL to register as a
 * webhook, its scripted answers, and what it received with the signature checks done in Node.
 */
export function receiverEndpoint(name = crypto.randomUUID()) {
  const base = inject("receiverUrl");
  const control = `${base}/control/${name}`;
  return {
    url: `${base}/hook/${name}`,
    /** Secrets newest first (as during a rotation), answers to play in order, then `fallback`. */
    async configure(options: {
      secrets?: string[];
      script?: ScriptedAnswer[];
      fallback?: ScriptedAnswer;
      reset?: boolean;
    }) {
      await fetch(control, { method: "PUT", body: JSON.stringify(options) });
    },
    async received(): Promise<ReceivedRequest[]> {
      const res = await fetch(control);
      return ((await res.json()) as { received: ReceivedRequest[] }).received;
    },
    /** Polls until `count` requests arrived (the queue is asynchronous), or fails after `timeoutMs`. */
    async waitFor(count: number, timeoutMs = 20_000): Promise<ReceivedRequest[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const got = await this.received();
        if (got.length >= count) return got;
        if (Date.now() > deadline)
          throw new Error(`receiver got ${got.length} of ${count} requests in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}
