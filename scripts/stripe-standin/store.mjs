// The stand-in's memory: every object by id (in Stripe's JSON shape, references as ids), each kind in
// creation order for lists, private state Stripe keeps but does not show, and the idempotency cache.
// Nothing is ever reset globally: parallel tests each work on their own customers and objects.
import { randomBytes } from "node:crypto";
import { StripeError } from "./errors.mjs";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A Stripe-looking id: `prefix` then `length` base-62 characters (`cus_Q2…`, `cs_test_a1…`). */
export function newId(prefix, length = 24) {
  const bytes = randomBytes(length);
  let out = "";
  for (const b of bytes) out += ALPHABET[b % 62];
  return `${prefix}${out}`;
}

export function deepCopy(value) {
  return value === undefined ? undefined : structuredClone(value);
}

export class Store {
  constructor() {
    /** id → object */
    this.objects = new Map();
    /** `object` type → ids in creation order */
    this.byKind = new Map();
    /** id → private state (a session's subscription_data, a customer's payment methods, …) */
    this.privates = new Map();
    /** Idempotency-Key → { fingerprint, status, body, headers } */
    this.idempotency = new Map();
  }

  put(object, privateState = {}) {
    this.objects.set(object.id, object);
    const kind = object.object;
    if (!this.byKind.has(kind)) this.byKind.set(kind, []);
    this.byKind.get(kind).push(object.id);
    this.privates.set(object.id, privateState);
    return object;
  }

  /**
   * The object `id` of `kind`; else `resource_missing`: 404 for an id in the path, 400 naming `param`
   * for an id given in a parameter (as Stripe answers both).
   */
  get(kind, id, { noun = kind, param } = {}) {
    const object = typeof id === "string" ? this.objects.get(id) : undefined;
    if (!object || object.object !== kind) {
      throw param ? StripeError.missingParam(noun, id, param) : StripeError.missing(noun, id);
    }
    return object;
  }

  find(kind, id) {
    const object = typeof id === "string" ? this.objects.get(id) : undefined;
    return object && object.object === kind ? object : undefined;
  }

  private(id) {
    return this.privates.get(id);
  }

  /** Objects of `kind`, newest first, as Stripe lists them. */
  all(kind) {
    return (this.byKind.get(kind) ?? []).map((id) => this.objects.get(id)).reverse();
  }
}

/**
 * A page of `items` (newest first) as Stripe lists answer it: `{ object: "list", data, has_more, url }`,
 * `limit` 1–100 (default 10), `starting_after`/`ending_before` an id of the list.
 */
export function paginate(items, params, url) {
  let limit = 10;
  if (params.limit !== undefined) {
    if (!/^\d+$/.test(params.limit) || Number(params.limit) < 1 || Number(params.limit) > 100) {
      throw StripeError.invalid(
        "Invalid integer: limit must be between 1 and 100",
        "limit",
        "parameter_invalid_integer",
      );
    }
    limit = Number(params.limit);
  }
  let start = 0;
  let end = items.length;
  if (params.starting_after) {
    const i = items.findIndex((o) => o.id === params.starting_after);
    if (i < 0) throw StripeError.missingParam("object", params.starting_after, "starting_after");
    start = i + 1;
  } else if (params.ending_before) {
    const i = items.findIndex((o) => o.id === params.ending_before);
    if (i < 0) throw StripeError.missingParam("object", params.ending_before, "ending_before");
    end = i;
    start = Math.max(0, end - limit);
  }
  const data = items.slice(start, Math.min(end, start + limit));
  const has_more = params.ending_before ? start > 0 : start + limit < end;
  return { object: "list", data, has_more, url };
}
