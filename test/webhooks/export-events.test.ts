import { expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { completeALesson, createWebhook } from "./support";

it("a finished export reaches a subscribed webhook as a signed export.completed", async () => {
  const { admin, learner } = await createTenant();
  await completeALesson(learner);
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, {
    url: receiver.url,
    events: ["export.completed", "export.failed"],
  });
  await receiver.configure({ secrets: [hook.secret] });

  const { res, body: job } = await callJson("/api/integrations/exports", {
    token: admin.token,
    body: { type: "activity" },
  });
  expect(res.status).toBe(202);
  const [delivery] = await receiver.waitFor(1, 30_000);
  const event = JSON.parse(delivery!.body);
  expect(event).toMatchObject({
    type: "export.completed",
    data: { export_id: job.id, type: "activity", row_count: 2 },
  });
  expect(delivery!.x_signature_valid).toEqual([true]);
  expect(delivery!.standard_valid).toEqual([true]);
  const listed = await callJson(`/api/integrations/events?type=export.completed`, { token: admin.token });
  expect(listed.body.data.map((e: any) => e.id)).toEqual([event.id]);
});
