import { describe, expect, it } from "vitest";
import { callJson } from "../helpers/api";

describe("institutions in the OpenAPI document", () => {
  it("documents every operation, the CSV upload's content types and the new error codes", async () => {
    const { res, body } = await callJson("/api/openapi.json", {
      headers: { "CF-Connecting-IP": "192.0.2.77" },
    });
    expect(res.status).toBe(200);
    const ops = (path: string) => Object.keys(body.paths[path] ?? {}).sort();
    expect(ops("/api/institutions")).toEqual(["get", "post"]);
    expect(ops("/api/institutions/{id}")).toEqual(["get", "patch"]);
    expect(ops("/api/institutions/{id}/members")).toEqual(["get", "post"]);
    expect(ops("/api/institutions/{id}/members/{member}")).toEqual(["delete", "get", "patch"]);
    expect(ops("/api/institutions/{id}/invitations")).toEqual(["post"]);
    expect(ops("/api/institutions/{id}/members/bulk")).toEqual(["post"]);
    expect(ops("/api/institutions/{id}/members/bulk/{job}")).toEqual(["get"]);
    expect(ops("/api/institutions/{id}/members/bulk/{job}/rejected.csv")).toEqual(["get"]);
    expect(ops("/api/auth/accept-invitation")).toEqual(["post"]);
    const upload = body.paths["/api/institutions/{id}/members/bulk"].post;
    expect(Object.keys(upload.requestBody.content).sort()).toEqual(["multipart/form-data", "text/csv"]);
    expect(upload.description).toContain("OneRoster");
    expect(Object.keys(upload.responses)).toEqual(
      expect.arrayContaining(["200", "202", "409", "413", "415", "422"]),
    );
    const codes = body.components.schemas.Problem.properties.code.enum;
    for (const code of [
      "seat_limit_reached",
      "bulk_in_progress",
      "bulk_not_finished",
      "sync_threshold_exceeded",
      "last_admin",
      "email_taken",
      "external_id_taken",
      "slug_taken",
      "invalid_invitation",
    ]) {
      expect(codes).toContain(code);
    }
    expect(Object.keys(body.components.schemas.Member.properties)).toEqual([
      "id",
      "email",
      "name",
      "role",
      "status",
      "external_id",
      "groups",
      "created_at",
      "updated_at",
      "last_active_at",
    ]);
  });
});
