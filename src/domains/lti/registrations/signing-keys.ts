import { and, eq, gt, isNotNull, or } from "drizzle-orm";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { ltiKeys } from "../../../db/schema";
import type { Env } from "../../../env";
import { BoundedMap } from "../../../platform/bounded-map";
import { config } from "../../../platform/config";
import { ltiPrivateKeyBinding } from "../../../platform/crypto/sealed-values";
import { seal, unseal } from "../../../platform/crypto/sealing";
import { database } from "../../../platform/db";
import { nowIso } from "../../../platform/ids";

/**
 * Each registration signs with its own keys, published at its own JWKS URL: a platform configured with
 * one registration's JWKS URL verifies that registration's client assertions only, so an institution
 * that registers another's (issuer, client id) cannot obtain tokens of that platform with them.
 */

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

/** Registrations whose signing key an isolate keeps imported (the least recently read go first). */
const CACHED_KEYS = 1_000;
/** Per registration: the signing key this isolate read and until when it uses it without looking again. */
const cached = new BoundedMap<string, { key: SigningKey; until: number }>(CACHED_KEYS);

type KeyRow = typeof ltiKeys.$inferSelect;

/** A fresh RS256 key pair as a row: public JWK published, private JWK sealed. */
async function newKeyRow(env: Env, consumerId: string): Promise<KeyRow> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", {
    modulusLength: 2048,
    extractable: true,
  });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  return {
    id: kid,
    consumerId,
    currentSlot: CURRENT,
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

async function currentRow(env: Env, consumerId: string): Promise<KeyRow | undefined> {
  return database(env.DB)
    .select()
    .from(ltiKeys)
    .where(and(eq(ltiKeys.consumerId, consumerId), eq(ltiKeys.currentSlot, CURRENT)))
    .get();
}

/**
 * The registration's current key, generated on first need (its first JWKS read or client assertion).
 * Two isolates generating at once both insert under the unique (consumer_id, current_slot); one insert
 * wins, the other is ignored, and both read the winner. The registration must exist (foreign key).
 */
export async function ensureCurrentKey(env: Env, consumerId: string): Promise<KeyRow> {
  const existing = await currentRow(env, consumerId);
  if (existing) return existing;
  const fresh = await newKeyRow(env, consumerId);
  await database(env.DB).insert(ltiKeys).values(fresh).onConflictDoNothing().run();
  const winner = await currentRow(env, consumerId);
  if (!winner) throw new Error("no current LTI key after generating one");
  return winner;
}

/** The key a registration signs with now (its client assertions). */
export async function currentSigningKey(env: Env, consumerId: string): Promise<SigningKey> {
  const hit = cached.get(consumerId);
  if (hit && hit.until > Date.now()) return hit.key;
  const row = await ensureCurrentKey(env, consumerId);
  const privateJwk = JSON.parse(
    await unseal(row.privateKeySealed, config(env).encryptionKey, ltiPrivateKeyBinding(row.id)),
  ) as JWK;
  const key = { kid: row.id, privateKey: (await importJWK(privateJwk, "RS256")) as CryptoKey };
  cached.set(consumerId, { key, until: Date.now() + CURRENT_KEY_CACHE_MS });
  return key;
}

/**
 * The public keys a platform may verify the registration's assertions with: its current one and those
 * retired less than 7 days ago.
 */
export async function publishedKeys(env: Env, consumerId: string): Promise<PublishedJwk[]> {
  await ensureCurrentKey(env, consumerId);
  const rows = await database(env.DB)
    .select({ jwk: ltiKeys.publicJwk, slot: ltiKeys.currentSlot, createdAt: ltiKeys.createdAt })
    .from(ltiKeys)
    .where(
      and(
        eq(ltiKeys.consumerId, consumerId),
        or(
          eq(ltiKeys.currentSlot, CURRENT),
          and(isNotNull(ltiKeys.publishedUntil), gt(ltiKeys.publishedUntil, nowIso())),
        ),
      ),
    );
  // The current key first, then the others newest first.
  rows.sort((a, b) =>
    a.slot === b.slot ? b.createdAt.localeCompare(a.createdAt) : a.slot === CURRENT ? -1 : 1,
  );
  return rows.map((r) => r.jwk as unknown as PublishedJwk);
}

/**
 * Makes a new key the registration's current one; the previous one stays published for 7 days. One D1
 * batch: the old key leaves the slot and the new one takes it, so there is never a moment without a
 * current key (two rotations at once: the second retires the first's new key).
 */
export async function rotateKeys(
  env: Env,
  consumerId: string,
): Promise<{ current: KeyRow; retired: KeyRow | null }> {
  await ensureCurrentKey(env, consumerId);
  const db = database(env.DB);
  const fresh = await newKeyRow(env, consumerId);
  const now = Date.now();
  const [retired] = await db.batch([
    db
      .update(ltiKeys)
      .set({
        currentSlot: null,
        retiredAt: nowIso(now),
        publishedUntil: nowIso(now + RETIRED_KEY_PUBLISHED_MS),
      })
      .where(and(eq(ltiKeys.consumerId, consumerId), eq(ltiKeys.currentSlot, CURRENT)))
      .returning(),
    db.insert(ltiKeys).values(fresh),
  ]);
  cached.delete(consumerId);
  return { current: fresh, retired: retired[0] ?? null };
}
