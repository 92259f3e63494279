/**
 * The stand-in's decoding of Stripe's form encoding (scripts/stripe-standin/form.mjs): what the `stripe`
 * SDK and hand-written clients send — indexed and empty-bracket arrays, nested hashes, empty values.
 */
import { describe, expect, it } from "vitest";
import { decodeForm, encodeForm } from "../../scripts/stripe-standin/form.mjs";

describe("Stripe's form encoding", () => {
  it("decodes bracket notation into nested objects and arrays", () => {
    const params = decodeForm(
      [
        "mode=subscription",
        "line_items[0][price]=price_pro_month",
        "line_items[0][quantity]=3",
        "line_items[1][price]=price_pro_year",
        "metadata[institution_id]=inst%201",
        "subscription_data[trial_period_days]=14",
        "subscription_data[metadata][institution_id]=inst_1",
        "expand[]=subscription",
        "expand[]=subscription.latest_invoice",
        "discounts[0][promotion_code]=promo_1",
        "success_url=https%3A%2F%2Fapp.example.test%2Fdone%3Fs%3D%7BCHECKOUT_SESSION_ID%7D",
      ].join("&"),
    );
    expect(params).toEqual({
      mode: "subscription",
      line_items: [{ price: "price_pro_month", quantity: "3" }, { price: "price_pro_year" }],
      metadata: { institution_id: "inst 1" },
      subscription_data: { trial_period_days: "14", metadata: { institution_id: "inst_1" } },
      expand: ["subscription", "subscription.latest_invoice"],
      discounts: [{ promotion_code: "promo_1" }],
      success_url: "https://app.example.test/done?s={CHECKOUT_SESSION_ID}",
    });
  });

  it("keeps empty values (Stripe's way to unset) and percent-encoded brackets", () => {
    expect(decodeForm("metadata[plan]=&discounts=&expand%5B0%5D=data.product")).toEqual({
      metadata: { plan: "" },
      discounts: "",
      expand: ["data.product"],
    });
  });

  it("round-trips what encodeForm (the SDK's encoding) produces", () => {
    const params = {
      items: [{ id: "si_1", price: "price_pro_year", quantity: "5" }],
      cancel_at_period_end: "true",
      metadata: { a: "1 + 1", b: "ü" },
    };
    expect(decodeForm(encodeForm(params))).toEqual(params);
  });

  it("refuses malformed keys", () => {
    expect(() => decodeForm("a]b=1")).toThrow(/Invalid parameter name/);
  });
});
