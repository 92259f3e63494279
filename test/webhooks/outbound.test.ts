import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { resolveHost } from "../../src/platform/outbound/dns";
import { callJson } from "../helpers/api";
import { receiverEndpoint } from "../helpers/receiver";
import { dohStub, uniqueName } from "../helpers/receiver-doh";
import { createTenant } from "../helpers/tenants";
import { createWebhook, deliveryRow, insertDelivery, runQueue } from "./support";

const DELIVERIES = "lingua-webhook-deliveries";
/** Production's rule: no loopback, no http. */
const PRODUCTION = { ALLOW_LOOPBACK_TARGETS: "false" } as const;

async function ping(token: string, hookId: string, overrides?: Partial<Cloudflare.Env>) {
  return callJson(`/api/integrations/webhooks/${hookId}/test`, {
    token,
    method: "POST",
    ...(overrides ? { env: overrides } : {}),
  });
}

async function webhook(token: string, hookId: string) {
  return (await callJson(`/api/integrations/webhooks/${hookId}`, { token })).body;
}

describe("the stored URL is checked before every attempt", () => {
  it("a loopback webhook saved in development is refused once the switch is off: nothing sent, webhook disabled", async () => {
    const { admin } = await createTenant();
    const receiver = receiverEndpoint();
    const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });

    const { res, body } = await ping(admin.token, hook.id, PRODUCTION);
    expect(res.status).toBe(200);
    expect(body).toMatchObject({
      status: "failed",
      last_response_status: null,
      last_error_code: "target_refused",
    });
    expect(body.last_error).toMatch(/must not point at a loopback address/);
    expect(body.attempts).toEqual([
      expect.objectContaining({
        number: 1,
        error_code: "target_refused",
        response_status: null,
        response_body: null,
      }),
    ]);
    expect(await receiver.received()).toEqual([]);
    expect(await webhook(admin.token, hook.id)).toMatchObject({
      enabled: false,
      disabled_reason: "target_refused",
      disabled_at: expect.any(String),
    });
  });

  it("re-enabling it is refused until its URL passes again", async () => {
    const { admin } = await createTenant();
    const receiver = receiverEndpoint();
    const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
    await ping(admin.token, hook.id, PRODUCTION);
    const put = (body: unknown) =>
      callJson(`/api/integrations/webhooks/${hook.id}`, {
        token: admin.token,
        method: "PUT",
        body,
        env: PRODUCTION,
      });
    const refused = await put({ enabled: true });
    expect(refused.res.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({
      path: "url",
      message: "must not point at a loopback address",
    });
    expect(await webhook(admin.token, hook.id)).toMatchObject({
      enabled: false,
      disabled_reason: "target_refused",
    });
    // Disabled, a new public URL is accepted with it (nothing is sent to it here).
    const fixed = await put({ enabled: false, url: "https://hooks.example.com/lingua" });
    expect(fixed.res.status).toBe(200);
    expect(await receiver.received()).toEqual([]);
  });

  it("the delivery consumer refuses it too, without a retry", async () => {
    const { admin, institution } = await createTenant();
    const receiver = receiverEndpoint();
    const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
    const { deliveryId } = await insertDelivery(hook.id, institution.id);

    const run = await runQueue(DELIVERIES, [{ delivery_id: deliveryId }], PRODUCTION);
    expect(run.explicitAcks).toHaveLength(1);
    expect(run.retryMessages).toEqual([]);
    expect(await receiver.received()).toEqual([]);
    expect(await deliveryRow(deliveryId)).toMatchObject({
      status: "failed",
      last_error_code: "target_refused",
      attempt_count: 1,
    });
    expect(await webhook(admin.token, hook.id)).toMatchObject({
      enabled: false,
      disabled_reason: "target_refused",
    });
  });
});

