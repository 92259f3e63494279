// Invoices: created and settled at once — paid when the customer has a card (or nothing is due), else
// open with a failed attempt — with the subscription's active discounts applied. Proration is not
// itemised: a change of interval or an `always_invoice` change is one invoice for the new amount.
import { hasPaymentMethod } from "./customers.mjs";
import { checkKnown } from "./form.mjs";
import { deepCopy, newId, paginate } from "./store.mjs";
import { DAY, subtotalOf } from "./subscription-state.mjs";

function activeDiscounts(s, sub) {
  return sub.discounts
    .map((id) => s.store.find("discount", id))
    .filter((d) => d && (d.end === null || d.end > s.now()));
}

/** Creates, settles and stores an invoice for `sub`; returns it (its events are the caller's). */
export function makeInvoice(s, sub, { reason, periodStart, periodEnd, amount }) {
  const subtotal = amount ?? subtotalOf(sub);
  const discounts = subtotal > 0 ? activeDiscounts(s, sub) : [];
  let discountAmount = 0;
  const totalDiscounts = [];
  for (const d of discounts) {
    const coupon = s.store.get("coupon", d.source.coupon);
    const off =
      coupon.percent_off !== null
        ? Math.round((subtotal * coupon.percent_off) / 100)
        : Math.min(coupon.amount_off, subtotal - discountAmount);
    discountAmount += off;
    totalDiscounts.push({ amount: off, discount: d.id });
    // A `once` coupon discounts one invoice.
    if (s.store.private(d.id)?.once) {
      d.end = s.now();
    }
  }
  const total = subtotal - discountAmount;
  const canPay = total === 0 || hasPaymentMethod(s, sub.customer);
  const now = s.now();
  const customer = s.store.get("customer", sub.customer);
  const invoice = s.store.put({
    id: newId("in_", 24),
    object: "invoice",
    account_country: "DE",
    account_name: "Lingua (stand-in)",
    amount_due: total,
    amount_overpaid: 0,
    amount_paid: canPay ? total : 0,
    amount_remaining: canPay ? 0 : total,
    amount_shipping: 0,
    attempt_count: total === 0 ? 0 : 1,
    attempted: total > 0,
    auto_advance: !canPay,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_reason: reason,
    collection_method: "charge_automatically",
    created: now,
    currency: sub.currency,
    customer: sub.customer,
    customer_email: customer.email,
    customer_name: customer.name,
    default_payment_method: null,
    description: null,
    discounts: discounts.map((d) => d.id),
    due_date: null,
    effective_at: now,
    ending_balance: 0,
    hosted_invoice_url: null,
    invoice_pdf: null,
    last_finalization_error: null,
    lines: {
      object: "list",
      data: sub.items.data.map((item) => ({
        id: newId("il_", 24),
        object: "line_item",
        amount: amount ?? item.price.unit_amount * (item.quantity ?? 1),
        currency: sub.currency,
        description: `${item.quantity ?? 1} × ${item.price.nickname ?? item.price.id}`,
        discount_amounts: [],
        discountable: true,
        discounts: [],
        invoice: null,
        livemode: false,
        metadata: {},
        parent: {
          subscription_item_details: {
            invoice_item: null,
            proration: false,
            proration_details: { credited_items: null },
            subscription: sub.id,
            subscription_item: item.id,
          },
          type: "subscription_item_details",
        },
        period: { end: periodEnd, start: periodStart },
        pricing: {
          price_details: { price: item.price.id, product: item.price.product },
          type: "price_details",
          unit_amount_decimal: String(amount === 0 ? 0 : item.price.unit_amount),
        },
        quantity: item.quantity ?? 1,
      })),
      has_more: false,
      total_count: sub.items.data.length,
      url: "/v1/invoices/lines",
    },
    livemode: false,
    metadata: {},
    next_payment_attempt: canPay ? null : now + 3 * DAY,
    number: `${customer.invoice_prefix}-${String(customer.next_invoice_sequence++).padStart(4, "0")}`,
    parent: {
      quote_details: null,
      subscription_details: { metadata: deepCopy(sub.metadata), subscription: sub.id },
      type: "subscription_details",
    },
    period_end: periodEnd,
    period_start: periodStart,
    receipt_number: null,
    starting_balance: 0,
    status: canPay ? "paid" : "open",
    status_transitions: {
      finalized_at: now,
      marked_uncollectible_at: null,
      paid_at: canPay ? now : null,
      voided_at: null,
    },
    subtotal,
    subtotal_excluding_tax: subtotal,
    test_clock: null,
    total,
    total_discount_amounts: totalDiscounts,
    total_excluding_tax: total,
    total_taxes: [],
    webhooks_delivered_at: now,
  });
  for (const line of invoice.lines.data) line.invoice = invoice.id;
  sub.latest_invoice = invoice.id;
  return invoice;
}

/** Emits the invoice's outcome: `invoice.paid`, or `invoice.payment_failed` for an open one. */
export function emitInvoice(s, invoice) {
  s.emit(invoice.status === "paid" ? "invoice.paid" : "invoice.payment_failed", invoice);
}

export function listInvoices(s, p) {
  checkKnown(p, [
    "customer",
    "subscription",
    "status",
    "limit",
    "starting_after",
    "ending_before",
    "expand",
    "created",
    "collection_method",
    "due_date",
  ]);
  const items = s.store
    .all("invoice")
    .filter(
      (o) =>
        (!p.customer || o.customer === p.customer) &&
        (!p.subscription || o.parent?.subscription_details?.subscription === p.subscription) &&
        (!p.status || o.status === p.status),
    );
  return paginate(items, p, "/v1/invoices");
}
