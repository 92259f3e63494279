// Customers and their (test) payment methods. Each function takes the decoded parameters and answers a
// stored object (the router presents it with `expand[]`) or throws a StripeError.

import { StripeError } from "./errors.mjs";
import { checkKnown, mergeMetadata, readString } from "./form.mjs";
import { newId, paginate } from "./store.mjs";

// ---------- customers and their (test) payment methods

const CUSTOMER_FIELDS = [
  "email",
  "name",
  "description",
  "metadata",
  "phone",
  "preferred_locales",
  "address",
  "expand",
  "invoice_settings",
  "payment_method",
  "tax_exempt",
  "business_name",
  "individual_name",
];

export function createCustomer(s, p) {
  checkKnown(p, [...CUSTOMER_FIELDS, "shipping", "tax", "tax_id_data", "test_clock", "source", "validate"]);
  const customer = s.store.put(
    {
      id: newId("cus_", 14),
      object: "customer",
      address: null,
      balance: 0,
      created: s.now(),
      currency: null,
      default_source: null,
      delinquent: false,
      description: readString(p.description, "description") ?? null,
      discount: null,
      email: readString(p.email, "email") ?? null,
      invoice_prefix: newId("", 8).toUpperCase(),
      invoice_settings: {
        custom_fields: null,
        default_payment_method: null,
        footer: null,
        rendering_options: null,
      },
      livemode: false,
      metadata: mergeMetadata({}, p.metadata),
      name: readString(p.name, "name") ?? null,
      next_invoice_sequence: 1,
      phone: readString(p.phone, "phone") ?? null,
      preferred_locales: [],
      shipping: null,
      tax_exempt: "none",
      test_clock: null,
    },
    { paymentMethods: [] },
  );
  if (p.payment_method) attachCard(s, customer, { makeDefault: true });
  return customer;
}

export function updateCustomer(s, id, p) {
  checkKnown(p, [...CUSTOMER_FIELDS, "default_source", "shipping", "tax", "source", "validate"]);
  const customer = s.store.get("customer", id);
  if (customer.deleted) throw StripeError.invalid("This customer has been deleted.", "id");
  if (p.email !== undefined) customer.email = readString(p.email, "email") ?? null;
  if (p.name !== undefined) customer.name = readString(p.name, "name") ?? null;
  if (p.description !== undefined) customer.description = readString(p.description, "description") ?? null;
  if (p.phone !== undefined) customer.phone = readString(p.phone, "phone") ?? null;
  customer.metadata = mergeMetadata(customer.metadata, p.metadata);
  const pm = p.invoice_settings?.default_payment_method;
  if (pm !== undefined) {
    if (pm === "") customer.invoice_settings.default_payment_method = null;
    else {
      const method = s.store.get("payment_method", pm, {
        param: "invoice_settings[default_payment_method]",
      });
      if (method.customer !== customer.id) {
        throw StripeError.invalid(
          `The payment method \`${pm}\` must be attached to the customer.`,
          "invoice_settings[default_payment_method]",
        );
      }
      customer.invoice_settings.default_payment_method = pm;
    }
  }
  return customer;
}

export function listCustomers(s, p) {
  checkKnown(p, ["email", "limit", "starting_after", "ending_before", "expand", "created", "test_clock"]);
  const items = s.store.all("customer").filter((o) => !p.email || o.email === p.email);
  return paginate(items, p, "/v1/customers");
}

/** A test card (`pm_…`, Visa 4242) attached to `customer`, by default its invoices' default. */
export function attachCard(s, customer, { makeDefault = true } = {}) {
  const method = s.store.put({
    id: newId("pm_", 24),
    object: "payment_method",
    allow_redisplay: "unspecified",
    billing_details: { address: null, email: customer.email, name: customer.name, phone: null },
    card: {
      brand: "visa",
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: "pass" },
      country: "US",
      display_brand: "visa",
      exp_month: 12,
      exp_year: new Date(s.now() * 1000).getUTCFullYear() + 3,
      funding: "credit",
      last4: "4242",
    },
    created: s.now(),
    customer: customer.id,
    livemode: false,
    metadata: {},
    type: "card",
  });
  s.store.private(customer.id).paymentMethods.push(method.id);
  if (makeDefault) customer.invoice_settings.default_payment_method = method.id;
  return method;
}

/** Detaches every card of `customer` (a control move: the customer removed their card). */
export function detachCards(s, customer) {
  for (const id of s.store.private(customer.id).paymentMethods) s.store.objects.get(id).customer = null;
  s.store.private(customer.id).paymentMethods = [];
  customer.invoice_settings.default_payment_method = null;
  for (const sub of s.store.all("subscription")) {
    if (sub.customer === customer.id) sub.default_payment_method = null;
  }
}

export function hasPaymentMethod(s, customerId) {
  return (s.store.private(customerId)?.paymentMethods.length ?? 0) > 0;
}

export function listCustomerPaymentMethods(s, id, p) {
  checkKnown(p, ["type", "limit", "starting_after", "ending_before", "expand", "allow_redisplay"]);
  s.store.get("customer", id);
  const items = s.store
    .private(id)
    .paymentMethods.map((pm) => s.store.objects.get(pm))
    .filter((o) => !p.type || o.type === p.type)
    .reverse();
  return paginate(items, p, `/v1/customers/${id}/payment_methods`);
}
