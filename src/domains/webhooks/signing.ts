import { fromBase64, randomBytes, toBase64, toHex, utf8 } from "../../platform/crypto/encoding";

export const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32;
export const USER_AGENT = "Lingua-Webhooks/1.0";

/** A new signing secret: `whsec_` and 32 random bytes in base64, the Standard Webhooks format. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + toBase64(randomBytes(SECRET_BYTES));
}

// Importing an HMAC key costs more than using it; a webhook signs many deliveries with one secret.
// One cache per key derivation, keyed by the secret itself.
function keyCache(derive: (secret: string) => Uint8Array) {
  const keys = new Map<string, Promise<CryptoKey>>();
  return (secret: string): Promise<CryptoKey> => {
    let key = keys.get(secret);
    if (!key) {
      if (keys.size > 1000) keys.clear();
      key = crypto.subtle.importKey("raw", derive(secret), { name: "HMAC", hash: "SHA-256" }, false, [
        "sign",
      ]);
      keys.set(secret, key);
    }
    return key;
  };
}

/** X-Signature-256 keys with the UTF-8 bytes of the whole secret string, exactly as shown at creation. */
const bodyKey = keyCache((secret) => utf8(secret));
/** Standard Webhooks keys with the base64-decoded part after `whsec_`. */
const standardKey = keyCache((secret) => fromBase64(secret.slice(SECRET_PREFIX.length)));

async function bodySignature(secret: string, body: Uint8Array): Promise<string> {
  return toHex(await crypto.subtle.sign("HMAC", await bodyKey(secret), body));
}

/** Over `id.timestamp.body`. */
async function standardSignature(secret: string, signed: Uint8Array): Promise<string> {
  return `v1,${toBase64(await crypto.subtle.sign("HMAC", await standardKey(secret), signed))}`;
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
  /** The body's UTF-8 bytes (encoded once per event, whatever the number of webhooks). */
  body: Uint8Array;
  timestamp: number;
}): Promise<SignedRequest> {
  const bytes = input.body;
  // `id.timestamp.` then the body's bytes, without encoding the body a second time.
  const prefix = utf8(`${input.deliveryId}.${input.timestamp}.`);
  const standardInput = new Uint8Array(prefix.length + bytes.length);
  standardInput.set(prefix);
  standardInput.set(bytes, prefix.length);
  const [hex, standard] = await Promise.all([
    Promise.all(input.secrets.map((s) => bodySignature(s, bytes))),
    Promise.all(input.secrets.map((s) => standardSignature(s, standardInput))),
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
export function deliveryBody(event: {
  id: string;
  type: string;
  createdAt: string;
  payload: Record<string, unknown>;
}): string {
  return JSON.stringify({ id: event.id, type: event.type, created_at: event.createdAt, data: event.payload });
}
