import { expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { createTenant } from "../helpers/tenants";
import { completeALesson, createWebhook } from "./support";

it("ping and a real lesson.completed reach the receiver, correctly signed", async () => {
  const { admin, learner } = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, { url: receiver.url, events: ["lesson.completed"] });
  await receiver.configure({ secrets: [hook.secret] });
  const ping = await callJson(`/api/integrations/webhooks/${hook.id}/test`, { token: admin.token, method: "POST" });
  expect(ping.res.status).toBe(200);
  expect(ping.body).toMatchObject({ status: "succeeded", attempt_count: 1, last_response_status: 200 });
  await completeALesson(learner);
  const got = await receiver.waitFor(2);
  console.log(JSON.stringify(got, null, 1).slice(0, 3000));
  expect(got[1]!.x_signature_valid).toEqual([true]);
});
