import { ltiKeys } from "../../../db/schema";
import { enforce } from "../../../platform/auth/policy";
import { ltiPrivateKeyBinding } from "../../../platform/crypto/sealed-values";
import {
  type PublishedJwk as AnyPublishedJwk,
  type KeyRow,
  type SigningKey,
  signingKeyStore,
} from "../../../platform/crypto/signing-keys";
import { ApiError } from "../../../platform/errors";
import type { PrincipalContext, ServiceContext } from "../../../platform/service/context";
import { mayRotateKeys } from "../policy";
import { consumerById, raiseCredentialsVersion, registrationAnywhere } from "./service";

/**
 * Each registration signs with its own keys, published at its own JWKS URL: a platform configured with
 * one registration's JWKS URL verifies that registration's client assertions only, so an institution
 * that registers another's (issuer, client id) cannot obtain tokens of that platform with them. The
 * keys live in `lti_keys` and are kept by the platform's signing-key store (RS256, rotation with a
 * 7-day overlap).
 */

export { RETIRED_KEY_PUBLISHED_MS } from "../../../platform/crypto/signing-keys";
export type { SigningKey };
/** LTI keys are RS256 only (LTI Advantage requires it). */
export type PublishedJwk = Extract<AnyPublishedJwk, { kty: "RSA" }>;

const store = signingKeyStore({
  table: ltiKeys,
  owner: ltiKeys.consumerId,
  ownerKey: "consumerId",
  binding: ltiPrivateKeyBinding,
  name: "LTI",
});

/** The registration's current key, generated on first need (its first JWKS read or client assertion). */
export function ensureCurrentKey(ctx: ServiceContext, consumerId: string): Promise<KeyRow> {
  return store.ensureCurrentKey(ctx, consumerId);
}

/** The key a registration signs with now (its client assertions). */
export function currentSigningKey(ctx: ServiceContext, consumerId: string): Promise<SigningKey> {
  return store.currentSigningKey(ctx, consumerId);
}

/** The public keys a platform may verify the registration's assertions with. */
export function publishedKeys(ctx: ServiceContext, consumerId: string): Promise<PublishedJwk[]> {
  return store.publishedKeys(ctx, consumerId) as Promise<PublishedJwk[]>;
}

/** The keys of a registration (any, for a public JWKS read): unknown registration, 404. */
export async function registrationKeys(ctx: ServiceContext, id: string): Promise<PublishedJwk[]> {
  // Public: found in DB, else by its directory key where its institution lives.
  const consumer = await registrationAnywhere(ctx, id);
  if (!consumer) throw new ApiError("not_found", `No LTI registration ${id}.`);
  return publishedKeys(ctx, consumer.id);
}

/** Rotates a registration's key where `mayRotateKeys` allows it; answers the keys after the rotation. */
export async function rotateRegistrationKeys(ctx: PrincipalContext, id: string) {
  enforce(mayRotateKeys(ctx.principal, await consumerById(ctx, id), id));
  // Tokens obtained with the old key's assertions go unused: the next request asks with the new key.
  const { current, retired } = await store.rotate(ctx, id, (c) => [raiseCredentialsVersion(c, id)]);
  return { current, retired, keys: await publishedKeys(ctx, id) };
}
