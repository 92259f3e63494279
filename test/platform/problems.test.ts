import { describe, expect, it } from "vitest";
import { problemBody } from "../../src/platform/errors";

describe("problem extension members", () => {
  it("follow the standard members, before request_id, and never replace one", () => {
    const body = problemBody(
      "https://api.lingua.test",
      "export_not_ready",
      "Export exp_1 is queued.",
      "req_1",
      undefined,
      {
        export_status: "queued",
        progress: 0,
        status: 200,
        request_id: "forged",
      },
    );
    expect(Object.entries(body)).toEqual([
      ["type", "https://api.lingua.test/api/docs/errors#export_not_ready"],
      ["title", "Export not ready"],
      ["status", 409],
      ["code", "export_not_ready"],
      ["detail", "Export exp_1 is queued."],
      ["export_status", "queued"],
      ["progress", 0],
      ["request_id", "req_1"],
    ]);
  });

  it("leave a problem without them as it was", () => {
    expect(Object.keys(problemBody("https://api.lingua.test", "not_found", "No export.", "req_1"))).toEqual([
      "type",
      "title",
      "status",
      "code",
      "detail",
      "request_id",
    ]);
  });
});
