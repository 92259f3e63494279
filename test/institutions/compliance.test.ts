import { describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { createPlatformAdmin, createTenant, mintToken } from "../helpers/tenants";

const TYPES = ["dpa", "gdpr", "ferpa", "coppa", "soc2_report", "vpat"];

function put(id: string, type: string, token: string, body: unknown) {
  return callJson(`/api/institutions/${id}/compliance/${type}`, { method: "PUT", token, body });
}

describe("compliance", () => {
  it("lists every document type with defaults before anything is recorded", async () => {
    const tenant = await createTenant();
    const { res, body } = await callJson(`/api/institutions/${tenant.institution.id}/compliance`, {
      token: tenant.admin.token,
    });
    expect(res.status).toBe(200);
    expect(body.institution_id).toBe(tenant.institution.id);
    expect(body.status).toBe("action_required");
    expect(body.documents.map((d: any) => d.type)).toEqual(TYPES);
    expect(body.documents[0]).toEqual({
      type: "dpa",
      required: true,
      status: "not_started",
      signed_at: null,
      expires_at: null,
      document_url: null,
      updated_at: null,
    });
    expect(body.documents.filter((d: any) => d.required).map((d: any) => d.type)).toEqual(["dpa", "gdpr"]);
  });

  it("platform staff record documents; the overall status follows the required ones", async () => {
    const tenant = await createTenant();
    const staff = await createPlatformAdmin();
    const id = tenant.institution.id;
    const signed = await put(id, "dpa", staff.token, {
      status: "signed",
      signed_at: "2026-01-10T09:00:00Z",
      expires_at: "2099-01-10T09:00:00Z",
      document_url: "https://trust.lingua.example/dpa.pdf",
    });
    expect(signed.res.status).toBe(200);
    expect(signed.body).toMatchObject({
      type: "dpa",
      required: true,
      status: "signed",
      signed_at: "2026-01-10T09:00:00Z",
      expires_at: "2099-01-10T09:00:00Z",
      document_url: "https://trust.lingua.example/dpa.pdf",
    });
    expect((await put(id, "gdpr", staff.token, { status: "not_applicable" })).res.status).toBe(200);
    const { body } = await callJson(`/api/institutions/${id}/compliance`, { token: tenant.admin.token });
    expect(body.status).toBe("complete");
    // A newly required document that is only in review puts it back to action_required.
    await put(id, "ferpa", staff.token, { status: "in_review", required: true });
    const after = await callJson(`/api/institutions/${id}/compliance`, { token: staff.token });
    expect(after.body.status).toBe("action_required");
    expect(after.body.documents.find((d: any) => d.type === "ferpa")).toMatchObject({
      required: true,
      status: "in_review",
    });
  });

  it("a signed document past expires_at reads expired without anybody writing it", async () => {
    const tenant = await createTenant();
    const staff = await createPlatformAdmin();
    const id = tenant.institution.id;
    await put(id, "gdpr", staff.token, { status: "not_applicable" });
    const expiresAt = `${new Date(Date.now() + 2_000).toISOString().slice(0, 19)}Z`;
    const signed = await put(id, "dpa", staff.token, {
      status: "signed",
      signed_at: "2025-01-01T00:00:00Z",
      expires_at: expiresAt,
    });
    expect(signed.body.status).toBe("signed");
    expect(
      (await callJson(`/api/institutions/${id}/compliance`, { token: tenant.admin.token })).body.status,
    ).toBe("complete");
    await new Promise((r) => setTimeout(r, 2_200));
    const { body } = await callJson(`/api/institutions/${id}/compliance`, { token: tenant.admin.token });
    expect(body.documents[0]).toMatchObject({ type: "dpa", status: "expired", expires_at: expiresAt });
    expect(body.status).toBe("action_required");
  });

  it("refuses bad documents with 422 naming the field", async () => {
    const tenant = await createTenant();
    const staff = await createPlatformAdmin();
    const id = tenant.institution.id;
    const cases: [string, unknown, string][] = [
      ["dpa", { status: "signed" }, "signed_at"],
      ["dpa", { status: "signed", signed_at: "2099-01-01T00:00:00Z" }, "signed_at"],
      [
        "dpa",
        { status: "signed", signed_at: "2026-01-01T00:00:00Z", expires_at: "2025-01-01T00:00:00Z" },
        "expires_at",
      ],
      ["dpa", { status: "expired" }, "status"],
      ["dpa", { status: "in_review", document_url: "http://trust.example/dpa.pdf" }, "document_url"],
      ["dpa", { status: "in_review", color: "red" }, "color"],
    ];
    for (const [type, body, path] of cases) {
      const { res, body: problem } = await put(id, type, staff.token, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(problem.code).toBe("validation_failed");
      expect(problem.errors.map((e: any) => e.path)).toContain(path);
    }
    const unknownType = await put(id, "hipaa", staff.token, { status: "signed" });
    expect(unknownType.res.status).toBe(422);
    // Nothing was written.
    const { body } = await callJson(`/api/institutions/${id}/compliance`, { token: staff.token });
    expect(body.documents.every((d: any) => d.updated_at === null)).toBe(true);
  });

  it("tenancy and abilities: another institution is 404, only staff write, instructors and learners cannot read", async () => {
    const [a, b] = await Promise.all([createTenant(), createTenant()]);
    const staff = await createPlatformAdmin();
    const other = await callJson(`/api/institutions/${b.institution.id}/compliance`, {
      token: a.admin.token,
    });
    expect(other.res.status).toBe(404);
    const missing = await callJson(`/api/institutions/ins_nope/compliance`, { token: staff.token });
    expect(missing.res.status).toBe(404);
    expect((await put("ins_nope", "dpa", staff.token, { status: "in_review" })).res.status).toBe(404);
    expect(
      (await callJson(`/api/institutions/${b.institution.id}/compliance`, { token: staff.token })).res.status,
    ).toBe(200);
    const byAdmin = await put(a.institution.id, "dpa", a.admin.token, {
      status: "signed",
      signed_at: "2026-01-01T00:00:00Z",
    });
    expect(byAdmin.res.status).toBe(403);
    for (const user of [a.instructor, a.learner]) {
      const { res, body } = await callJson(`/api/institutions/${a.institution.id}/compliance`, {
        token: user.token,
      });
      expect(res.status).toBe(403);
      expect(body.detail).toContain("compliance:read");
    }
    const narrow = await mintToken(a.admin, ["members:read"]);
    expect(
      (await callJson(`/api/institutions/${a.institution.id}/compliance`, { token: narrow.token })).res
        .status,
    ).toBe(403);
  });
});
