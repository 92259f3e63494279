// Events as Stripe sends them: each state change stores an `evt_…` (`object: "event"`, `type`,
// `created`, `api_version`, `livemode: false`, `data.object`, `data.previous_attributes` for updates)
// and a signed delivery — `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<payload>">` keyed by
// the webhook secret's UTF-8 bytes, as `stripe.webhooks.constructEventAsync` checks. Every delivery is
// kept for the control API; with a `webhookUrl` each is also POSTed there, one at a time in order,
// retried a few times on failure (re-signed per attempt, as Stripe does).
import { createHmac } from "node:crypto";
import { present } from "./present.mjs";
import { newId } from "./store.mjs";

/** The API version the stand-in's objects have the shape of: that of the `stripe` SDK it is tested with. */
export const API_VERSION = "2026-10-28.endive";

/** `t=…,v1=…` for `payload` signed at `timestamp` (Unix seconds). */
export function signPayload(payload, secret, timestamp) {
  const v1 = createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(`${timestamp}.${payload}`)
    .digest("hex");
  return `t=${timestamp},v1=${v1}`;
}

/** The customer an event concerns (for the control API's filter): its object's `customer`, or its id. */
function customerOf(object) {
  if (object.object === "customer") return object.id;
  return typeof object.customer === "string" ? object.customer : (object.customer?.id ?? null);
}

const RETRY_DELAYS_MS = [250, 1000, 3000];

export class Events {
  constructor({ store, now, webhookSecret, webhookUrl, log = () => {} }) {
    this.store = store;
    this.now = now;
    this.webhookSecret = webhookSecret;
    this.webhookUrl = webhookUrl;
    this.log = log;
    /** Every delivery in order; its `index` is its position. */
    this.deliveries = [];
    this.sending = Promise.resolve();
    this.closed = false;
  }

  /** Stores the event of `type` about `object` (snapshot now) and its delivery; answers the event. */
  emit(type, object, previousAttributes, request = null) {
    const data = { object: present(this.store, object) };
    if (previousAttributes && Object.keys(previousAttributes).length > 0) {
      data.previous_attributes = structuredClone(previousAttributes);
    }
    const event = this.store.put({
      id: newId("evt_", 24),
      object: "event",
      api_version: API_VERSION,
      created: this.now(),
      data,
      livemode: false,
      pending_webhooks: this.webhookUrl ? 1 : 0,
      request: request ?? { id: null, idempotency_key: null },
      type,
    });
    // Stripe's payloads are pretty-printed JSON: receivers must verify the raw bytes, not a re-encoding.
    const payload = JSON.stringify(event, null, 2);
    const created = this.now();
    const delivery = {
      index: this.deliveries.length,
      event_id: event.id,
      type,
      customer: customerOf(object),
      object_id: object.id,
      created,
      payload,
      signature: signPayload(payload, this.webhookSecret, created),
      status: this.webhookUrl ? "pending" : "kept",
      attempts: [],
    };
    this.deliveries.push(delivery);
    if (this.webhookUrl) this.sending = this.sending.then(() => this.send(delivery));
    return event;
  }

  async send(delivery) {
    for (let attempt = 0; attempt <= RETRY_DELAYS_MS.length && !this.closed; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, RETRY_DELAYS_MS[attempt - 1]));
      const timestamp = Math.floor(Date.now() / 1000);
      let status = 0;
      try {
        const res = await fetch(this.webhookUrl, {
          method: "POST",
          headers: {
            "Content-Type": "application/json; charset=utf-8",
            "Stripe-Signature": signPayload(delivery.payload, this.webhookSecret, timestamp),
            "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
          },
          body: delivery.payload,
          signal: AbortSignal.timeout(10_000),
        });
        status = res.status;
        await res.body?.cancel();
      } catch {
        status = 0;
      }
      delivery.attempts.push({ at: timestamp, status });
      if (status >= 200 && status < 300) {
        delivery.status = "delivered";
        this.log(`stripe stand-in: ${delivery.type} ${delivery.event_id} → ${status}`);
        return;
      }
    }
    delivery.status = "failed";
    this.log(
      `stripe stand-in: ${delivery.type} ${delivery.event_id} not delivered (${delivery.attempts.map((a) => a.status).join(", ")})`,
    );
  }

  /** Deliveries from `since` (an index), of `customer` and `type` when given. */
  list({ customer, since = 0, type, object } = {}) {
    return this.deliveries.filter(
      (d) =>
        d.index >= since &&
        (!customer || d.customer === customer) &&
        (!type || d.type === type) &&
        (!object || d.object_id === object),
    );
  }

  /** Waits for the deliveries under way (close, tests). */
  async settle() {
    await this.sending;
  }
}
