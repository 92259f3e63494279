import { eq } from "drizzle-orm";
import { sealingUpgrades } from "../../db/schema";
import type { Env } from "../../env";
import { config } from "../config";
import { type Database, database } from "../db";
import { nowIso } from "../ids";
import type { ServiceContext } from "../service/context";
import { isLegacySealed, type SealBinding, seal, unseal, unsealLegacy } from "./sealing";

/** The purposes of sealed values, named in their additional data. */
export const SEAL_PURPOSES = {
  webhookSecret: "webhook-secret",
  idempotentResponse: "idempotent-response",
  ssoClientSecret: "sso-client-secret",
  ltiPrivateKey: "lti-private-key",
  ltiAccessToken: "lti-access-token",
} as const;

/**
 * Every column that holds sealed values, with the row id each value is bound to. A new sealed
 * column is added here, so that the re-seal covers it.
 */
const SEALED_COLUMNS = [
  { table: "webhooks", column: "secret_sealed", ids: ["id"], purpose: SEAL_PURPOSES.webhookSecret },
  { table: "webhooks", column: "previous_secret_sealed", ids: ["id"], purpose: SEAL_PURPOSES.webhookSecret },
  {
    table: "idempotency_keys",
    column: "response_sealed",
    // Bound to `${scope} ${key}` (see idempotentResponseBinding).
    ids: ["scope", "key"],
    purpose: SEAL_PURPOSES.idempotentResponse,
  },
  {
    table: "sso_connections",
    column: "client_secret_sealed",
    ids: ["institution_id"],
    purpose: SEAL_PURPOSES.ssoClientSecret,
  },
  { table: "lti_keys", column: "private_key_sealed", ids: ["id"], purpose: SEAL_PURPOSES.ltiPrivateKey },
  // Bound to `${consumer_id} ${scope}` (see ltiAccessTokenBinding).
  {
    table: "lti_access_tokens",
    column: "token_sealed",
    ids: ["consumer_id", "scope"],
    purpose: SEAL_PURPOSES.ltiAccessToken,
  },
] as const;

/** The binding of an idempotent response: its key's scope and the key (visible ASCII, no spaces). */
export function idempotentResponseBinding(scope: string, key: string): SealBinding {
  return { purpose: SEAL_PURPOSES.idempotentResponse, id: `${scope} ${key}` };
}

/** An institution's OIDC client secret, bound to the institution's SSO connection row. */
export function ssoClientSecretBinding(institutionId: string): SealBinding {
  return { purpose: SEAL_PURPOSES.ssoClientSecret, id: institutionId };
}

export function ltiPrivateKeyBinding(kid: string): SealBinding {
  return { purpose: SEAL_PURPOSES.ltiPrivateKey, id: kid };
}

export function ltiAccessTokenBinding(consumerId: string, scope: string): SealBinding {
  return { purpose: SEAL_PURPOSES.ltiAccessToken, id: `${consumerId} ${scope}` };
}

export function webhookSecretBinding(webhookId: string): SealBinding {
  return { purpose: SEAL_PURPOSES.webhookSecret, id: webhookId };
}

const LEGACY_RETIRED = "legacy-v1-retired";
/** Set by the first pass that finds no `v1.` value; cleared by one that finds some. */
const LEGACY_CLEAR = "legacy-v1-clear";
/**
 * How long passes must keep finding none before `v1.` is retired: workers of the previous version,
 * which still seal `v1.`, are gone well within it after a deployment.
 */
const RETIRE_AFTER_CLEAR_MS = 60 * 60 * 1000;
const BATCH = 100;

/** Once retired, always retired: remembered by the isolate. */
let legacyRetired = false;

async function isLegacyRetired(db: Database): Promise<boolean> {
  if (legacyRetired) return true;
  const row = await db
    .select({ name: sealingUpgrades.name })
    .from(sealingUpgrades)
    .where(eq(sealingUpgrades.name, LEGACY_RETIRED))
    .get();
  legacyRetired = Boolean(row);
  return legacyRetired;
}

/**
 * Opens a sealed value of the row `binding` names. A `v1.` value (sealed before the binding) is
 * still opened until the re-seal has converted them all, and refused from then on.
 */
export async function openSealed(env: Env, sealed: string, binding: SealBinding): Promise<string> {
  const key = config(env).encryptionKey;
  if (!isLegacySealed(sealed)) return unseal(sealed, key, binding);
  if (await isLegacyRetired(database(env.DB)))
    throw new Error(`A legacy sealed value in a ${binding.purpose} after the re-seal`);
  return unsealLegacy(sealed, key);
}

/**
 * The re-seal of `v1.` values as AD-bound `v2.` values, run by the minute cron until none is left
 * (a D1 SQL migration cannot run WebCrypto). Each value is replaced only if it is still the one
 * read, so a concurrent rotation wins. Once passes have found none for RETIRE_AFTER_CLEAR_MS, `v1.`
 * is retired for good: from then on no legacy value opens, whichever row it is put in. Returns how
 * many were re-sealed. The minute cron's sweep: `ctx.now()` is the run's scheduled time.
 */
export async function resealLegacyValues(ctx: ServiceContext): Promise<number> {
  const { db } = ctx;
  const now = ctx.now();
  if (await isLegacyRetired(db)) return 0;
  let resealed = 0;
  let left = false;
  for (const column of SEALED_COLUMNS) {
    const pass = await resealColumn(ctx, column);
    resealed += pass;
    if (pass === BATCH) left = true;
  }
  if (resealed > 0 || left) {
    await db.delete(sealingUpgrades).where(eq(sealingUpgrades.name, LEGACY_CLEAR)).run();
    return resealed;
  }
  await db
    .insert(sealingUpgrades)
    .values({ name: LEGACY_CLEAR, completedAt: nowIso(now) })
    .onConflictDoNothing()
    .run();
  const clear = await db
    .select({ since: sealingUpgrades.completedAt })
    .from(sealingUpgrades)
    .where(eq(sealingUpgrades.name, LEGACY_CLEAR))
    .get();
  if (clear && now - Date.parse(clear.since) >= RETIRE_AFTER_CLEAR_MS) {
    await db
      .insert(sealingUpgrades)
      .values({ name: LEGACY_RETIRED, completedAt: nowIso(now) })
      .onConflictDoNothing()
      .run();
    legacyRetired = true;
  }
  return 0;
}

/** Re-seals up to BATCH `v1.` values of one column; returns how many. */
async function resealColumn(
  ctx: ServiceContext,
  { table, column, ids, purpose }: (typeof SEALED_COLUMNS)[number],
) {
  const d1 = ctx.d1;
  const key = ctx.config.encryptionKey;
  const idList = ids.map((id, i) => `${id} AS id${i}`).join(", ");
  const { results } = await d1
    .prepare(`SELECT ${idList}, ${column} AS sealed FROM ${table} WHERE ${column} LIKE 'v1.%' LIMIT ?`)
    .bind(BATCH)
    .all<Record<string, string>>();
  const match = ids.map((id, i) => `${id} = ?${i + 2}`).join(" AND ");
  const updates = [];
  for (const row of results) {
    const sealed = row.sealed as string;
    const rowIds = ids.map((_, i) => row[`id${i}`] as string);
    const bound = await seal(await unsealLegacy(sealed, key), key, { purpose, id: rowIds.join(" ") });
    updates.push(
      d1
        .prepare(`UPDATE ${table} SET ${column} = ?1 WHERE ${match} AND ${column} = ?${ids.length + 2}`)
        .bind(bound, ...rowIds, sealed),
    );
  }
  if (updates.length > 0) await d1.batch(updates);
  return updates.length;
}
