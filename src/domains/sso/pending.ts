import { and, eq, inArray } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { SQLiteSelect } from "drizzle-orm/sqlite-core";
import { type SsoType, ssoConnections, ssoRequests } from "../../db/schema";
import { codeHash, newSecret, redeemOnce } from "../../platform/auth/single-use";
import { sha256Hex, timingSafeEqual, utf8 } from "../../platform/crypto/encoding";
import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import type { SsoConnection } from "../institutions/sso/service";
import { AUTH_SSO } from "./prefixes";
import { SsoRefusal } from "./refusal";
import { pendingRequestRows } from "./sql";

/**
 * The pending request of a sign-in: what a protocol's "begin" stores and its callback takes back,
 * single use, ten minutes, server-side (platform/auth/single-use.ts, the mechanism LTI's login state
 * uses too). Only `state` travels through the IdP; the nonce (or SAML request id), the PKCE verifier
 * and the browser binding stay here. The browser binding is a cookie set when the sign-in begins and
 * required back at the callback, so a sign-in cannot be finished in a browser other than the one that
 * started it (login CSRF).
 */

export const REQUEST_TTL_MS = 10 * 60_000;
export const STATE_COOKIE_PREFIX = "sso_state_";

export type PendingRequest = typeof ssoRequests.$inferSelect;

/**
 * `SameSite=None`: a SAML IdP posts the answer cross-site, and a cookie of any other kind would not
 * come back with it. `Path` covers every protocol's callback.
 */
export function stateCookie(state: string, value: string, maxAgeSeconds: number): string {
  return `${STATE_COOKIE_PREFIX}${state}=${value}; Path=${AUTH_SSO}; Max-Age=${maxAgeSeconds}; Secure; HttpOnly; SameSite=None`;
}

export interface StartedRequest {
  state: string;
  nonce: string;
  codeVerifier: string | null;
  /** The `Set-Cookie` value binding the request to this browser. */
  cookie: string;
}

/** Stores a new pending request of `protocol` for the institution; a PKCE verifier when `pkce`. */
export async function startRequest(
  ctx: ServiceContext,
  input: { institutionId: string; protocol: SsoType; pkce: boolean; nonce?: string },
): Promise<StartedRequest> {
  const state = newSecret();
  const nonce = input.nonce ?? newSecret();
  const codeVerifier = input.pkce ? newSecret() : null;
  const binding = newSecret();
  const now = ctx.now();
  await ctx.db
    .insert(ssoRequests)
    .values({
      state,
      institutionId: input.institutionId,
      protocol: input.protocol,
      browserBindingHash: await sha256Hex(binding),
      nonce,
      codeVerifier,
      expiresAt: now + REQUEST_TTL_MS,
      usedAt: null,
      createdAt: nowIso(now),
    })
    .run();
  return { state, nonce, codeVerifier, cookie: stateCookie(state, binding, REQUEST_TTL_MS / 1000) };
}

/** What each protocol keeps in a pending request: a PKCE verifier or not, and its own nonce when it has one. */
export type PendingShape = Record<SsoType, { pkce: boolean; nonce?: () => string }>;

/**
 * The beginning of a sign-in in one round trip: the active connection of the institution
 * `institutionIds` selects (a one-column subquery: the verified holder of a domain, or a slug's
 * institution) and, in the same batch, a pending request for it with the connection's protocol
 * (`shapes` says what each protocol stores). Null, and nothing stored, when there is no active
 * connection.
 */
export async function startRequestForConnection(
  ctx: ServiceContext,
  input: { institutionIds: SQLiteSelect; shapes: PendingShape },
): Promise<{ connection: SsoConnection; request: StartedRequest } | null> {
  const { db } = ctx;
  const state = newSecret();
  const binding = newSecret();
  const now = ctx.now();
  const byProtocol = Object.fromEntries(
    Object.entries(input.shapes).map(([protocol, shape]) => [
      protocol,
      { nonce: shape.nonce?.() ?? newSecret(), codeVerifier: shape.pkce ? newSecret() : null },
    ]),
  ) as Record<SsoType, { nonce: string; codeVerifier: string | null }>;
  const [, connections] = await db.batch([
    db.insert(ssoRequests).select(
      pendingRequestRows(
        {
          state,
          browserBindingHash: await sha256Hex(binding),
          expiresAt: now + REQUEST_TTL_MS,
          createdAt: nowIso(now),
          byProtocol,
        },
        input.institutionIds.getSQL(),
      ),
    ),
    db
      .select()
      .from(ssoConnections)
      .where(
        and(eq(ssoConnections.state, "active"), inArray(ssoConnections.institutionId, input.institutionIds)),
      ),
  ]);
  const connection = connections[0];
  if (!connection) return null;
  const { nonce, codeVerifier } = byProtocol[connection.type];
  return {
    connection,
    request: { state, nonce, codeVerifier, cookie: stateCookie(state, binding, REQUEST_TTL_MS / 1000) },
  };
}

/**
 * Takes the pending request `state` names for this institution and protocol (single use), checking
 * the browser's cookie. Refusals name why; a request of another institution or protocol is
 * `state_unknown` here and not spent.
 */
export async function takeRequest<A extends readonly BatchItem<"sqlite">[] = []>(
  ctx: ServiceContext,
  input: {
    state: string | undefined;
    institutionId: string;
    protocol: SsoType;
    /** The browser's `sso_state_<state>` cookie, if it sent one. */
    cookie: (state: string) => string | undefined;
    /** Reads to make in the same round trip (the settings the callback goes on with): `alongside`. */
    alongside?: A;
  },
): Promise<PendingRequest & { alongside: BatchResponse<A> }> {
  const { state, institutionId, protocol } = input;
  if (!state) throw new SsoRefusal("state_missing", "The identity provider's answer carries no state.");
  const redeemed = await redeemOnce(
    ctx.db,
    ssoRequests,
    {
      key: eq(ssoRequests.state, state),
      scope: and(eq(ssoRequests.institutionId, institutionId), eq(ssoRequests.protocol, protocol)),
      now: ctx.now(),
    },
    input.alongside,
  );
  const row = redeemed.row;
  if (!row || row.institutionId !== institutionId || row.protocol !== protocol)
    throw new SsoRefusal(
      "state_unknown",
      "The sign-in's state is not one Lingua issued; start the sign-in again.",
    );
  if (redeemed.outcome === "used")
    throw new SsoRefusal("state_used", "This sign-in was finished already; start the sign-in again.");
  if (redeemed.outcome !== "taken")
    throw new SsoRefusal("state_expired", "The sign-in took longer than 10 minutes; start it again.");
  const sent = input.cookie(state);
  if (!sent)
    throw new SsoRefusal(
      "browser_binding_missing",
      "The browser did not send back the cookie set when the sign-in began: finish the sign-in in the browser that started it (with cookies allowed).",
    );
  if (!timingSafeEqual(utf8(await codeHash(sent)), utf8(row.browserBindingHash)))
    throw new SsoRefusal(
      "browser_binding_mismatch",
      "This sign-in was started in another browser; start it again here.",
    );
  return { ...row, alongside: redeemed.alongside };
}
