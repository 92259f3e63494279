import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { expect, it } from "vitest";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { verifyDelivery } from "../helpers/receiver-verify";
import { createTenant } from "../helpers/tenants";
import { createWebhook } from "./support";

/** A real delivery: a test ping, as the loopback receiver got it. */
async function captureDelivery() {
  const { admin } = await createTenant();
  const receiver = receiverEndpoint();
  const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
  const { res } = await callJson(`/api/integrations/webhooks/${hook.id}/test`, {
    token: admin.token,
    method: "POST",
  });
  expect(res.status).toBe(200);
  const [delivery] = await receiver.received();
  if (!delivery) throw new Error("no delivery received");
  return { secret: hook.secret, headers: delivery.headers, rawBody: Buffer.from(delivery.body, "utf8") };
}

it("the guide's receiver accepts a real delivery exactly when the standardwebhooks package does", async () => {
  const { secret, headers, rawBody } = await captureDelivery();
  const independent = new Webhook(secret).verify(rawBody.toString("utf8"), headers) as { id: string };

  const seen = new Set<string>();
  const first = await verifyDelivery({ secret, headers, rawBody, seen });
  expect(first).toEqual({ event: independent, duplicate: false });
  // The same delivery again (a replay within the tolerance, or a retry): recognised by its event id.
  expect(await verifyDelivery({ secret, headers, rawBody, seen })).toMatchObject({ duplicate: true });

  // Any change to id, timestamp or body breaks the signature, for both verifiers.
  const sentAt = Number(headers["webhook-timestamp"]);
  const tampered = [
    { headers: { ...headers, "webhook-id": "dlv_other" }, rawBody },
    { headers: { ...headers, "webhook-timestamp": String(sentAt + 1) }, rawBody },
    { headers, rawBody: Buffer.from(rawBody.toString("utf8").replace("ping", "pong"), "utf8") },
  ];
  for (const change of tampered) {
    expect(() => new Webhook(secret).verify(change.rawBody.toString("utf8"), change.headers)).toThrow();
    await expect(verifyDelivery({ secret, ...change, seen: new Set() })).rejects.toThrow(/signature/);
  }
  await expect(
    verifyDelivery({
      secret: `whsec_${Buffer.alloc(32).toString("base64")}`,
      headers,
      rawBody,
      seen: new Set(),
    }),
  ).rejects.toThrow(/signature/);
});

it("refuses the captured delivery once its timestamp is older than 5 minutes, which X-Signature-256 alone cannot", async () => {
  const { secret, headers, rawBody } = await captureDelivery();
  const sentAtMs = Number(headers["webhook-timestamp"]) * 1000;
  const fresh = { secret, headers, rawBody, seen: new Set<string>() };
  expect(await verifyDelivery({ ...fresh, now: sentAtMs + 299_000 })).toMatchObject({ duplicate: false });
  // A replay six minutes later, to a receiver that lost its memory of event ids: still refused.
  await expect(verifyDelivery({ ...fresh, seen: new Set(), now: sentAtMs + 360_000 })).rejects.toThrow(
    /5-minute tolerance/,
  );
  // X-Signature-256 covers the body only: the same capture still verifies, however old it is.
  const bodyOnly = createHmac("sha256", Buffer.from(secret, "utf8")).update(rawBody).digest("hex");
  expect(headers["x-signature-256"]).toBe(bodyOnly);
});
