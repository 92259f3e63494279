// Stripe's error answers: `{ error: { type, code, message, param, doc_url, request_log_url } }` with
// the HTTP status Stripe uses — 400 invalid request, 401 authentication, 402 card errors, 404 a missing
// object (`resource_missing`), 409 an idempotent twin still in flight.

export class StripeError extends Error {
  constructor(status, type, message, { code, param, declineCode } = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
    this.declineCode = declineCode;
  }

  static invalid(message, param, code) {
    return new StripeError(400, "invalid_request_error", message, { param, code });
  }

  /** A missing object in the path: 404 `resource_missing` (param `id`). */
  static missing(kind, id, param = "id") {
    return new StripeError(404, "invalid_request_error", `No such ${kind}: '${id}'`, {
      code: "resource_missing",
      param,
    });
  }

  /** A missing object named by a parameter (`customer`, `line_items[0][price]`): 400 `resource_missing`. */
  static missingParam(kind, id, param) {
    return new StripeError(400, "invalid_request_error", `No such ${kind}: '${id}'`, {
      code: "resource_missing",
      param,
    });
  }

  body(requestId) {
    const error = { type: this.type, message: this.message };
    if (this.code) {
      error.code = this.code;
      error.doc_url = `https://stripe.com/docs/error-codes/${this.code.replaceAll("_", "-")}`;
    }
    if (this.param) error.param = this.param;
    if (this.declineCode) error.decline_code = this.declineCode;
    if (requestId) error.request_log_url = `https://dashboard.stripe.com/test/logs/${requestId}`;
    return { error };
  }
}
