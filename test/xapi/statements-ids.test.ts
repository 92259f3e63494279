import { describe, expect, it } from "vitest";
import {
  STATEMENT_ID_NAMESPACE,
  statementId,
  URL_NAMESPACE,
  uuidV5,
} from "../../src/domains/xapi/statements/ids";

const V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("statement ids (UUID version 5, RFC 9562)", () => {
  it("matches RFC 9562's example: www.example.com in the DNS namespace", async () => {
    expect(await uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com")).toBe(
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
  });

  it("has the documented namespace, itself the v5 id of its URL in the URL namespace", async () => {
    expect(STATEMENT_ID_NAMESPACE).toBe("6085c79d-7f22-58a8-9c1e-7d7567a3c2e0");
    expect(await uuidV5(URL_NAMESPACE, "https://lingua.example/xapi/statement-ids")).toBe(
      STATEMENT_ID_NAMESPACE,
    );
  });

  it("is stable for one endpoint and fact, different per endpoint and per fact, and a valid v5 UUID", async () => {
    const a = await statementId("xep_1", "answered:att_1");
    expect(a).toMatch(V5);
    expect(await statementId("xep_1", "answered:att_1")).toBe(a);
    expect(await statementId("xep_2", "answered:att_1")).not.toBe(a);
    expect(await statementId("xep_1", "answered:att_2")).not.toBe(a);
    // A fixed vector (computed with Node's crypto): a change of namespace or derivation shows here.
    expect(a).toBe("3ebd7d7c-6d06-5f2f-93e5-0baf8a898fa4");
  });

  it("hashes the name as UTF-8", async () => {
    expect(await uuidV5(URL_NAMESPACE, "café")).toMatch(V5);
    expect(await uuidV5(URL_NAMESPACE, "café")).not.toBe(await uuidV5(URL_NAMESPACE, "cafe"));
  });

  it("refuses a namespace that is not a UUID", async () => {
    await expect(uuidV5("not-a-uuid", "x")).rejects.toThrow(TypeError);
  });
});
