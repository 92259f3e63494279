/** The API version whose object shapes the stand-in answers (the `stripe` SDK v23's). */
export const API_VERSION: string;

/** `t=<timestamp>,v1=<hex HMAC-SHA256 of "<timestamp>.<payload>">`, as Stripe signs webhook payloads. */
export function signPayload(payload: string, secret: string, timestamp: number): string;

/** The demo catalogue's ids (with `seed`). */
export const SEEDED: {
  product: "prod_lingua_pro";
  priceMonth: "price_pro_month";
  priceYear: "price_pro_year";
  welcomeCode: "WELCOME20";
  expiredCode: "EXPIRED10";
};

/** One signed event as the stand-in sends it to a webhook endpoint (and keeps it for the control API). */
export interface StandInDelivery {
  /** Position in the stand-in's delivery log (`since` of the control API). */
  index: number;
  event_id: string;
  type: string;
  /** The customer the event concerns (its object's `customer`, or the customer's own id). */
  customer: string | null;
  /** The id of the event's `data.object`. */
  object_id: string;
  /** Unix seconds: the `t` of `signature`. */
  created: number;
  /** The raw body, exactly as POSTed. */
  payload: string;
  /** The `Stripe-Signature` header for `payload` at `created`. */
  signature: string;
  /** `kept` without a webhook URL; else `pending`, `delivered` or `failed`. */
  status: "kept" | "pending" | "delivered" | "failed";
  attempts: { at: number; status: number }[];
}

export interface StandInOptions {
  /** 0 (the default): a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The only API key accepted (`Authorization: Bearer <secretKey>`). */
  secretKey: string;
  /** Signs every event's delivery (`Stripe-Signature`). */
  webhookSecret: string;
  /** When set, every event is POSTed there, in order, retried a few times. */
  webhookUrl?: string;
  /** The demo product, prices and promotion codes (default true). */
  seed?: boolean;
  /** Where delivery outcomes and failures are reported (default: nowhere). */
  log?: (line: string) => void;
}

export interface StripeStandIn {
  /** `http://127.0.0.1:<port>`: the `STRIPE_API_BASE` of a worker that talks to it. */
  url: string;
  host: string;
  port: number;
  secretKey: string;
  webhookSecret: string;
  deliveries(filter?: {
    customer?: string;
    since?: number;
    type?: string;
    object?: string;
  }): StandInDelivery[];
  /** Waits until the deliveries to `webhookUrl` under way are sent or given up. */
  settle(): Promise<void>;
  /** Lets the process exit while the stand-in still listens (a test run's stand-in). */
  unref(): void;
  close(): Promise<void>;
}

export function startStripeStandIn(options: StandInOptions): Promise<StripeStandIn>;
