import { z } from "zod";
import type { Env } from "../env";
import { classifyHost } from "./outbound/address";

/**
 * The deployment's settings: wrangler.toml's [vars] and secrets, parsed once per `env` object with
 * zod into one typed object. Code reads settings only from here, never `env.SOME_VAR` itself. A value
 * that does not parse throws, naming the variable: a misconfigured deployment answers 500 rather
 * than running on a guess.
 */

const MIN_R2_PART_BYTES = 5 * 1024 * 1024;

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const flag = z
  .enum(["true", "false"])
  .default("false")
  .transform((value) => value === "true");

/** wrangler.toml's resolver, and the default where the variable is absent: the check is on unless "off". */
export const DEFAULT_DOH_URL = "https://cloudflare-dns.com/dns-query";

/**
 * Why the URL of a service we call is unusable, or null: an https URL, or plain http to a stand-in on
 * this machine (development, tests) — plain http cannot be trusted on a network. `absent` is the
 * value that means "none" (always accepted), `what` names the service in the message.
 */
function serviceUrlProblem(text: string, absent: string, what: string): string | null {
  if (text === absent) return null;
  const orAbsent = absent ? `, or "${absent}"` : " (empty for none)";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `must be the URL of ${what}${orAbsent}`;
  }
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && classifyHost(url.hostname).kind === "loopback") return null;
  return `must be an https URL (http only on loopback)${orAbsent}`;
}

const secondsList = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text) => text.split(",").map((part) => Number(part.trim())))
    .pipe(z.array(z.number().int().nonnegative()).length(3));

