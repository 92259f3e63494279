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

  it("gives exactly the ids the allocating implementation gave (commit b59d9e2), for every kind of fact key", () => {
    // Computed with the implementation before the hash reused its message buffer: statements
    // already sent carry these ids, so they may never change.
    const vectors: [string, string, string][] = [
      [
        "xep_01JDK3ZQ6W8Y9V2N4P5R7T",
        "answered:0b9c8e4a-5f1d-4c3b-9a7e-2d6f8b1c3e5a",
        "3894d9b0-f380-536e-a676-937e53976397",
      ],
      [
        "xep_01JDK3ZQ6W8Y9V2N4P5R7T",
        "progressed:usr_01JDK40A1B2C3D4E5F6G7H8J:les_01JDK40K9M8N7P6Q5R4S3T2V:7",
        "874fab98-12fd-537b-968e-874b34da0e0b",
      ],
      [
        "xep_01JDK3ZQ6W8Y9V2N4P5R7T",
        "completed:lesson:usr_01JDK40A1B2C3D4E5F6G7H8J:les_01JDK40K9M8N7P6Q5R4S3T2V",
        "f82d5994-22a3-5c0b-897f-5b5e3e9556fd",
      ],
      [
        "xep_01JDK3ZQ6W8Y9V2N4P5R7T",
        "completed:course:usr_01JDK40A1B2C3D4E5F6G7H8J:crs_01JDK40W1X2Y3Z4A5B6C7D8E",
        "7ffe62f4-22ff-5fa3-a759-3ba255621f94",
      ],
      [
        "xep_01JDK3ZQ6W8Y9V2N4P5R7T",
        "mastered:usr_01JDK40A1B2C3D4E5F6G7H8J:overall:B2",
        "2698a049-4ec2-5816-910c-6fd78945ea08",
      ],
      [
        "xep_01JDK3ZQ6W8Y9V2N4P5R7T",
        "earned:usr_01JDK40A1B2C3D4E5F6G7H8J:streak_7",
        "257550e8-b94e-5ea2-aa0c-4909cf65304b",
      ],
      ["xep_b", "earned:usr_ü:café_crème", "6a65c3a9-069c-577b-90a1-864410112c99"],
    ];
    for (const [endpoint, key, id] of vectors) expect(statementId(endpoint, key), key).toBe(id);
  });

  it("derives each id as WebCrypto's SHA-1 of the namespace and the name would, long and short names, one after another", async () => {
    // The message buffer is reused: a long name followed by a short one must not leave bytes behind.
    const namespace = Uint8Array.from(STATEMENT_ID_NAMESPACE.replaceAll("-", "").match(/../g)!, (b) =>
      Number.parseInt(b, 16),
    );
    const names = [
      ...Array.from({ length: 200 }, (_, i) => `answered:${"a".repeat(i)}`),
      ...Array.from({ length: 40 }, (_, i) => `earned:usr_${i}:${"é".repeat(i)}`),
      "answered:x",
    ];
    for (const key of [...names, ...names.reverse()]) {
      const name = new TextEncoder().encode(`xep_1:${key}`);
      const input = new Uint8Array(16 + name.length);
      input.set(namespace);
      input.set(name, 16);
      const h = new Uint8Array(await crypto.subtle.digest("SHA-1", input));
      h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
      h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
      const expected = hex(h.slice(0, 16)).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");
      expect(statementId("xep_1", key), key).toBe(expected);
    }
  });
});
