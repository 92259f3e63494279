import type { OutboundResult } from "../../../platform/outbound";

/**
 * One attempt of a batch against an LRS, apart from how a request is made (`post`), so that every
 * answer's handling is unit-tested without a queue: the batch's pending statements in one
 * `POST statements`, then, as the answers demand, statement by statement (400, 409) or in halves
 * (413). See docs/design/xapi-forwarding.md.
 */

/** A statement to send: its id and its JSON text as stored. */
export interface PendingStatement {
  id: string;
  body: string;
}

/** What became of a statement in this attempt: accepted (200, or 409: the LRS has the id), or rejected. */
export type Settled = { status: "sent" } | { status: "failed"; error: string };

/** The answer that stopped the attempt: the statements still pending wait for the batch's retry. */
export interface Stop {
  result: OutboundResult;
  error: string;
}

export interface Exchange {
  settled: Map<string, Settled>;
  /** Requests that carried each statement. */
  carried: Map<string, number>;
  /** Set when an answer (a time-out, 429, 5xx, 401, …) stopped the attempt. */
  stop: Stop | null;
  /** The time budget ran out with statements left (and no answer stopped the attempt). */
  ranOut: boolean;
  /** The LRS accepted at least one request (2xx or 409). */
  accepted: boolean;
  /** The last rejection (400, or 413 of a single statement) an LRS answered. */
  rejection: string | null;
  /** The last status the LRS answered, null without one. */
  lastStatus: number | null;
  requests: number;
}

/** The LRS's message as kept on a statement or an endpoint: the status and the first KiB it said. */
export function answerError(result: OutboundResult): string {
  if (result.status === null || result.errorCode !== "http_status") return result.error ?? "Request failed";
  const said = (result.bodyPrefix ?? "").trim();
  return said ? `HTTP ${result.status}: ${said.slice(0, 1024)}` : `HTTP ${result.status}`;
}

const TOO_LARGE = "HTTP 413: the statement alone is larger than the LRS accepts";

/**
 * Sends `statements` as the LRS's answers allow, until each is settled, an answer stops the attempt,
 * or `deadline` (by `now()`) passes before a further request (the first one is always made). Each
 * request is made after the previous one's answer, so the statements' order is kept.
 */
export async function exchange(
  statements: readonly PendingStatement[],
  post: (body: string) => Promise<OutboundResult>,
  deadline: number,
  now: () => number,
): Promise<Exchange> {
  const ex: Exchange = {
    settled: new Map(),
    carried: new Map(),
    stop: null,
    ranOut: false,
    accepted: false,
    rejection: null,
    lastStatus: null,
    requests: 0,
  };
  const settle = (group: readonly PendingStatement[], how: Settled) => {
    for (const s of group) ex.settled.set(s.id, how);
  };
  const send = async (group: readonly PendingStatement[]): Promise<void> => {
    if (ex.stop || ex.ranOut || group.length === 0) return;
    if (ex.requests > 0 && now() >= deadline) {
      ex.ranOut = true;
      return;
    }
    ex.requests += 1;
    for (const s of group) ex.carried.set(s.id, (ex.carried.get(s.id) ?? 0) + 1);
    const result = await post(`[${group.map((s) => s.body).join(",")}]`);
    ex.lastStatus = result.status;
    if (result.ok) {
      ex.accepted = true;
      settle(group, { status: "sent" });
      return;
    }
    const single = group.length === 1;
    switch (result.status) {
      case 409:
        // The LRS has one of the ids already: that one is sent; which one it was, and whether the
        // others are well, only one at a time tells.
        ex.accepted = true;
        if (single) settle(group, { status: "sent" });
        else for (const s of group) await send([s]);
        return;
      case 400:
        if (single) {
          const error = answerError(result);
          ex.rejection = error;
          settle(group, { status: "failed", error });
        } else for (const s of group) await send([s]);
        return;
      case 413: {
        if (single) {
          ex.rejection = TOO_LARGE;
          settle(group, { status: "failed", error: TOO_LARGE });
          return;
        }
        const half = Math.ceil(group.length / 2);
        await send(group.slice(0, half));
        await send(group.slice(half));
        return;
      }
      default:
        ex.stop = { result, error: answerError(result) };
    }
  };
  await send(statements);
  return ex;
}
