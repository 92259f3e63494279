// The demo catalogue (with `seed`): what `npm run dev` and the tests start from.
//   product  prod_lingua_pro  "Lingua Pro"
//   price    price_pro_month  900 EUR minor units a month, per seat   lookup_key pro_month
//   price    price_pro_year   9,000 EUR minor units a year, per seat  lookup_key pro_year
//   coupon   welcome20        20 % off, repeating 3 months    promotion code WELCOME20
//   coupon   expired10        10 % off, once                  promotion code EXPIRED10 (expired)
import { createPrice, createProduct } from "./catalog.mjs";
import { createCoupon, createPromotionCode } from "./promotions.mjs";

export function seedCatalog(s) {
  createProduct(s, {
    id: "prod_lingua_pro",
    name: "Lingua Pro",
    description: "Per-seat plan: 1,000 requests a minute per token, 5,000 per institution.",
    metadata: { plan: "pro" },
  });
  createPrice(s, {
    id: "price_pro_month",
    product: "prod_lingua_pro",
    unit_amount: "900",
    currency: "eur",
    recurring: { interval: "month" },
    lookup_key: "pro_month",
    nickname: "Lingua Pro, monthly",
    metadata: { plan: "pro" },
  });
  createPrice(s, {
    id: "price_pro_year",
    product: "prod_lingua_pro",
    unit_amount: "9000",
    currency: "eur",
    recurring: { interval: "year" },
    lookup_key: "pro_year",
    nickname: "Lingua Pro, yearly",
    metadata: { plan: "pro" },
  });
  createCoupon(s, {
    id: "welcome20",
    name: "Welcome, 20 % off for 3 months",
    percent_off: "20",
    duration: "repeating",
    duration_in_months: "3",
  });
  createPromotionCode(s, { promotion: { type: "coupon", coupon: "welcome20" }, code: "WELCOME20" });
  createCoupon(s, { id: "expired10", name: "10 % off (expired)", percent_off: "10", duration: "once" });
  createPromotionCode(
    s,
    {
      promotion: { type: "coupon", coupon: "expired10" },
      code: "EXPIRED10",
      expires_at: String(s.now() - 86_400),
    },
    { seed: true },
  );
}
