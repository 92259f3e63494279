import { fromBase64, randomBytes, toBase64, utf8 } from "./encoding";

/**
 * AES-256-GCM sealing for values that must be recoverable but never stored in plain text
 * (webhook secrets, LRS credentials, replayed responses that carry a secret).
 *
 * Format `v2.<base64 iv>.<base64 ciphertext+tag>`, sealed with additional data naming what the
 * value is (`purpose`) and which row holds it (`id`): a sealed value copied into another row, or
 * into a column of another purpose, fails to open. Any other format is refused; how a format changes
 * across a deploy: docs/design/format-changes.md.
 */
export interface SealBinding {
  /** What the value is, e.g. `webhook-secret`. */
  purpose: string;
  /** The row that holds it. */
  id: string;
}

const CURRENT = "v2";

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

/** JSON of the pair: no purpose or id can be chosen so that two bindings encode alike. */
function additionalData(binding: SealBinding): Uint8Array {
  return utf8(JSON.stringify(["lingua-sealed", binding.purpose, binding.id]));
}

function parts(sealed: string): { iv: Uint8Array; cipher: Uint8Array } {
  const [found, iv, cipher, extra] = sealed.split(".");
  if (found !== CURRENT || !iv || !cipher || extra !== undefined)
    throw new Error("Unrecognised sealed value");
  return { iv: fromBase64(iv), cipher: fromBase64(cipher) };
}

export async function seal(plaintext: string, secret: string, binding: SealBinding): Promise<string> {
  const iv = randomBytes(12);
  const cipher = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: additionalData(binding) },
    await importKey(secret),
    utf8(plaintext),
  );
  return `${CURRENT}.${toBase64(iv)}.${toBase64(cipher)}`;
}

/** Opens a value sealed for exactly this binding; anything else throws. */
export async function unseal(sealed: string, secret: string, binding: SealBinding): Promise<string> {
  const { iv, cipher } = parts(sealed);
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv, additionalData: additionalData(binding) },
    await importKey(secret),
    cipher,
  );
  return new TextDecoder().decode(plain);
}