describe("failures as categories", () => {
  it("each attempt names its category beside a readable error, and keeps the first KiB of the answer", async () => {
    const { admin } = await createTenant();
    const receiver = receiverEndpoint();
    const hook = await createWebhook(admin, { url: receiver.url, events: ["*"], enabled: false });
    const long = "x".repeat(3000);
    await receiver.configure({
      script: [
        { status: 503, body: long },
        { status: 302, headers: { Location: "http://127.0.0.1:1/elsewhere" } },
        { status: 200, delay_ms: 1500 },
        { status: 200, body: "fine" },
      ],
    });
    const unavailable = (await ping(admin.token, hook.id)).body;
    expect(unavailable).toMatchObject({ last_error_code: "http_status", last_error: "HTTP 503" });
    expect(unavailable.attempts[0].response_body).toBe("x".repeat(1024));

    const moved = (await ping(admin.token, hook.id)).body;
    expect(moved).toMatchObject({ last_error_code: "redirect", last_response_status: 302 });
    expect(moved.last_error).toMatch(/^Redirect \(302 to http:\/\/127\.0\.0\.1:1\/elsewhere\) not followed$/);

    const slow = (await ping(admin.token, hook.id)).body;
    expect(slow).toMatchObject({ last_error_code: "timeout", last_error: "Timed out after 1000 ms" });

    const fine = (await ping(admin.token, hook.id)).body;
    expect(fine).toMatchObject({ status: "succeeded", last_error_code: null, last_error: null });
    expect(fine.attempts[0]).toMatchObject({ error_code: null, response_body: "fine" });
    // Only the redirect was not followed: four requests, none to the Location.
    expect(await receiver.received()).toHaveLength(4);
  });

  it("a receiver that is down is connection_failed; the runtime's own words go to the log only", async () => {
    const { admin } = await createTenant();
    const down = await createWebhook(admin, {
      url: "http://127.0.0.1:9/hook",
      events: ["*"],
      enabled: false,
    });
    const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
    let body: any;
    let logged: unknown[][];
    try {
      body = (await ping(admin.token, down.id)).body;
    } finally {
      logged = [...spy.mock.calls];
      spy.mockRestore();
    }
    expect(body).toMatchObject({
      status: "failed",
      last_response_status: null,
      last_error_code: "connection_failed",
      last_error: "Could not connect to the receiver",
    });
    const lines = logged.map(([line]) => JSON.parse(String(line)));
    const entry = lines.find((line) => line.message === "outbound request failed");
    expect(entry).toEqual({
      level: "error",
      message: "outbound request failed",
      code: "connection_failed",
      error: expect.any(String),
      webhook_id: down.id,
      delivery_id: body.id,
    });
    // The runtime's text is in the log, and nowhere in what the customer reads.
    expect(JSON.stringify(body)).not.toContain(entry.error);
  });
});

describe("test pings are limited per webhook", () => {
  it("answers 429 with Retry-After and the rate-limit headers after 10 in a window; another webhook is unaffected", async () => {
    const { admin } = await createTenant();
    const receiver = receiverEndpoint();
    const hook = await createWebhook(admin, { url: receiver.url, events: ["*"], enabled: false });
    const other = await createWebhook(admin, { url: receiver.url, events: ["*"], enabled: false });
    for (let i = 0; i < 10; i++) expect((await ping(admin.token, hook.id)).res.status).toBe(200);
    const { res, body } = await ping(admin.token, hook.id);
    expect(res.status).toBe(429);
    expect(body.code).toBe("rate_limited");
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(res.headers.get("RateLimit-Policy")).toBe('"webhook-test";q=10;w=10');
    expect(res.headers.get("RateLimit")).toMatch(/^"webhook-test";r=0;t=\d+$/);
    expect(await receiver.received()).toHaveLength(10);
    expect((await ping(admin.token, other.id)).res.status).toBe(200);
  });
});

