import { z } from "@hono/zod-openapi";
import { and, eq, lt } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { idempotencyKeys } from "../../db/schema";
import type { AppEnv } from "../../env";
import { sha256Hex } from "../crypto/encoding";
import { idempotentResponseBinding, openSealed } from "../crypto/sealed-values";
import { seal } from "../crypto/sealing";
import { ApiError, validationError } from "../errors";
import type { ServiceContext } from "../service/context";
import { principalContext } from "./context-middleware";

const RETENTION_MS = 24 * 60 * 60 * 1000;
/** A first request that died without answering releases its key after this long. */
const LOCK_MS = 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Response headers worth replaying; the rest (rate limit, request id) describe the new request. */
const REPLAYED_HEADERS = ["content-type", "location"];

export const idempotencyHeaderShape = {
  "Idempotency-Key": z
    .string()
    .optional()
    .openapi({
      param: { name: "Idempotency-Key", in: "header" },
      description:
        "Makes the request safe to retry for 24 hours, per token: the same key with the same body replays the first response (with `Idempotent-Replayed: true`); with another body it is 422; while the first is in flight, 409.",
      example: "9f0c1c1e-6a3b-4d5e-9b7a-0e7f3e1a2b3c",
    }),
};

/** Declared on the success responses of every operation that uses `idempotent` (see tokenRoute). */
export const REPLAYED_HEADER_DOC = {
  description:
    "`true` when this is the stored first response to the same `Idempotency-Key` and body, replayed; absent otherwise.",
  schema: { type: "string" as const, enum: ["true"] },
};

interface StoredResponse {
  headers: Record<string, string>;
  body: string;
}

/**
 * IETF httpapi-idempotency-key-header for POSTs that create something. State lives in D1 under a
 * unique (scope, key) row, so concurrent twins race on the insert and exactly one proceeds.
 *
 * The scope is the token, not its owner: a replay hands back the first response whole (a new
 * token's plain value included) without running the handler's checks again, so another token of
 * the same user — one with fewer abilities — must never reach it.
 */
export const idempotent = createMiddleware<AppEnv>(async function idempotent(c, next) {
  const key = c.req.header("Idempotency-Key");
  if (key === undefined) return next();
  if (!KEY_PATTERN.test(key)) {
    throw validationError([
      { path: "Idempotency-Key", message: "must be 1 to 255 visible ASCII characters" },
    ]);
  }
  const ctx = principalContext(c);
  const method = c.req.method;
  const path = new URL(c.req.url).pathname;
  const slot: KeySlot = {
    scope: `token:${ctx.principal.token.id}`,
    key,
    method,
    path,
    requestHash: await sha256Hex(`${method} ${path}\n${await c.req.text()}`),
  };

  const replayed = await claimKey(ctx, slot);
  if (replayed) return replayed;
  await next();
  await storeOutcome(ctx, c.res, slot);
});

interface KeySlot {
  scope: string;
  key: string;
  method: string;
  path: string;
  requestHash: string;
}

function slotWhere({ scope, key }: KeySlot) {
  return and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key));
}

function stillInFlight(): ApiError {
  return new ApiError(
    "idempotency_in_flight",
    "A request with this Idempotency-Key is still in flight; retry shortly.",
  );
}

/**
 * Claims the key for this request (an insert, or the take-over of an expired row), or answers why
 * it cannot: the stored response to replay, or a conflict thrown as a problem. Null means claimed.
 */
async function claimKey(ctx: ServiceContext, slot: KeySlot): Promise<Response | null> {
  const { db } = ctx;
  const now = ctx.now();
  const fresh = {
    method: slot.method,
    path: slot.path,
    requestHash: slot.requestHash,
    lockedUntil: now + LOCK_MS,
    createdAt: now,
    expiresAt: now + RETENTION_MS,
  };
  const claimed = await db
    .insert(idempotencyKeys)
    .values({ scope: slot.scope, key: slot.key, ...fresh })
    .onConflictDoUpdate({
      // An expired key is free again; a live one is left alone and inspected below.
      target: [idempotencyKeys.scope, idempotencyKeys.key],
      set: { ...fresh, responseStatus: null, responseSealed: null },
      setWhere: lt(idempotencyKeys.expiresAt, now),
    })
    .run();
  if (claimed.meta.changes > 0) return null;

  const existing = await db.select().from(idempotencyKeys).where(slotWhere(slot)).get();
  if (!existing)
    throw new ApiError(
      "idempotency_in_flight",
      "The request with this Idempotency-Key is being replaced; retry.",
    );
  if (existing.requestHash !== slot.requestHash) {
    throw new ApiError(
      "idempotency_key_reused",
      "This Idempotency-Key was used with a different request within the last 24 hours.",
    );
  }
  if (existing.responseStatus !== null && existing.responseSealed !== null) {
    const stored = JSON.parse(
      await openSealed(ctx.env, existing.responseSealed, idempotentResponseBinding(slot.scope, slot.key)),
    ) as StoredResponse;
    return replay(existing.responseStatus, stored);
  }
  if (existing.lockedUntil > now) throw stillInFlight();
  // The first request died without an answer: take over its lock, unless a twin just did.
  const takeover = await db
    .update(idempotencyKeys)
    .set({ lockedUntil: now + LOCK_MS })
    .where(and(slotWhere(slot), eq(idempotencyKeys.lockedUntil, existing.lockedUntil)))
    .run();
  if (takeover.meta.changes === 0) throw stillInFlight();
  return null;
}

/** Keeps the handler's answer, sealed, for replays; or frees the key when nothing may have been done. */
async function storeOutcome(ctx: ServiceContext, res: Response, slot: KeySlot): Promise<void> {
  const { db } = ctx;
  if (res.status >= 500 || res.status === 429) {
    // Nothing was done, or we cannot know: let the client retry with the same key.
    await db.delete(idempotencyKeys).where(slotWhere(slot)).run();
    return;
  }
  const body = await res.clone().text();
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.headers.get(name);
    if (value) headers[name] = value;
  }
  const sealed = await seal(
    JSON.stringify({ headers, body } satisfies StoredResponse),
    ctx.config.encryptionKey,
    idempotentResponseBinding(slot.scope, slot.key),
  );
  await db
    .update(idempotencyKeys)
    .set({ responseStatus: res.status, responseSealed: sealed })
    .where(slotWhere(slot))
    .run();
}

function replay(status: number, stored: StoredResponse): Response {
  const headers = new Headers(stored.headers);
  headers.set("Idempotent-Replayed", "true");
  return new Response(stored.body, { status, headers });
}

/** Sweeps keys past their 24 hours (the minute cron: `ctx.now()` is the run's scheduled time). */
export async function purgeExpiredIdempotencyKeys(ctx: ServiceContext): Promise<number> {
  const result = await ctx.db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, ctx.now())).run();
  return result.meta.changes;
}
