import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhooks } from "../../src/db/schema";
import { fromBase64, randomBytes, toBase64, utf8 } from "../../src/platform/crypto/encoding";
import {
  openSealed,
  resealLegacyValues,
  webhookSecretBinding,
} from "../../src/platform/crypto/sealed-values";
import { isLegacySealed, seal, unseal, unsealLegacy } from "../../src/platform/crypto/sealing";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { testContext } from "../helpers/context";
import { createTenant } from "../helpers/tenants";

const KEY = env.ENCRYPTION_KEY;
const HOUR = 60 * 60 * 1000;

/** A value in the format before the binding (`v1.`), as rows written by earlier versions hold. */
async function sealLegacy(plaintext: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", fromBase64(KEY), "AES-GCM", false, ["encrypt"]);
  const iv = randomBytes(12);
  const cipher = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, utf8(plaintext));
  return `v1.${toBase64(iv)}.${toBase64(cipher)}`;
}

async function webhook(token: string): Promise<string> {
  // Disabled: nothing is ever sent to it.
  const { res, body } = await callJson("/api/integrations/webhooks", {
    token,
    body: { url: "https://hooks.example.com/lingua", events: ["lesson.completed"], enabled: false },
  });
  expect(res.status).toBe(201);
  return body.id;
}

async function secretOf(id: string): Promise<string> {
  const row = await database(env.DB)
    .select({ secretSealed: webhooks.secretSealed })
    .from(webhooks)
    .where(eq(webhooks.id, id))
    .get();
  return row?.secretSealed ?? "";
}

async function setSecret(id: string, sealed: string): Promise<void> {
  await database(env.DB).update(webhooks).set({ secretSealed: sealed }).where(eq(webhooks.id, id));
}

describe("sealing", () => {
  it("opens a value only for the purpose and the row it was sealed for", async () => {
    const binding = { purpose: "webhook-secret", id: "whk_a" };
    const sealed = await seal("whsec_plain", KEY, binding);
    expect(sealed).toMatch(/^v2\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    expect(await unseal(sealed, KEY, binding)).toBe("whsec_plain");
    await expect(unseal(sealed, KEY, { purpose: "webhook-secret", id: "whk_b" })).rejects.toThrow();
    await expect(unseal(sealed, KEY, { purpose: "idempotent-response", id: "whk_a" })).rejects.toThrow();
    // An id and purpose that concatenate alike are still different bindings.
    const tricky = await seal("x", KEY, { purpose: "a", id: "b:c" });
    await expect(unseal(tricky, KEY, { purpose: "a:b", id: "c" })).rejects.toThrow();
  });

  it("refuses a legacy value in the bound format's place, and opens it only as legacy", async () => {
    const legacy = await sealLegacy("old secret");
    expect(isLegacySealed(legacy)).toBe(true);
    await expect(unseal(legacy, KEY, { purpose: "webhook-secret", id: "whk_a" })).rejects.toThrow(/Legacy/);
    expect(await unsealLegacy(legacy, KEY)).toBe("old secret");
  });

  it("seals new webhook secrets bound to their webhook", async () => {
    const { admin } = await createTenant();
    const [first, second] = [await webhook(admin.token), await webhook(admin.token)];
    const sealed = await secretOf(first);
    expect(sealed.startsWith("v2.")).toBe(true);
    await expect(openSealed(env, sealed, webhookSecretBinding(first))).resolves.toMatch(/^whsec_/);
    // Copied into the other webhook's row, it no longer opens.
    await setSecret(second, sealed);
    await expect(openSealed(env, await secretOf(second), webhookSecretBinding(second))).rejects.toThrow();
  });

  // In order: the legacy values, their re-seal, then the retirement of the legacy format.
  it("re-seals legacy values to their rows, after which a copy into another row fails, and retires v1", async () => {
    const { admin } = await createTenant();
    const [first, second] = [await webhook(admin.token), await webhook(admin.token)];
    const legacy = await sealLegacy("whsec_legacy");
    await setSecret(first, legacy);
    // Before the re-seal the legacy value still works (deliveries go on across the deployment).
    expect(await openSealed(env, legacy, webhookSecretBinding(first))).toBe("whsec_legacy");

    const now = Date.now();
    expect(await resealLegacyValues(testContext({ now: () => now }))).toBeGreaterThanOrEqual(1);
    const resealed = await secretOf(first);
    expect(resealed.startsWith("v2.")).toBe(true);
    expect(await openSealed(env, resealed, webhookSecretBinding(first))).toBe("whsec_legacy");
    await setSecret(second, resealed);
    await expect(openSealed(env, resealed, webhookSecretBinding(second))).rejects.toThrow();

    // Passes that find no legacy value for an hour retire the format: a copy of the old v1 value
    // (from a backup, say) then opens in no row at all.
    expect(await resealLegacyValues(testContext({ now: () => now }))).toBe(0);
    expect(await openSealed(env, legacy, webhookSecretBinding(second))).toBe("whsec_legacy");
    expect(await resealLegacyValues(testContext({ now: () => now + HOUR }))).toBe(0);
    await setSecret(second, legacy);
    await expect(openSealed(env, legacy, webhookSecretBinding(second))).rejects.toThrow(/legacy/);
    await expect(openSealed(env, legacy, webhookSecretBinding(first))).rejects.toThrow(/legacy/);
  });
});
