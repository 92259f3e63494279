import { describe, expect, it } from "vitest";
import {
  type AccessTokenKey,
  accessToken,
  cachedAccessToken,
  cachedUntil,
  DEFAULT_LIFETIME_SECONDS,
  EXPIRY_MARGIN_MS,
  forgetAccessToken,
  forgetHolderTokens,
  storeAccessToken,
} from "../../src/platform/outbound/access-tokens";
import { testContext } from "../helpers/context";

// The OAuth 2 access-token cache of platform/outbound, called directly with a test context.

const key = (version = 1, scope = "s"): AccessTokenKey => ({
  holder: `test:${crypto.randomUUID()}`,
  scope,
  version,
});

describe("cachedUntil", () => {
  it("keeps a token until a minute before it expires, a short-lived one half its life", () => {
    expect(cachedUntil(0, 3600)).toBe(3_600_000 - EXPIRY_MARGIN_MS);
    expect(cachedUntil(0, 60)).toBe(30_000);
    expect(cachedUntil(0, null)).toBe(DEFAULT_LIFETIME_SECONDS * 1000 - EXPIRY_MARGIN_MS);
  });
});

describe("the cache", () => {
  it("answers a stored token until it is due, then obtains a new one", async () => {
    let now = 1_800_000_000_000;
    const ctx = testContext({ now: () => now });
    const k = key();
    let asked = 0;
    const obtain = async () => ({ token: `tok-${++asked}`, expiresInSeconds: 120 });
    expect(await accessToken(ctx, k, obtain)).toMatchObject({ token: "tok-1", fresh: true });
    expect(await accessToken(ctx, k, obtain)).toMatchObject({ token: "tok-1", fresh: false });
    now += 60_000;
    expect(await accessToken(ctx, k, obtain)).toMatchObject({ token: "tok-2", fresh: true });
  });

  it("never answers a token of another credentials version, nor lets an older one replace a newer", async () => {
    const ctx = testContext();
    const v1 = key(1);
    const v2 = { ...v1, version: 2 };
    await storeAccessToken(ctx, v2, "newer", 3600);
    expect(await cachedAccessToken(ctx, v1)).toBeNull();
    // A token request of the old credentials that finishes late changes nothing.
    await storeAccessToken(ctx, v1, "older", 3600);
    expect(await cachedAccessToken(ctx, v2)).toMatchObject({ token: "newer" });
  });

  it("forgets a refused token only while it is still the cached one", async () => {
    const ctx = testContext();
    const k = key();
    const first = await storeAccessToken(ctx, k, "first", 3600);
    await storeAccessToken(ctx, k, "second", 3600);
    await forgetAccessToken(ctx, k, { sealed: first });
    expect(await cachedAccessToken(ctx, k)).toMatchObject({ token: "second" });
    const held = await cachedAccessToken(ctx, k);
    await forgetAccessToken(ctx, k, held!);
    expect(await cachedAccessToken(ctx, k)).toBeNull();
  });

  it("caches nothing when obtaining fails, and forgets a holder's tokens", async () => {
    const ctx = testContext();
    const k = key();
    expect(await accessToken(ctx, k, async () => ({ failure: "refused" }))).toEqual({ failure: "refused" });
    expect(await cachedAccessToken(ctx, k)).toBeNull();
    await storeAccessToken(ctx, k, "t", 3600);
    await forgetHolderTokens(ctx, k.holder).run();
    expect(await cachedAccessToken(ctx, k)).toBeNull();
  });
});
