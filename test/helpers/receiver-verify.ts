// The receiver logic docs/webhooks.md recommends, verbatim but for the type annotations: a test runs
// it against real deliveries (test/webhooks/verify-receiver.test.ts). Keep the two in step.
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";

/** Lingua signs each attempt afresh: a timestamp further than this from now is a replay. */
const TOLERANCE_SECONDS = 5 * 60;

export interface SeenEvents {
  has(eventId: string): boolean | Promise<boolean>;
  add(eventId: string): unknown;
}

/**
 * Verifies one delivery the Standard Webhooks way (the signature covers `webhook-id`,
 * `webhook-timestamp` and the body together), refuses a stale timestamp, and recognises an event
 * already processed. Returns the event and whether it is a duplicate; throws when it must be refused.
 */
export async function verifyDelivery(input: {
  secret: string;
  headers: Record<string, string | undefined>;
  rawBody: Buffer;
  seen: SeenEvents;
  now?: number;
}) {
  const { secret, headers, rawBody, seen, now = Date.now() } = input;
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures) throw new Error("missing webhook-id, -timestamp or -signature");

  const sentAt = Number(timestamp);
  if (!Number.isInteger(sentAt) || Math.abs(now / 1000 - sentAt) > TOLERANCE_SECONDS)
    throw new Error("timestamp outside the 5-minute tolerance");

  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  // During a secret rotation the header carries one `v1,<base64>` entry per secret.
  const valid = signatures.split(" ").some((entry) => {
    const [version, value] = entry.split(",");
    if (version !== "v1" || !value) return false;
    const given = Buffer.from(value, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!valid) throw new Error("signature does not match");

  const event = JSON.parse(rawBody.toString("utf8"));
  // Retries and redeliveries of an event carry its id: process it once, answer 2xx every time.
  const duplicate = await seen.has(event.id);
  if (!duplicate) await seen.add(event.id);
  return { event, duplicate };
}
