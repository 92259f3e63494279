import { describe, expect, it } from "vitest";
import {
  STATEMENT_ID_NAMESPACE,
  sha1,
  statementId,
  URL_NAMESPACE,
  uuidV5,
} from "../../src/domains/xapi/statements/ids";

const V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

describe("statement ids (UUID version 5, RFC 9562)", () => {
  it("matches RFC 9562's example: www.example.com in the DNS namespace", () => {
    expect(uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com")).toBe(
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
  });

  it("has the documented namespace, itself the v5 id of its URL in the URL namespace", () => {
    expect(STATEMENT_ID_NAMESPACE).toBe("6085c79d-7f22-58a8-9c1e-7d7567a3c2e0");
    expect(uuidV5(URL_NAMESPACE, "https://lingua.example/xapi/statement-ids")).toBe(STATEMENT_ID_NAMESPACE);
  });

  it("is stable for one endpoint and fact, different per endpoint and per fact, and a valid v5 UUID", () => {
    const a = statementId("xep_1", "answered:att_1");
    expect(a).toMatch(V5);
    expect(statementId("xep_1", "answered:att_1")).toBe(a);
    expect(statementId("xep_2", "answered:att_1")).not.toBe(a);
    expect(statementId("xep_1", "answered:att_2")).not.toBe(a);
    // A fixed vector (computed with Node's crypto): a change of namespace or derivation shows here.
    expect(a).toBe("3ebd7d7c-6d06-5f2f-93e5-0baf8a898fa4");
  });

  it("hashes the name as UTF-8", () => {
    expect(uuidV5(URL_NAMESPACE, "café")).toMatch(V5);
    expect(uuidV5(URL_NAMESPACE, "café")).not.toBe(uuidV5(URL_NAMESPACE, "cafe"));
    // Computed with Node's crypto over the UTF-8 bytes.
    expect(uuidV5(URL_NAMESPACE, "café")).toBe("79d4db4c-73a9-5cec-bd37-4fc862e2120d");
  });

  it("refuses a namespace that is not a UUID", () => {
    expect(() => uuidV5("not-a-uuid", "x")).toThrow(TypeError);
  });

  it("hashes as WebCrypto's SHA-1 does, at every length around the block boundaries", async () => {
    for (let length = 0; length <= 300; length++) {
      const data = Uint8Array.from({ length }, (_, i) => (i * 131 + length * 7) & 0xff);
      const expected = new Uint8Array(await crypto.subtle.digest("SHA-1", data));
      expect(hex(sha1(data)), `length ${length}`).toBe(hex(expected));
    }
  });
});
