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

/**
 * The message being hashed, reused by every call (synchronous, so never shared between two): the
 * namespace, the name, SHA-1's padding and length, as whole 64-byte blocks. An id allocates nothing
 * but its text.
 */
let message = new Uint8Array(192);
let messageView = new DataView(message.buffer);
const W = new Int32Array(80);
/** The digest of the last `digest` call, as SHA-1's five 32-bit words. */
const H = new Int32Array(5);

/** Room for `size` bytes in `message`, zeroed up to `size`. */
function messageOf(size: number): Uint8Array {
  if (message.length < size) {
    message = new Uint8Array(size * 2);
    messageView = new DataView(message.buffer);
  } else message.fill(0, 0, size);
  return message;
}

/** Pads `message` holding `length` bytes of data and hashes it into H. */
function digest(length: number): void {
  // The data, a 1 bit, zeros, and its length in bits (64-bit big-endian), in 64-byte blocks.
  const end = (((length + 8) >>> 6) + 1) * 64;
  message[length] = 0x80;
  messageView.setUint32(end - 8, Math.floor(length / 2 ** 29));
  messageView.setUint32(end - 4, (length * 8) >>> 0);
  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0 | 0;
  for (let offset = 0; offset < end; offset += 64) {
    for (let t = 0, i = offset; t < 16; t++, i += 4)
      W[t] =
        ((message[i] as number) << 24) |
        ((message[i + 1] as number) << 16) |
        ((message[i + 2] as number) << 8) |
        (message[i + 3] as number);
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
  H[0] = h0;
  H[1] = h1;
  H[2] = h2;
  H[3] = h3;
  H[4] = h4;
}

/** The size of SHA-1's padded message for `length` bytes of data. */
const paddedSize = (length: number) => (((length + 8) >>> 6) + 1) * 64;

function uuidV5Of(ns: Uint8Array, name: string): string {
  // The name's UTF-8 after the namespace's 16 bytes; ASCII (every id and key we make) without
  // TextEncoder, whose call costs more than the hash.
  let ascii = true;
  for (let i = 0; i < name.length; i++)
    if (name.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  const text = ascii ? null : encoder.encode(name);
  const length = ns.length + (text ? text.length : name.length);
  const bytes = messageOf(paddedSize(length));
  bytes.set(ns, 0);
  if (text) bytes.set(text, ns.length);
  else for (let i = 0; i < name.length; i++) bytes[ns.length + i] = name.charCodeAt(i);
  digest(length);
  // The first 16 bytes of the digest, version 5 in byte 6 and variant 10xx in byte 8 (RFC 9562).
  const w0 = H[0] as number;
  const w1 = ((H[1] as number) & ~0xf000) | 0x5000;
  const w2 = ((H[2] as number) & 0x3fffffff) | 0x80000000;
  const w3 = H[3] as number;
  return `${HEX[w0 >>> 24]}${HEX[(w0 >>> 16) & 0xff]}${HEX[(w0 >>> 8) & 0xff]}${HEX[w0 & 0xff]}-${HEX[w1 >>> 24]}${HEX[(w1 >>> 16) & 0xff]}-${HEX[(w1 >>> 8) & 0xff]}${HEX[w1 & 0xff]}-${HEX[w2 >>> 24]}${HEX[(w2 >>> 16) & 0xff]}-${HEX[(w2 >>> 8) & 0xff]}${HEX[w2 & 0xff]}${HEX[w3 >>> 24]}${HEX[(w3 >>> 16) & 0xff]}${HEX[(w3 >>> 8) & 0xff]}${HEX[w3 & 0xff]}`;
}

/** SHA-1 (FIPS 180-4) of `data`: its 20 bytes. */
export function sha1(data: Uint8Array): Uint8Array {
  messageOf(paddedSize(data.length)).set(data);
  digest(data.length);
  const out = new Uint8Array(20);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 5; i++) view.setInt32(i * 4, H[i] as number);
  return out;
}

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
