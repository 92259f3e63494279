import { randomBytes, sha256Hex, toBase64Url } from "../crypto/encoding";

export const TOKEN_PREFIX = "lng_";
/** `lng_` + 32 random bytes in base64url (43 characters): 256 bits of randomness. */
const TOKEN_PATTERN = /^lng_[A-Za-z0-9_-]{43}$/;
/** Shown in lists: the prefix and the first characters of the random part, not enough to guess the rest. */
const DISPLAY_PREFIX_LENGTH = TOKEN_PREFIX.length + 6;

export interface MintedToken {
  plain: string;
  hash: string;
  displayPrefix: string;
}

export async function mintToken(): Promise<MintedToken> {
  const plain = TOKEN_PREFIX + toBase64Url(randomBytes(32));
  return { plain, hash: await sha256Hex(plain), displayPrefix: plain.slice(0, DISPLAY_PREFIX_LENGTH) };
}

export function looksLikeToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

export function hashToken(plain: string): Promise<string> {
  return sha256Hex(plain);
}
