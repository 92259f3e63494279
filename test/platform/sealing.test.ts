import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhooks } from "../../src/db/schema";
import { fromBase64, randomBytes, toBase64, utf8 } from "../../src/platform/crypto/encoding";
import { openSealed, webhookSecretBinding } from "../../src/platform/crypto/sealed-values";
import { seal, unseal } from "../../src/platform/crypto/sealing";
import { database } from "../../src/platform/db";
import { callJson } from "../helpers/api";
import { createTenant } from "../helpers/tenants";

const KEY = env.ENCRYPTION_KEY;

/** A value in the unbound `v1.` format that development databases once held (no release sealed it). */
async function sealUnbound(plaintext: string): Promise<string> {
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

  it("refuses any other format, the unbound v1. of development included, and a tampered value", async () => {
    const binding = { purpose: "webhook-secret", id: "whk_a" };
    const unbound = await sealUnbound("old secret");
    await expect(unseal(unbound, KEY, binding)).rejects.toThrow("Unrecognised sealed value");
    const sealed = await seal("whsec_plain", KEY, binding);
    for (const other of ["", "plain", sealed.replace(/^v2\./, "v3."), `${sealed}.extra`, "v2..", "v2.AAAA"])
      await expect(unseal(other, KEY, binding), other).rejects.toThrow("Unrecognised sealed value");
    const [, iv, cipher] = sealed.split(".");
    const flipped = `v2.${iv}.${cipher?.startsWith("A") ? "B" : "A"}${cipher?.slice(1)}`;
    await expect(unseal(flipped, KEY, binding)).rejects.toThrow();
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
});
