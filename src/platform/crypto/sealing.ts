import { fromBase64, randomBytes, toBase64, utf8 } from "./encoding";

/**
 * AES-256-GCM sealing for values that must be recoverable but never stored in plain text
 * (webhook secrets, LRS credentials, replayed responses that carry a secret).
 * Format: `v1.<base64 iv>.<base64 ciphertext+tag>`; the version leaves room for key rotation.
 */
const keyCache = new Map<string, Promise<CryptoKey>>();

function importKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret);
  if (!key) {
    const raw = fromBase64(secret);
    if (raw.length !== 32) throw new Error("ENCRYPTION_KEY must be 32 bytes, base64-encoded");
    key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    keyCache.set(secret, key);
  }
  return key;
}

export async function seal(plaintext: string, secret: string): Promise<string> {
  const iv = randomBytes(12);
  const cipher = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await importKey(secret),
    utf8(plaintext),
  );
  return `v1.${toBase64(iv)}.${toBase64(cipher)}`;
}

export async function unseal(sealed: string, secret: string): Promise<string> {
  const [version, iv, cipher] = sealed.split(".");
  if (version !== "v1" || !iv || !cipher) throw new Error("Unrecognised sealed value");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv) },
    await importKey(secret),
    fromBase64(cipher),
  );
  return new TextDecoder().decode(plain);
}