describe("names are resolved when OUTBOUND_DOH_URL names a resolver", () => {
  const doh = dohStub();
  const withDoh = { ...PRODUCTION, OUTBOUND_DOH_URL: doh.resolverUrl };

  async function register(token: string, url: string) {
    return callJson("/api/integrations/webhooks", {
      token,
      // Registered disabled: no event is ever sent to a name that resolves outside loopback.
      body: { url, events: ["*"], enabled: false },
      env: withDoh,
    });
  }

  it.each([
    ["an A record in a private range", { A: ["10.0.0.7"] }, /^must not resolve to a private address$/],
    ["an AAAA record in a unique-local range", { A: ["93.184.215.14"], AAAA: ["fd00::7"] }, /unique-local/],
    ["an IPv4-mapped metadata address", { AAAA: ["::ffff:169.254.169.254"] }, /metadata/],
    ["loopback, in production", { A: ["127.0.0.1"] }, /loopback/],
  ])("refuses a name with %s at registration", async (_what, records, message) => {
    const { admin } = await createTenant();
    const name = uniqueName();
    await doh.script({ [name]: records });
    const { res, body } = await register(admin.token, `https://${name}/hook`);
    expect(res.status).toBe(422);
    expect(body.errors[0]).toMatchObject({ path: "url", message: expect.stringMatching(message) });
  });

  it("accepts a name with only public answers, and one that does not resolve yet", async () => {
    const { admin } = await createTenant();
    const name = uniqueName();
    await doh.script({ [name]: { A: ["93.184.215.14"], AAAA: ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"] } });
    expect((await register(admin.token, `https://${name}/hook`)).res.status).toBe(201);
    expect((await register(admin.token, `https://${uniqueName("unpublished")}/hook`)).res.status).toBe(201);
    expect(await doh.queries(name)).toBe(2);
  });

  it("a name that resolves inside by the time of the attempt is refused without connecting (DNS rebinding)", async () => {
    const { admin } = await createTenant();
    const name = uniqueName();
    // Public at registration, with a zero TTL so that nothing is cached, then private.
    await doh.script({ [name]: { A: ["93.184.215.14"], ttl: 0 } });
    const created = await register(admin.token, `https://${name}/hook`);
    expect(created.res.status).toBe(201);
    await doh.script({ [name]: { A: ["192.168.0.10"], ttl: 0 } });
    const { body } = await ping(admin.token, created.body.id, withDoh);
    expect(body).toMatchObject({
      status: "failed",
      last_error_code: "target_refused",
      last_response_status: null,
    });
    // The category alone: the address the name answered is in the log, not in the delivery log.
    expect(body.last_error).toBe("Target refused: the URL must not resolve to a private address");
    expect(await doh.queries(name)).toBe(4);
  });

  it("a name that does not resolve, or a resolver that fails, is a dns failure without connecting", async () => {
    const { admin } = await createTenant();
    const missing = uniqueName("missing");
    const broken = uniqueName("broken");
    await doh.script({ [broken]: { status: "http-500" } });
    for (const name of [missing, broken]) {
      const created = await register(admin.token, `https://${name}/hook`);
      expect(created.res.status).toBe(201);
      const { body } = await ping(admin.token, created.body.id, withDoh);
      expect(body).toMatchObject({ status: "failed", last_error_code: "dns", last_response_status: null });
      // A dns failure may pass: the webhook stays as it was.
      expect(await webhook(admin.token, created.body.id)).toMatchObject({ disabled_reason: "manual" });
    }
  });

  it("caches answers for their TTL (a zero TTL not at all)", async () => {
    const cached = uniqueName("cached");
    const uncached = uniqueName("uncached");
    await doh.script({
      [cached]: { A: ["93.184.215.14"], ttl: 60 },
      [uncached]: { A: ["93.184.215.14"], ttl: 0 },
    });
    const now = Date.now();
    for (const at of [now, now + 1_000, now + 59_000]) {
      expect(await resolveHost(doh.resolverUrl, cached, at)).toEqual({
        ok: true,
        addresses: ["93.184.215.14"],
      });
      await resolveHost(doh.resolverUrl, uncached, at);
    }
    expect(await doh.queries(cached)).toBe(2);
    expect(await doh.queries(uncached)).toBe(6);
    await resolveHost(doh.resolverUrl, cached, now + 61_000);
    expect(await doh.queries(cached)).toBe(4);
  });

  it('with OUTBOUND_DOH_URL "off", names are judged by their text alone', async () => {
    const { admin } = await createTenant();
    const name = uniqueName();
    await doh.script({ [name]: { A: ["10.0.0.7"] } });
    const { res } = await callJson("/api/integrations/webhooks", {
      token: admin.token,
      body: { url: `https://${name}/hook`, events: ["*"], enabled: false },
      env: PRODUCTION,
    });
    expect(res.status).toBe(201);
    expect(await doh.queries(name)).toBe(0);
  });
});

describe("queue messages are parsed", () => {
  it("a malformed delivery or event message is dead-lettered at once, never retried, and the rest are handled", async () => {
    const { admin, institution } = await createTenant();
    const receiver = receiverEndpoint();
    const hook = await createWebhook(admin, { url: receiver.url, events: ["*"] });
    const { deliveryId } = await insertDelivery(hook.id, institution.id);
    const deadLettered: unknown[] = [];
    const dlq = {
      send: async (body: unknown) => void deadLettered.push(body),
      sendBatch: async (messages: { body: unknown }[]) =>
        void deadLettered.push(...messages.map((m) => m.body)),
    } as unknown as Queue;

    const bad = [{ delivery: "x" }, "not json", { delivery_id: 42 }, { delivery_id: "" }];
    const run = await runQueue(DELIVERIES, [...bad, { delivery_id: deliveryId }], { WEBHOOK_DLQ: dlq });
    expect(run.retryMessages).toEqual([]);
    expect(run.explicitAcks).toHaveLength(5);
    expect(deadLettered).toEqual(bad);
    expect(await receiver.waitFor(1)).toHaveLength(1);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "succeeded" });

    deadLettered.length = 0;
    const events = await runQueue("lingua-events", [{ event: "x" }, null], { EVENTS_DLQ: dlq });
    expect(events.retryMessages).toEqual([]);
    expect(events.explicitAcks).toHaveLength(2);
    expect(deadLettered).toEqual([{ event: "x" }, null]);
    // The dead-letter queues' own consumers log and acknowledge what they cannot read.
    for (const queue of ["lingua-events-dlq", "lingua-webhook-deliveries-dlq"]) {
      const end = await runQueue(queue, [{ nope: true }]);
      expect(end.explicitAcks).toHaveLength(1);
      expect(end.retryMessages).toEqual([]);
    }
    expect(env.DB).toBeDefined();
  });
});
