/**
 * Statement ids: a UUID version 5 (RFC 9562 §5.5: SHA-1 of a namespace and a name) of
 * `${endpointId}:${factKey(fact)}` under STATEMENT_ID_NAMESPACE. The same fact sent to the same
 * endpoint is always the same id, so every retry, redelivery and back-fill re-sends one id and an
 * LRS stores the statement once; the same fact sent to two endpoints has two ids.
 */

/**
 * The namespace of every statement id, fixed for good: changing it would give every fact a new id
 * and make an LRS store it again. It is itself the UUIDv5 of the name
 * `https://lingua.example/xapi/statement-ids` in the URL namespace (RFC 9562 Appendix A / §6.6).
 */
export const STATEMENT_ID_NAMESPACE = "6085c79d-7f22-58a8-9c1e-7d7567a3c2e0";

/** RFC 9562's URL namespace (`6ba7b811-…`), from which STATEMENT_ID_NAMESPACE is derived. */
export const URL_NAMESPACE = "6ba7b811-9dad-11d1-80b4-00c04fd430c8";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The UUID version 5 of `name` (UTF-8) in `namespace`, lower-case. */
export async function uuidV5(namespace: string, name: string): Promise<string> {
  if (!UUID.test(namespace)) throw new TypeError(`not a UUID: ${namespace}`);
  const ns = hexToBytes(namespace.replaceAll("-", ""));
  const text = new TextEncoder().encode(name);
  const input = new Uint8Array(ns.length + text.length);
  input.set(ns, 0);
  input.set(text, ns.length);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-1", input)).slice(0, 16);
  const [version = 0, variant = 0] = [hash[6], hash[8]];
  hash[6] = (version & 0x0f) | 0x50; // version 5
  hash[8] = (variant & 0x3f) | 0x80; // variant 10xx (RFC 9562)
  const hex = [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The id of the statement of the fact named `factKey` for the endpoint `endpointId`. */
export function statementId(endpointId: string, factKey: string): Promise<string> {
  return uuidV5(STATEMENT_ID_NAMESPACE, `${endpointId}:${factKey}`);
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
