import { fromBase64, randomBytes, toBase64, toHex, utf8 } from "../../platform/crypto/encoding";

export const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;
export const USER_AGENT = "Lingua-Webhooks/1.0";

/** A new signing secret: `whsec_` and 32 random bytes in base64, the Standard Webhooks format. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + toBase64(randomBytes(SECRET_BYTES));
}

// Importing an HMAC key costs more than using it; a webhook signs many deliveries with one secret.
const keys = new Map<string, Promise<CryptoKey>>();
function hmacKey(cacheKey: string, raw: Uint8Array): Promise<CryptoKey> {
  let key = keys.get(cacheKey);
  if (!key) {
    if (keys.size > 1000) keys.clear();
    key = crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(cacheKey, key);
  }
  return key;
}

/** X-Signature-256 keys with the UTF-8 bytes of the whole secret string, exactly as shown at creation. */
async function bodySignature(secret: string, body: Uint8Array): Promise<string> {
  const key = await hmacKey(`body:${secret}`, utf8(secret));
  return toHex(await crypto.subtle.sign("HMAC", key, body));
}

/** Standard Webhooks keys with the base64-decoded part after `whsec_`, over `id.timestamp.body`. */
async function standardSignature(secret: string, messageId: string, timestamp: number, body: string): Promise<string> {
  const key = await hmacKey(`std:${secret}`, fromBase64(secret.slice(SECRET_PREFIX.length)));
  return `v1,${toBase64(await crypto.subtle.sign("HMAC", key, utf8(`${messageId}.${timestamp}.${body}`)))}`;
}

export interface SignedRequest {
  body: Uint8Array;
  headers: Record<string, string>;
}

/**
 * The exact bytes and headers of one delivery attempt. `secrets` lists the active secrets, newest
 * first: during a rotation both sign, in that order.
 */
export async function signDelivery(input: {
  secrets: string[];
  webhookId: string;
  deliveryId: string;
  eventType: string;
  body: string;
  timestamp: number;
}): Promise<SignedRequest> {
  const bytes = utf8(input.body);
  const [hex, standard] = await Promise.all([
    Promise.all(input.secrets.map((s) => bodySignature(s, bytes))),
    Promise.all(input.secrets.map((s) => standardSignature(s, input.deliveryId, input.timestamp, input.body))),
  ]);
  return {
    body: bytes,
    headers: {
      "Content-Type": "application/json",
      "User-Agent": USER_AGENT,
      "X-Signature-256": hex.join(","),
      "X-Webhook-Id": input.webhookId,
      "X-Webhook-Event": input.eventType,
      "X-Webhook-Delivery": input.deliveryId,
      "X-Webhook-Timestamp": String(input.timestamp),
      "webhook-id": input.deliveryId,
      "webhook-timestamp": String(input.timestamp),
      "webhook-signature": standard.join(" "),
    },
  };
}

/** The delivery body of CONVENTIONS.md; its bytes are what the signatures cover. */
export function deliveryBody(event: { id: string; type: string; createdAt: string; payload: Record<string, unknown> }): string {
  return JSON.stringify({ id: event.id, type: event.type, created_at: event.createdAt, data: event.payload });
}
