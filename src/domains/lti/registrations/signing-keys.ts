import { and, eq, gt, isNotNull, or } from "drizzle-orm";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { ltiKeys } from "../../../db/schema";
import { enforce } from "../../../platform/auth/policy";
import { BoundedMap } from "../../../platform/bounded-map";
import { ltiPrivateKeyBinding } from "../../../platform/crypto/sealed-values";
import { seal, unseal } from "../../../platform/crypto/sealing";
import { ApiError } from "../../../platform/errors";
import { nowIso } from "../../../platform/ids";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { mayRotateKeys } from "../policy";
import { consumerById, raiseCredentialsVersion } from "./service";

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
async function newKeyRow(ctx: ServiceContext, consumerId: string): Promise<KeyRow> {
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
      ctx.config.encryptionKey,
      ltiPrivateKeyBinding(kid),
    ),
    createdAt: nowIso(ctx.now()),
    retiredAt: null,
    publishedUntil: null,
  };
}

async function currentRow(ctx: ServiceContext, consumerId: string): Promise<KeyRow | undefined> {
  return ctx.db
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
export async function ensureCurrentKey(ctx: ServiceContext, consumerId: string): Promise<KeyRow> {
  const existing = await currentRow(ctx, consumerId);
  if (existing) return existing;
  const fresh = await newKeyRow(ctx, consumerId);
  await ctx.db.insert(ltiKeys).values(fresh).onConflictDoNothing().run();
  const winner = await currentRow(ctx, consumerId);
  if (!winner) throw new Error("no current LTI key after generating one");
  return winner;
}

/** The key a registration signs with now (its client assertions). */
export async function currentSigningKey(ctx: ServiceContext, consumerId: string): Promise<SigningKey> {
  const hit = cached.get(consumerId);
  if (hit && hit.until > ctx.now()) return hit.key;
  const row = await ensureCurrentKey(ctx, consumerId);
  const privateJwk = JSON.parse(
    await unseal(row.privateKeySealed, ctx.config.encryptionKey, ltiPrivateKeyBinding(row.id)),
  ) as JWK;
  const key = { kid: row.id, privateKey: (await importJWK(privateJwk, "RS256")) as CryptoKey };
  cached.set(consumerId, { key, until: ctx.now() + CURRENT_KEY_CACHE_MS });
  return key;
}

/**
 * The public keys a platform may verify the registration's assertions with: its current one and those
 * retired less than 7 days ago.
 */
export async function publishedKeys(ctx: ServiceContext, consumerId: string): Promise<PublishedJwk[]> {
  await ensureCurrentKey(ctx, consumerId);
  const rows = await ctx.db
    .select({ jwk: ltiKeys.publicJwk, slot: ltiKeys.currentSlot, createdAt: ltiKeys.createdAt })
    .from(ltiKeys)
    .where(
      and(
        eq(ltiKeys.consumerId, consumerId),
        or(
          eq(ltiKeys.currentSlot, CURRENT),
          and(isNotNull(ltiKeys.publishedUntil), gt(ltiKeys.publishedUntil, nowIso(ctx.now()))),
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
async function rotateKeys(
  ctx: ServiceContext,
  consumerId: string,
): Promise<{ current: KeyRow; retired: KeyRow | null }> {
  await ensureCurrentKey(ctx, consumerId);
  const { db } = ctx;
  const fresh = await newKeyRow(ctx, consumerId);
  const now = ctx.now();
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
    // Tokens obtained with the old key's assertions go unused: the next request asks with the new key.
    raiseCredentialsVersion(ctx, consumerId),
  ]);
  cached.delete(consumerId);
  return { current: fresh, retired: retired[0] ?? null };
}

/** The keys of a registration (any, for a public JWKS read): unknown registration, 404. */
export async function registrationKeys(ctx: ServiceContext, id: string): Promise<PublishedJwk[]> {
  const consumer = await consumerById(ctx, id);
  if (!consumer) throw new ApiError("not_found", `No LTI registration ${id}.`);
  return publishedKeys(ctx, consumer.id);
}

/** Rotates a registration's key where `mayRotateKeys` allows it; answers the keys after the rotation. */
export async function rotateRegistrationKeys(ctx: PrincipalContext, id: string) {
  enforce(mayRotateKeys(ctx.principal, await consumerById(ctx, id), id));
  const { current, retired } = await rotateKeys(ctx, id);
  return { current, retired, keys: await publishedKeys(ctx, id) };
}
