import { and, eq } from "drizzle-orm";
import { type SsoType, ssoRequests } from "../../db/schema";
import { codeHash, newSecret, redeemOnce } from "../../platform/auth/single-use";
import { sha256Hex, timingSafeEqual, utf8 } from "../../platform/crypto/encoding";
import { nowIso } from "../../platform/ids";
import type { ServiceContext } from "../../platform/service/context";
import { AUTH_SSO } from "./prefixes";
import { SsoRefusal } from "./refusal";

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

/**
 * Takes the pending request `state` names for this institution and protocol (single use), checking
 * the browser's cookie. Refusals name why; a request of another institution or protocol is
 * `state_unknown` here and not spent.
 */
export async function takeRequest(
  ctx: ServiceContext,
  input: {
    state: string | undefined;
    institutionId: string;
    protocol: SsoType;
    /** The browser's `sso_state_<state>` cookie, if it sent one. */
    cookie: (state: string) => string | undefined;
  },
): Promise<PendingRequest> {
  const { state, institutionId, protocol } = input;
  if (!state) throw new SsoRefusal("state_missing", "The identity provider's answer carries no state.");
  const redeemed = await redeemOnce(ctx.db, ssoRequests, {
    key: eq(ssoRequests.state, state),
    scope: and(eq(ssoRequests.institutionId, institutionId), eq(ssoRequests.protocol, protocol)),
    now: ctx.now(),
  });
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
  return row;
}
