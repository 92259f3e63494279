// Products and prices: what a subscription is made of (customers.mjs holds the customers and their
// test cards, promotions.mjs the coupons and promotion codes). Each function takes the decoded
// parameters and answers a stored object (the router presents it with `expand[]`) or throws a StripeError.

import { StripeError } from "./errors.mjs";
import { checkKnown, mergeMetadata, readBoolean, readExpand, readInteger, readString } from "./form.mjs";
import { newId, paginate } from "./store.mjs";

// ---------- products and prices

export function createProduct(s, p) {
  checkKnown(p, ["id", "name", "description", "active", "metadata", "expand", "unit_label", "url"]);
  const id = readString(p.id, "id") ?? newId("prod_", 14);
  if (s.store.objects.has(id))
    throw StripeError.invalid(`Product already exists.`, "id", "resource_already_exists");
  return s.store.put({
    id,
    object: "product",
    active: readBoolean(p.active, "active") ?? true,
    created: s.now(),
    default_price: null,
    description: readString(p.description, "description") ?? null,
    images: [],
    livemode: false,
    marketing_features: [],
    metadata: mergeMetadata({}, p.metadata),
    name: readString(p.name, "name", { required: true }),
    package_dimensions: null,
    shippable: null,
    statement_descriptor: null,
    tax_code: null,
    type: "service",
    unit_label: readString(p.unit_label, "unit_label") ?? null,
    updated: s.now(),
    url: readString(p.url, "url") ?? null,
  });
}

export function listProducts(s, p) {
  checkKnown(p, ["active", "ids", "limit", "starting_after", "ending_before", "expand", "created", "url"]);
  const active = readBoolean(p.active, "active");
  const ids = Array.isArray(p.ids) ? p.ids : undefined;
  const items = s.store
    .all("product")
    .filter((o) => (active === undefined || o.active === active) && (!ids || ids.includes(o.id)));
  return paginate(items, p, "/v1/products");
}

export function createPrice(s, p) {
  checkKnown(p, [
    "id",
    "product",
    "unit_amount",
    "currency",
    "recurring",
    "lookup_key",
    "nickname",
    "metadata",
    "active",
    "expand",
    "transfer_lookup_key",
    "tax_behavior",
    "billing_scheme",
  ]);
  const product = s.store.get("product", readString(p.product, "product", { required: true }), {
    param: "product",
  });
  const recurring = p.recurring
    ? {
        interval: readString(p.recurring.interval, "recurring[interval]", {
          required: true,
          oneOf: ["day", "week", "month", "year"],
        }),
        interval_count: readInteger(p.recurring.interval_count, "recurring[interval_count]", { min: 1 }) ?? 1,
        meter: null,
        trial_period_days: null,
        usage_type: "licensed",
      }
    : null;
  const lookupKey = readString(p.lookup_key, "lookup_key") ?? null;
  if (lookupKey) {
    const holder = s.store.all("price").find((o) => o.lookup_key === lookupKey);
    if (holder) {
      if (readBoolean(p.transfer_lookup_key, "transfer_lookup_key")) holder.lookup_key = null;
      else
        throw StripeError.invalid(
          `A price (\`${holder.id}\`) already uses that lookup key.`,
          "lookup_key",
          "lookup_key_already_exists",
        );
    }
  }
  const unitAmount = readInteger(p.unit_amount, "unit_amount", { required: true, min: 0 });
  const price = s.store.put({
    id: readString(p.id, "id") ?? newId("price_", 24),
    object: "price",
    active: readBoolean(p.active, "active") ?? true,
    billing_scheme: "per_unit",
    created: s.now(),
    currency: readString(p.currency, "currency", { required: true }).toLowerCase(),
    custom_unit_amount: null,
    livemode: false,
    lookup_key: lookupKey,
    metadata: mergeMetadata({}, p.metadata),
    nickname: readString(p.nickname, "nickname") ?? null,
    product: product.id,
    recurring,
    tax_behavior: "unspecified",
    tiers_mode: null,
    transform_quantity: null,
    type: recurring ? "recurring" : "one_time",
    unit_amount: unitAmount,
    unit_amount_decimal: String(unitAmount),
  });
  if (!product.default_price) product.default_price = price.id;
  return price;
}

export function listPrices(s, p) {
  checkKnown(p, [
    "active",
    "currency",
    "lookup_keys",
    "product",
    "type",
    "recurring",
    "limit",
    "starting_after",
    "ending_before",
    "expand",
    "created",
  ]);
  const active = readBoolean(p.active, "active");
  const keys = p.lookup_keys === undefined ? undefined : [p.lookup_keys].flat();
  const interval = p.recurring?.interval;
  const items = s.store
    .all("price")
    .filter(
      (o) =>
        (active === undefined || o.active === active) &&
        (!keys || keys.includes(o.lookup_key)) &&
        (!p.product || o.product === p.product) &&
        (!p.type || o.type === p.type) &&
        (!p.currency || o.currency === p.currency) &&
        (!interval || o.recurring?.interval === interval),
    );
  return paginate(items, p, "/v1/prices");
}

export { readExpand };
