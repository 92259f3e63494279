import { describe, expect, it } from "vitest";
import {
  DECOY_PASSWORD_HASH,
  hashPassword,
  PBKDF2_ITERATIONS,
  parsePasswordHash,
  verifyPassword,
} from "../../src/platform/crypto/passwords";

describe("password hashing", () => {
  it("uses PBKDF2-SHA256 at exactly 100,000 iterations, the cap of deployed Workers", async () => {
    // Local workerd accepts more; production refuses anything above 100,000, so this is pinned.
    expect(PBKDF2_ITERATIONS).toBe(100_000);
    const stored = await hashPassword("s3cret");
    expect(stored).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    const parsed = parsePasswordHash(stored)!;
    expect(parsed.iterations).toBe(100_000);
    expect(parsed.salt).toHaveLength(16);
    expect(parsed.hash).toHaveLength(32);
  });

  it("salts every hash, so equal passwords hash differently", async () => {
    expect(await hashPassword("same")).not.toBe(await hashPassword("same"));
  });

  it("verifies the right password and rejects others", async () => {
    const stored = await hashPassword("correct");
    expect(await verifyPassword("correct", stored)).toBe(true);
    expect(await verifyPassword("Correct", stored)).toBe(false);
    expect(await verifyPassword("", stored)).toBe(false);
  });

  it("honours the parameters stored beside an older hash", async () => {
    const weaker = await hashPassword("legacy", 1_000);
    expect(parsePasswordHash(weaker)!.iterations).toBe(1_000);
    expect(await verifyPassword("legacy", weaker)).toBe(true);
  });

  it("rejects unknown formats instead of throwing", async () => {
    expect(await verifyPassword("x", "md5$abc")).toBe(false);
    expect(await verifyPassword("x", "")).toBe(false);
  });

  it("makes an unknown e-mail cost the same work as a wrong password", async () => {
    const decoy = parsePasswordHash(DECOY_PASSWORD_HASH)!;
    expect(decoy.iterations).toBe(PBKDF2_ITERATIONS);
    expect(decoy.salt).toHaveLength(16);
    expect(decoy.hash).toHaveLength(32);
    expect(await verifyPassword("anything", DECOY_PASSWORD_HASH)).toBe(false);
  });
});
