// The hosted pages, server-rendered HTML without external assets: Checkout (`GET /checkout/<cs_…>`,
// its form `POST`s `action=pay|cancel`) and the billing portal (`GET /portal/<bps_…>`, its forms `POST`
// `action=cancel_at_period_end|renew|cancel_now|update|return`).
import { describeSession } from "./checkout-page.mjs";
import { portalSubscriptions } from "./portal.mjs";
import { periodOf } from "./subscription-state.mjs";

function esc(value) {
  return String(value ?? "")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

export function money(amount, currency) {
  return new Intl.NumberFormat("en-IE", { style: "currency", currency: currency.toUpperCase() }).format(
    amount / 100,
  );
}

function date(ts) {
  return new Date(ts * 1000).toISOString().slice(0, 10);
}

function layout(title, body) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f6f8fa;color:#1a1f36;margin:0;padding:2rem}
main{max-width:32rem;margin:0 auto;background:#fff;border-radius:8px;padding:1.5rem 2rem;box-shadow:0 1px 3px #0002}
.banner{background:#fff4d6;border:1px solid #f5c542;border-radius:4px;padding:.4rem .6rem;font-size:.85rem}
table{width:100%;border-collapse:collapse}td{padding:.3rem 0}td:last-child{text-align:right}
.error{color:#b3093c;font-weight:600}button{font-size:1rem;padding:.5rem 1rem;margin:.3rem .3rem .3rem 0;cursor:pointer}
button.primary{background:#635bff;color:#fff;border:0;border-radius:4px}
</style></head><body><main><p class="banner">Stripe stand-in: test mode, no real payment.</p>
${body}</main></body></html>`;
}

/** The Checkout page of `session` (`error`: why the last submission was refused). */
export function checkoutPage(s, session, error) {
  if (session.status !== "open") {
    return layout(
      "Checkout",
      `<h1>Checkout</h1><p id="status">This checkout session is ${esc(session.status)}.</p>`,
    );
  }
  const view = describeSession(s, session);
  const rows = view.items
    .map(({ price, product, quantity }) => {
      const per = `${money(price.unit_amount, price.currency)} per seat / ${price.recurring.interval}`;
      return `<tr><td><strong id="plan">${esc(product.name)}</strong><br><span id="price">${esc(per)}</span></td>
<td>Seats: <span id="quantity">${quantity}</span><br>${esc(money(price.unit_amount * quantity, price.currency))}</td></tr>`;
    })
    .join("");
  const trial = view.trialDays
    ? `<p id="trial">${view.trialDays}-day free trial: nothing is due today; the first charge is on ${esc(
        date(session.created + view.trialDays * 86_400),
      )}.</p>`
    : "";
  const coupon = view.coupon;
  const discount = coupon
    ? `<p id="discount">Discount${view.promotionCode ? ` <strong>${esc(view.promotionCode.code)}</strong>` : ""}: ${
        coupon.percent_off !== null
          ? `${coupon.percent_off} % off`
          : `${esc(money(coupon.amount_off, coupon.currency))} off`
      }${coupon.duration === "repeating" ? ` for ${coupon.duration_in_months} months` : coupon.duration === "forever" ? " forever" : " once"}</p>`
    : "";
  const promoField = session.allow_promotion_codes
    ? `<p><label>Promotion code <input name="promotion_code" autocomplete="off"></label></p>`
    : "";
  const card = view.cardRequired
    ? `<p>Card: Visa •••• 4242 (test)<input type="hidden" name="card" value="on"></p>`
    : `<p><label><input type="checkbox" name="card" value="on"> Add a card now (Visa •••• 4242, test)</label></p>`;
  return layout(
    "Checkout",
    `<h1>Subscribe</h1>
<table>${rows}</table>${trial}${discount}
<p>Total due today: <strong id="total">${esc(money(session.amount_total, session.currency))}</strong></p>
${error ? `<p class="error" role="alert">${esc(error)}</p>` : ""}
<form method="post">${promoField}${card}
<button class="primary" type="submit" name="action" value="pay">${view.trialDays ? "Start trial" : "Pay and subscribe"}</button>
<button type="submit" name="action" value="cancel">Back</button>
</form>`,
  );
}

/** The billing portal page of `session`. */
export function portalPage(s, session, error) {
  const subs = portalSubscriptions(s, session);
  const prices = s.store.all("price").filter((p) => p.active && p.type === "recurring");
  const blocks = subs
    .map((sub) => {
      const item = sub.items.data[0];
      const period = periodOf(sub);
      const options = prices
        .map(
          (p) =>
            `<option value="${esc(p.id)}"${p.id === item.price.id ? " selected" : ""}>${esc(
              p.nickname ?? p.id,
            )} (${esc(money(p.unit_amount, p.currency))} / ${esc(p.recurring.interval)})</option>`,
        )
        .join("");
      return `<section><h2>${esc(item.price.nickname ?? item.price.id)}</h2>
<p>Status: <span class="status">${esc(sub.status)}</span>, ${item.quantity} seat(s), current period ${esc(
        date(period.start),
      )} – ${esc(date(period.end))}${sub.cancel_at_period_end ? ", ends at period end" : ""}</p>
<form method="post"><input type="hidden" name="subscription" value="${esc(sub.id)}">
<label>Plan <select name="price">${options}</select></label>
<label>Seats <input name="quantity" type="number" min="1" value="${item.quantity}"></label>
<button type="submit" name="action" value="update">Update plan</button><br>
${
  sub.cancel_at_period_end
    ? `<button type="submit" name="action" value="renew">Don't cancel</button>`
    : `<button type="submit" name="action" value="cancel_at_period_end">Cancel at period end</button>`
}
<button type="submit" name="action" value="cancel_now">Cancel now</button>
</form></section>`;
    })
    .join("");
  return layout(
    "Billing",
    `<h1>Billing</h1>${error ? `<p class="error" role="alert">${esc(error)}</p>` : ""}
${blocks || "<p>No active subscription.</p>"}
<form method="post"><button type="submit" name="action" value="return">Return</button></form>`,
  );
}
