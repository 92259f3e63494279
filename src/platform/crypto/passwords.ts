import { fromBase64, randomBytes, timingSafeEqual, toBase64, utf8 } from "./encoding";

/**
 * Deployed Workers refuse PBKDF2 above 100,000 iterations (local workerd does not), so this is both
 * the floor we want and the ceiling we can have. The parameters are stored beside each hash, so
 * raising them later only needs a re-hash on the next successful sign-in.
 */
export const PBKDF2_ITERATIONS = 100_000;
const ALGORITHM = "pbkdf2-sha256";
const SALT_BYTES = 16;
const HASH_BYTES = 32;

async function derive(
  password: string,
  salt: Uint8Array,
  iterations: number,
  length: number,
): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", utf8(password), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    key,
    length * 8,
  );
  return new Uint8Array(bits);
}

export async function hashPassword(password: string, iterations = PBKDF2_ITERATIONS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, iterations, HASH_BYTES);
  return `${ALGORITHM}$${iterations}$${toBase64(salt)}$${toBase64(hash)}`;
}

export interface ParsedPasswordHash {
  iterations: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

export function parsePasswordHash(stored: string): ParsedPasswordHash | null {
  const [algorithm, iterations, salt, hash] = stored.split("$");
  if (algorithm !== ALGORITHM || !iterations || !salt || !hash) return null;
  const count = Number(iterations);
  if (!Number.isInteger(count) || count < 1) return null;
  return { iterations: count, salt: fromBase64(salt), hash: fromBase64(hash) };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return false;
  const candidate = await derive(password, parsed.salt, parsed.iterations, parsed.hash.length);
  return timingSafeEqual(candidate, parsed.hash);
}

/**
 * A hash of nothing anybody knows, verified when the e-mail is unknown so that a wrong e-mail costs
 * the same PBKDF2 work as a wrong password.
 */
export const DECOY_PASSWORD_HASH = `${ALGORITHM}$${PBKDF2_ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;
