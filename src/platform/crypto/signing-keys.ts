import { and, eq, gt, inArray, isNotNull, or, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { BoundedMap } from "../bounded-map";
import { nowIso } from "../ids";
import type { ServiceContext } from "../service/context";
import { type CertificateFields, certificateFields, selfSignedCertificate } from "./certificates";
import type { SealBinding } from "./sealing";
import { seal, unseal } from "./sealing";

/**
 * Signing keys that Lingua holds for someone else to verify (LTI client assertions, OIDC
 * `private_key_jwt`): per owner (a registration, an institution) one current key per algorithm, the
 * private half sealed, the public half published in the owner's JWKS with its thumbprint as `kid`;
 * a rotation retires the current key, which stays published for 7 days for verifiers that cached it.
 * Each domain keeps its keys in its own table of the same shape (`id`, `<owner>`, `currentSlot`,
 * `publicJwk`, `privateKeySealed`, `createdAt`, `retiredAt`, `publishedUntil`, unique on owner and
 * slot) and makes its store with `signingKeyStore`. A store made with `certificate` gives each key a
 * self-signed X.509 certificate, kept in the published JWK (`x5c`, `x5t`, `x5t#S256`): new keys at
 * creation, keys made before on their first use (no key is replaced).
 */

/** A rotated-out key stays in the JWKS this long, for verifiers that cached it. */
export const RETIRED_KEY_PUBLISHED_MS = 7 * 86_400_000;
/** How long an isolate signs with the key it read before looking again (a rotation elsewhere). */
const CURRENT_KEY_CACHE_MS = 60_000;

export type SigningAlg = "RS256" | "ES256";
export const SIGNING_ALGS: readonly SigningAlg[] = ["RS256", "ES256"];

/** How long a key's certificate is valid, from when it was made. */
export const CERTIFICATE_VALIDITY_MS = 2 * 365 * 86_400_000;
/** A certificate's `notBefore` is this much before it was made (verifiers' clocks differ). */
const CERTIFICATE_BACKDATE_MS = 5 * 60_000;

/** A public key as a JWKS lists it; with its certificate when the store makes certificates. */
export type PublishedJwk = (
  | { kty: "RSA"; kid: string; alg: "RS256"; use: "sig"; n: string; e: string }
  | { kty: "EC"; kid: string; alg: "ES256"; use: "sig"; crv: "P-256"; x: string; y: string }
) &
  Partial<CertificateFields>;

export interface SigningKey {
  kid: string;
  alg: SigningAlg;
  privateKey: CryptoKey;
  /** The key's certificate's thumbprints (SHA-1, SHA-256; base64url), when the store makes certificates. */
  x5t?: string;
  x5tS256?: string;
}

export interface KeyRow {
  id: string;
  currentSlot: string | null;
  publicJwk: Record<string, unknown>;
  privateKeySealed: string;
  createdAt: string;
  retiredAt: string | null;
  publishedUntil: string | null;
}

/** The columns a key table has (see above); `owner` is its owner column. */
export type KeyTable = SQLiteTable & {
  id: SQLiteColumn;
  currentSlot: SQLiteColumn;
  publicJwk: SQLiteColumn;
  privateKeySealed: SQLiteColumn;
  createdAt: SQLiteColumn;
  retiredAt: SQLiteColumn;
  publishedUntil: SQLiteColumn;
};

/** RS256 keeps the slot name `current` (the keys made before there was a second algorithm). */
function slotOf(alg: SigningAlg): string {
  return alg === "RS256" ? "current" : `current:${alg}`;
}

function algOfSlot(slot: string): SigningAlg {
  return slot === "current" ? "RS256" : (slot.slice("current:".length) as SigningAlg);
}

export interface SigningKeyStore {
  /** The owner's current key of `alg`, generated on first need. The owner must exist (foreign key). */
  ensureCurrentKey(ctx: ServiceContext, owner: string, alg?: SigningAlg): Promise<KeyRow>;
  /** The key the owner signs with now. */
  currentSigningKey(ctx: ServiceContext, owner: string, alg?: SigningAlg): Promise<SigningKey>;
  /** The owner's published keys: current ones first, then those retired less than 7 days ago, newest first. */
  publishedKeys(ctx: ServiceContext, owner: string): Promise<PublishedJwk[]>;
  /**
   * Replaces each current key (at least the RS256 one) by a new one in one D1 batch with `alsoRun`;
   * the old ones stay published for 7 days. Answers the RS256 (or first) pair.
   */
  rotate(
    ctx: ServiceContext,
    owner: string,
    alsoRun?: (ctx: ServiceContext) => unknown[],
  ): Promise<{ current: KeyRow; retired: KeyRow | null }>;
}

export function signingKeyStore(options: {
  table: KeyTable;
  owner: SQLiteColumn;
  /** The owner column's property name in the table (for inserts). */
  ownerKey: string;
  binding: (kid: string) => SealBinding;
  /** Names the store in errors. */
  name: string;
  /** A self-signed certificate per key, its subject's common name made of the owner. */
  certificate?: { commonName: (owner: string) => string };
}): SigningKeyStore {
  const { table, owner: ownerColumn, ownerKey, binding, name, certificate } = options;
  const cached = new BoundedMap<string, { key: SigningKey; until: number }>(1_000);
  const columns = {
    id: table.id,
    currentSlot: table.currentSlot,
    publicJwk: table.publicJwk,
    privateKeySealed: table.privateKeySealed,
    createdAt: table.createdAt,
    retiredAt: table.retiredAt,
    publishedUntil: table.publishedUntil,
  };

  /** The certificate of a key pair as JWK members, made now; none when the store makes none. */
  async function certify(
    ctx: ServiceContext,
    owner: string,
    alg: SigningAlg,
    keys: { privateKey: CryptoKey; publicKey: CryptoKey },
  ): Promise<CertificateFields | Record<string, never>> {
    if (!certificate) return {};
    const notBefore = ctx.now() - CERTIFICATE_BACKDATE_MS;
    const der = await selfSignedCertificate({
      alg,
      ...keys,
      commonName: certificate.commonName(owner),
      notBefore: new Date(notBefore),
      notAfter: new Date(notBefore + CERTIFICATE_VALIDITY_MS),
    });
    return certificateFields(der);
  }

  async function newKeyRow(ctx: ServiceContext, owner: string, alg: SigningAlg) {
    const { publicKey, privateKey } = await generateKeyPair(
      alg,
      alg === "RS256" ? { modulusLength: 2048, extractable: true } : { extractable: true },
    );
    const jwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(jwk);
    const publicJwk = {
      ...(alg === "RS256"
        ? { kty: jwk.kty, n: jwk.n, e: jwk.e, kid, alg, use: "sig" }
        : { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg, use: "sig" }),
      ...(await certify(ctx, owner, alg, { privateKey, publicKey })),
    };
    const row: KeyRow = {
      id: kid,
      currentSlot: slotOf(alg),
      publicJwk,
      privateKeySealed: await seal(
        JSON.stringify(await exportJWK(privateKey)),
        ctx.config.encryptionKey,
        binding(kid),
      ),
      createdAt: nowIso(ctx.now()),
      retiredAt: null,
      publishedUntil: null,
    };
    return { row, values: { ...row, [ownerKey]: owner } as never };
  }

  const where = (owner: string, ...more: SQL[]) => and(eq(ownerColumn, owner), ...more);

  /**
   * `rows` with certificates (when the store makes them): a key made before certificates gets one on
   * its first use, written only where the row has none yet; then the rows as stored (of two isolates
   * certifying the same key at once, one certificate stays, and both answer it).
   */
  async function certified(ctx: ServiceContext, owner: string, rows: KeyRow[]): Promise<KeyRow[]> {
    const bare = certificate ? rows.filter((row) => !("x5c" in row.publicJwk)) : [];
    if (bare.length === 0) return rows;
    const { db } = ctx;
    await Promise.all(
      bare.map(async (row) => {
        const jwk = row.publicJwk as unknown as PublishedJwk;
        const privateJwk = JSON.parse(
          await unseal(row.privateKeySealed, ctx.config.encryptionKey, binding(row.id)),
        ) as JWK;
        const keys = {
          privateKey: (await importJWK(privateJwk, jwk.alg)) as CryptoKey,
          publicKey: (await importJWK({ ...jwk, ext: true }, jwk.alg)) as CryptoKey,
        };
        const publicJwk = { ...row.publicJwk, ...(await certify(ctx, owner, jwk.alg, keys)) };
        await db
          .update(table)
          .set({ publicJwk } as never)
          .where(and(eq(table.id, row.id), sql`json_extract(${table.publicJwk}, '$.x5c') IS NULL`))
          .run();
      }),
    );
    const fresh = (await db
      .select(columns)
      .from(table)
      .where(
        inArray(
          table.id,
          bare.map((row) => row.id),
        ),
      )) as KeyRow[];
    const byId = new Map(fresh.map((row) => [row.id, row]));
    return rows.map((row) => byId.get(row.id) ?? row);
  }

  async function currentRows(ctx: ServiceContext, owner: string, alg?: SigningAlg): Promise<KeyRow[]> {
    const rows = (await ctx.db
      .select(columns)
      .from(table)
      .where(
        where(owner, alg ? eq(table.currentSlot, slotOf(alg)) : isNotNull(table.currentSlot)) as SQL,
      )) as KeyRow[];
    return certified(ctx, owner, rows);
  }

  async function ensureCurrentKey(ctx: ServiceContext, owner: string, alg: SigningAlg = "RS256") {
    const [existing] = await currentRows(ctx, owner, alg);
    if (existing) return existing;
    // Two isolates at once: both insert under the unique (owner, slot); one wins, both read it.
    const fresh = await newKeyRow(ctx, owner, alg);
    await ctx.db.insert(table).values(fresh.values).onConflictDoNothing().run();
    const [winner] = await currentRows(ctx, owner, alg);
    if (!winner) throw new Error(`no current ${name} key after generating one`);
    return winner;
  }

  async function currentSigningKey(ctx: ServiceContext, owner: string, alg: SigningAlg = "RS256") {
    const cacheKey = `${owner} ${alg}`;
    const hit = cached.get(cacheKey);
    if (hit && hit.until > ctx.now()) return hit.key;
    const row = await ensureCurrentKey(ctx, owner, alg);
    const privateJwk = JSON.parse(
      await unseal(row.privateKeySealed, ctx.config.encryptionKey, binding(row.id)),
    ) as JWK;
    const published = row.publicJwk as unknown as PublishedJwk;
    const key: SigningKey = {
      kid: row.id,
      alg,
      privateKey: (await importJWK(privateJwk, alg)) as CryptoKey,
      ...(published.x5t ? { x5t: published.x5t, x5tS256: published["x5t#S256"] } : {}),
    };
    cached.set(cacheKey, { key, until: ctx.now() + CURRENT_KEY_CACHE_MS });
    return key;
  }

  async function publishedKeys(ctx: ServiceContext, owner: string): Promise<PublishedJwk[]> {
    await ensureCurrentKey(ctx, owner);
    const rows = await certified(
      ctx,
      owner,
      (await ctx.db
        .select(columns)
        .from(table)
        .where(
          where(
            owner,
            or(
              isNotNull(table.currentSlot),
              and(isNotNull(table.publishedUntil), gt(table.publishedUntil, nowIso(ctx.now()))),
            ) as SQL,
          ) as SQL,
        )) as KeyRow[],
    );
    // Current keys first (RS256 before others), then the retired ones newest first.
    const rank = (row: KeyRow) => (row.currentSlot === null ? 2 : row.currentSlot === "current" ? 0 : 1);
    rows.sort((a, b) => rank(a) - rank(b) || b.createdAt.localeCompare(a.createdAt));
    return rows.map((row) => row.publicJwk as unknown as PublishedJwk);
  }

  async function rotate(
    ctx: ServiceContext,
    owner: string,
    alsoRun: (ctx: ServiceContext) => unknown[] = () => [],
  ): Promise<{ current: KeyRow; retired: KeyRow | null }> {
    await ensureCurrentKey(ctx, owner);
    const algs = (await currentRows(ctx, owner)).map((row) => algOfSlot(row.currentSlot as string));
    const { db } = ctx;
    const now = ctx.now();
    const fresh = await Promise.all(algs.map((alg) => newKeyRow(ctx, owner, alg)));
    // The old key leaves the slot and the new one takes it in one batch: never a moment without a
    // current key (two rotations at once: the second retires the first's new key).
    const statements = algs.flatMap((alg, index) => [
      db
        .update(table)
        .set({
          currentSlot: null,
          retiredAt: nowIso(now),
          publishedUntil: nowIso(now + RETIRED_KEY_PUBLISHED_MS),
        } as never)
        .where(where(owner, eq(table.currentSlot, slotOf(alg))) as SQL)
        .returning(columns),
      db.insert(table).values((fresh[index] as { values: never }).values),
    ]);
    const results = (await db.batch([...statements, ...alsoRun(ctx)] as never)) as unknown[];
    for (const alg of algs) cached.delete(`${owner} ${alg}`);
    const main = Math.max(0, algs.indexOf("RS256"));
    const retired = (results[main * 2] as KeyRow[])[0] ?? null;
    return { current: (fresh[main] as { row: KeyRow }).row, retired };
  }

  return { ensureCurrentKey, currentSigningKey, publishedKeys, rotate };
}