const schema = z.object({
  /** Rolling window of every per-minute limit; tests shorten it. */
  RATE_LIMIT_WINDOW_SECONDS: positiveInt(60),
  SESSION_TTL_DAYS: positiveInt(30),
  /** 32 random bytes, base64: the AES-GCM key that seals secrets at rest. */
  ENCRYPTION_KEY: z.string().min(1),
  /** Local development only: outbound URLs may use http and loopback addresses (nothing else inside). */
  ALLOW_LOOPBACK_TARGETS: flag,
  /**
   * DNS-over-HTTPS resolver (JSON form) the outbound gate asks what a host name points at; "off" only
   * explicitly (development, tests). Empty is refused: it used to mean off, and off must be said.
   */
  OUTBOUND_DOH_URL: z
    .string()
    .default(DEFAULT_DOH_URL)
    .superRefine((text, ctx) => {
      const problem = serviceUrlProblem(text, "off", "a DNS-over-HTTPS resolver (JSON form)");
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .transform((text) => (text === "off" ? null : text)),
  WEBHOOK_TIMEOUT_MS: positiveInt(10_000),
  WEBHOOK_RETRY_DELAYS_SECONDS: secondsList("60,600,6000"),
  WEBHOOK_DISABLE_AFTER_FAILURES: positiveInt(20),
  WEBHOOK_DISABLE_AFTER_HOURS: positiveInt(24),
  EXPORT_PART_SIZE_BYTES: z.coerce
    .number()
    .int()
    .min(MIN_R2_PART_BYTES, `must be at least ${MIN_R2_PART_BYTES} (R2's smallest multipart part)`)
    .default(MIN_R2_PART_BYTES),
  EXPORT_PAGE_SIZE: positiveInt(5000),
  EXPORT_TIME_BUDGET_MS: positiveInt(20_000),
  EXPORT_RETENTION_DAYS: positiveInt(7),
  /** Attempts stay in D1 this many days (by when they happened and when they were recorded), then move to R2. */
  ATTEMPTS_HOT_DAYS: positiveInt(90),
  BULK_CHUNK_ROWS: positiveInt(1000),
  BULK_TIME_BUDGET_MS: positiveInt(20_000),
  XAPI_BACKFILL_CHUNK_SIZE: positiveInt(500),
  XAPI_BACKFILL_TIME_BUDGET_MS: positiveInt(20_000),
  /** Where a browser LTI launch lands; empty: the worker's own launch page (/api/lti/app). */
  LTI_APP_URL: z.union([z.literal(""), z.url({ protocol: /^https?$/ })]).default(""),
  /**
   * The API's public origin, for what is built outside a request and must never change: the xAPI
   * actor's `homePage` and the activity IRIs of every statement forwarded to a Learning Record Store.
   */
  PUBLIC_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .default("https://api.lingua.example")
    .transform((text) => text.replace(/\/+$/, "")),
  /** Stripe's secret API key (`sk_live_…`, `sk_test_…`); empty: billing answers 503 billing_not_configured. */
  STRIPE_SECRET_KEY: z.string().default(""),
  /** The signing secret (`whsec_…`) of the Stripe webhook endpoint that calls POST /api/billing/webhook. */
  STRIPE_WEBHOOK_SECRET: z.string().default(""),
  /**
   * Where the Stripe API is; empty: Stripe itself. Development and tests point it at the local stand-in
   * (scripts/stripe-standin/), on loopback only: http is accepted for nothing else.
   */
  STRIPE_API_BASE: z
    .string()
    .default("")
    .superRefine((text, ctx) => {
      const problem = serviceUrlProblem(text, "", "a Stripe API (Stripe itself when empty)");
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .transform((text) => (text ? new URL(text) : null)),
  /** The Stripe price ids of the Pro plan, per seat, billed monthly and yearly. */
  STRIPE_PRICE_PRO_MONTH: z.string().default(""),
  STRIPE_PRICE_PRO_YEAR: z.string().default(""),
  /**
   * Origins a checkout or portal session may send the customer back to, comma-separated; an origin
   * may end in `:*` for any port (development: `http://127.0.0.1:*,http://localhost:*`).
   */
  BILLING_REDIRECT_ORIGINS: z
    .string()
    .default("")
    .transform((text) =>
      text
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean),
    ),
  /** Free-trial length of a first subscription, in days. */
  BILLING_TRIAL_DAYS: positiveInt(14),
});

/** The name of every variable the deployment reads (the README's configuration table lists each). */
export const SETTING_NAMES = Object.keys(schema.shape) as readonly (keyof typeof schema.shape)[];

function toConfig(vars: z.infer<typeof schema>) {
  return {
    rateLimitWindowSeconds: vars.RATE_LIMIT_WINDOW_SECONDS,
    sessionTtlDays: vars.SESSION_TTL_DAYS,
    encryptionKey: vars.ENCRYPTION_KEY,
    outbound: {
      allowLoopback: vars.ALLOW_LOOPBACK_TARGETS,
      dohUrl: vars.OUTBOUND_DOH_URL,
    },
    webhooks: {
      timeoutMs: vars.WEBHOOK_TIMEOUT_MS,
      retrySchedule: vars.WEBHOOK_RETRY_DELAYS_SECONDS,
      disableAfterFailures: vars.WEBHOOK_DISABLE_AFTER_FAILURES,
      disableAfterMs: vars.WEBHOOK_DISABLE_AFTER_HOURS * 3_600_000,
    },
    exports: {
      /** Bytes of every multipart part but the last. R2 wants at least 5 MiB and all of them equal. */
      partSize: vars.EXPORT_PART_SIZE_BYTES,
      /** Rows per keyset page read from D1. */
      pageSize: vars.EXPORT_PAGE_SIZE,
      /** How long one queue invocation generates before it hands over to a continuation message. */
      timeBudgetMs: vars.EXPORT_TIME_BUDGET_MS,
      retentionDays: vars.EXPORT_RETENTION_DAYS,
    },
    bulk: {
      /** Rows of a queued bulk upload applied per D1 batch (one checkpoint each). */
      chunkRows: vars.BULK_CHUNK_ROWS,
      /** How long one queue invocation applies chunks before it hands over to a continuation message. */
      timeBudgetMs: vars.BULK_TIME_BUDGET_MS,
    },
    coldTier: {
      /** Whole days an attempt stays in D1, at least 1; older ones move to R2 (progress/cold-tier). */
      hotDays: vars.ATTEMPTS_HOT_DAYS,
    },
    xapiBackfill: {
      /** Source rows (attempts, lessons, …) read per chunk of a back-fill (one checkpoint each). */
      chunkSize: vars.XAPI_BACKFILL_CHUNK_SIZE,
      /** How long one back-fill queue invocation works before it hands over to a continuation message. */
      timeBudgetMs: vars.XAPI_BACKFILL_TIME_BUDGET_MS,
    },
    lti: {
      /** Null: the worker's own launch page. */
      appUrl: vars.LTI_APP_URL || null,
    },
    /** Without a trailing slash. */
    publicBaseUrl: vars.PUBLIC_BASE_URL,
    billing: {
      /** Null: billing is not configured on this deployment. */
      secretKey: vars.STRIPE_SECRET_KEY || null,
      webhookSecret: vars.STRIPE_WEBHOOK_SECRET || null,
      /** Null: api.stripe.com. */
      apiBase: vars.STRIPE_API_BASE,
      prices: {
        pro: { month: vars.STRIPE_PRICE_PRO_MONTH || null, year: vars.STRIPE_PRICE_PRO_YEAR || null },
      },
      redirectOrigins: vars.BILLING_REDIRECT_ORIGINS,
      trialDays: vars.BILLING_TRIAL_DAYS,
    },
  };
}

export type Config = ReturnType<typeof toConfig>;

const parsed = new WeakMap<object, Config>();

/** The settings of this `env`, parsed on first use and kept for the isolate's life. */
export function config(env: Env): Config {
  let settings = parsed.get(env);
  if (!settings) {
    const result = schema.safeParse(env);
    if (!result.success) {
      const problems = result.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`);
      throw new Error(`Invalid configuration: ${problems.join("; ")}`);
    }
    settings = toConfig(result.data);
    parsed.set(env, settings);
    if (settings.outbound.dohUrl === null && !settings.outbound.allowLoopback)
      console.warn(
        JSON.stringify({
          level: "warn",
          message:
            'OUTBOUND_DOH_URL is "off" outside development: host names are judged by their text alone, so a customer URL whose name resolves to a private, loopback or metadata address is accepted and called wherever the runtime can reach such addresses',
          variable: "OUTBOUND_DOH_URL",
        }),
      );
  }
  return settings;
}
