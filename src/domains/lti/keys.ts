import { and, eq, gt, isNotNull, or } from "drizzle-orm";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { ltiKeys } from "../../db/schema";
import type { Env } from "../../env";
import { config } from "../../platform/config";
import { ltiPrivateKeyBinding } from "../../platform/crypto/sealed-values";
import { seal, unseal } from "../../platform/crypto/sealing";
import { database } from "../../platform/db";
import { nowIso } from "../../platform/ids";

/** A rotated-out key stays in the JWKS this long, for platforms that cached it. */
export const RETIRED_KEY_PUBLISHED_MS = 7 * 86_400_000;
/** How long an isolate signs with the key it read before looking again (a rotation elsewhere). */
const CURRENT_KEY_CACHE_MS = 60_000;
const CURRENT = "current";

/** A public key as the JWKS lists it. */
export interface PublishedJwk {
  kty: "RSA";
  kid: string;
  alg: "RS256";
  use: "sig";
  n: string;
  e: string;
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

let cached: { key: SigningKey; until: number } | null = null;

type KeyRow = typeof ltiKeys.$inferSelect;

/** A fresh RS256 key pair as a row: public JWK published, private JWK sealed. */
async function newKeyRow(env: Env, slot: string | null): Promise<KeyRow> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", {
    modulusLength: 2048,
    extractable: true,
  });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  return {
    id: kid,
    currentSlot: slot,
    publicJwk: { kty: publicJwk.kty, n: publicJwk.n, e: publicJwk.e, kid, alg: "RS256", use: "sig" },
    privateKeySealed: await seal(
      JSON.stringify(privateJwk),
      config(env).encryptionKey,
      ltiPrivateKeyBinding(kid),
    ),
    createdAt: nowIso(),
    retiredAt: null,
    publishedUntil: null,
  };
}

async function currentRow(env: Env): Promise<KeyRow | undefined> {
  return database(env.DB).select().from(ltiKeys).where(eq(ltiKeys.currentSlot, CURRENT)).get();
}

/**
 * The current key's row, generated on first need. Two isolates generating at once both insert with
 * the unique `current_slot`; one insert wins, the other is ignored, and both read the winner.
 */
export async function ensureCurrentKey(env: Env): Promise<KeyRow> {
  const existing = await currentRow(env);
  if (existing) return existing;
  const fresh = await newKeyRow(env, CURRENT);
  await database(env.DB).insert(ltiKeys).values(fresh).onConflictDoNothing().run();
  const winner = await currentRow(env);
  if (!winner) throw new Error("no current LTI key after generating one");
  return winner;
}

/** The key the tool signs with now (client assertions). */
export async function currentSigningKey(env: Env): Promise<SigningKey> {
  if (cached && cached.until > Date.now()) return cached.key;
  const row = await ensureCurrentKey(env);
  const privateJwk = JSON.parse(
    await unseal(row.privateKeySealed, config(env).encryptionKey, ltiPrivateKeyBinding(row.id)),
  ) as JWK;
  const key = { kid: row.id, privateKey: (await importJWK(privateJwk, "RS256")) as CryptoKey };
  cached = { key, until: Date.now() + CURRENT_KEY_CACHE_MS };
  return key;
}

/** The public keys platforms may verify with: the current one and those retired less than 7 days ago. */
export async function publishedKeys(env: Env): Promise<PublishedJwk[]> {
  await ensureCurrentKey(env);
  const rows = await database(env.DB)
    .select({ jwk: ltiKeys.publicJwk, slot: ltiKeys.currentSlot, createdAt: ltiKeys.createdAt })
    .from(ltiKeys)
    .where(
      or(
        eq(ltiKeys.currentSlot, CURRENT),
        and(isNotNull(ltiKeys.publishedUntil), gt(ltiKeys.publishedUntil, nowIso())),
      ),
    );
  // The current key first, then the others newest first.
  rows.sort((a, b) =>
    a.slot === b.slot ? b.createdAt.localeCompare(a.createdAt) : a.slot === CURRENT ? -1 : 1,
  );
  return rows.map((r) => r.jwk as unknown as PublishedJwk);
}

/**
 * Makes a new key current; the previous one stays published for 7 days. One D1 batch: the old key
 * leaves the slot and the new one takes it, so there is never a moment without a current key.
 */
export async function rotateKeys(env: Env): Promise<{ current: KeyRow; retired: KeyRow | null }> {
  await ensureCurrentKey(env);
  const db = database(env.DB);
  const fresh = await newKeyRow(env, CURRENT);
  const now = Date.now();
  const [retired] = await db.batch([
    db
      .update(ltiKeys)
      .set({
        currentSlot: null,
        retiredAt: nowIso(now),
        publishedUntil: nowIso(now + RETIRED_KEY_PUBLISHED_MS),
      })
      .where(eq(ltiKeys.currentSlot, CURRENT))
      .returning(),
    db.insert(ltiKeys).values(fresh),
  ]);
  cached = null;
  return { current: fresh, retired: retired[0] ?? null };
}
