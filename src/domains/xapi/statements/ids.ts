/**
 * Statement ids: a UUID version 5 (RFC 9562 §5.5: SHA-1 of a namespace and a name) of
 * `${endpointId}:${factKey(fact)}` under STATEMENT_ID_NAMESPACE. The same fact sent to the same
 * endpoint is always the same id, so every retry, redelivery and back-fill re-sends one id and an
 * LRS stores the statement once; the same fact sent to two endpoints has two ids.
 *
 * Computed synchronously (sha1 below): an offer derives one id per fact, 10,000 in a busy
 * institution's burst, and WebCrypto's `digest` costs a promise, a copy and a microtask turn each —
 * more than hashing the two 64-byte blocks of a name. Not a security use of SHA-1: it only spreads
 * names over the UUID space, as RFC 9562 specifies.
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

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
const encoder = new TextEncoder();

/** The UUID version 5 of `name` (UTF-8) in `namespace`, lower-case. */
export function uuidV5(namespace: string, name: string): string {
  if (!UUID.test(namespace)) throw new TypeError(`not a UUID: ${namespace}`);
  return uuidV5Of(hexToBytes(namespace.replaceAll("-", "")), name);
}

const STATEMENT_NAMESPACE_BYTES = hexToBytes(STATEMENT_ID_NAMESPACE.replaceAll("-", ""));

/** The id of the statement of the fact named `factKey` for the endpoint `endpointId`. */
export function statementId(endpointId: string, factKey: string): string {
  return uuidV5Of(STATEMENT_NAMESPACE_BYTES, `${endpointId}:${factKey}`);
}

function uuidV5Of(ns: Uint8Array, name: string): string {
  // The name's UTF-8 after the namespace's 16 bytes; ASCII (every id and key we make) without
  // TextEncoder, whose call costs more than the hash.
  let ascii = true;
  for (let i = 0; i < name.length; i++)
    if (name.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  let input: Uint8Array;
  if (ascii) {
    input = new Uint8Array(ns.length + name.length);
    input.set(ns, 0);
    for (let i = 0; i < name.length; i++) input[ns.length + i] = name.charCodeAt(i);
  } else {
    const text = encoder.encode(name);
    input = new Uint8Array(ns.length + text.length);
    input.set(ns, 0);
    input.set(text, ns.length);
  }
  const h = sha1(input);
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50; // version 5
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80; // variant 10xx (RFC 9562)
  let out = "";
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) out += "-";
    out += HEX[h[i] ?? 0];
  }
  return out;
}

const W = new Int32Array(80);

/** SHA-1 (FIPS 180-4) of `data`: its 20 bytes. */
export function sha1(data: Uint8Array): Uint8Array {
  const length = data.length;
  // The message, a 1 bit, zeros, and its length in bits (64-bit big-endian), in 64-byte blocks.
  const end = (((length + 8) >>> 6) + 1) * 64;
  const padded = new Uint8Array(end);
  padded.set(data);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(end - 8, Math.floor(length / 2 ** 29));
  view.setUint32(end - 4, (length * 8) >>> 0);
  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0 | 0;
  for (let offset = 0; offset < end; offset += 64) {
    for (let t = 0; t < 16; t++) W[t] = view.getInt32(offset + t * 4);
    for (let t = 16; t < 80; t++) {
      const x = (W[t - 3] as number) ^ (W[t - 8] as number) ^ (W[t - 14] as number) ^ (W[t - 16] as number);
      W[t] = (x << 1) | (x >>> 31);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let t = 0;
    for (; t < 20; t++) {
      const temp = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + (W[t] as number)) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    for (; t < 40; t++) {
      const temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + (W[t] as number)) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    for (; t < 60; t++) {
      const temp =
        (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e - 0x70e44324 + (W[t] as number)) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    for (; t < 80; t++) {
      const temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e - 0x359d3e2a + (W[t] as number)) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  const out = new Uint8Array(20);
  const result = new DataView(out.buffer);
  result.setInt32(0, h0);
  result.setInt32(4, h1);
  result.setInt32(8, h2);
  result.setInt32(12, h3);
  result.setInt32(16, h4);
  return out;
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
