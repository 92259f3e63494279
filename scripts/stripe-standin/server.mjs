// The HTTP server: the REST API under /v1 (API key, form decoding, Idempotency-Key, Stripe's errors
// and `expand[]`), the hosted pages (/checkout, /portal) and the control API (/_standin).
import { createServer } from "node:http";
import { matchRoute } from "./api.mjs";
import { cancelSession, paySession } from "./checkout-page.mjs";
import { control } from "./control.mjs";
import { StripeError } from "./errors.mjs";
import { API_VERSION } from "./events.mjs";
import { decodeForm, readExpand } from "./form.mjs";
import { checkoutPage, portalPage } from "./pages.mjs";
import { portalAction } from "./portal.mjs";
import { present } from "./present.mjs";
import { newId } from "./store.mjs";

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function send(res, status, body, headers = {}) {
  res
    .writeHead(status, { "Content-Type": "application/json", ...headers })
    .end(JSON.stringify(body, null, 2));
}

function html(res, status, text) {
  res
    .writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" })
    .end(text);
}

function redirect(res, location) {
  res.writeHead(303, { Location: location }).end();
}

/** The key of an `Authorization: Bearer sk_…` (or Basic with the key as user name) header. */
function apiKey(header) {
  if (!header) return undefined;
  const [scheme, value = ""] = header.split(" ");
  if (/^bearer$/i.test(scheme)) return value.trim();
  if (/^basic$/i.test(scheme)) return Buffer.from(value, "base64").toString("utf8").split(":")[0];
  return "";
}

/** Parameters in a canonical text, to compare an idempotent retry's with the first request's. */
function fingerprint(method, path, params) {
  const sort = (v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sort(v[k])]),
        )
      : Array.isArray(v)
        ? v.map(sort)
        : v;
  return JSON.stringify([method, path, sort(params)]);
}

export function createStandInServer(s, { secretKey }) {
  async function api(req, res, url, requestId) {
    const headers = {
      "Request-Id": requestId,
      "Stripe-Version": req.headers["stripe-version"] ?? API_VERSION,
    };
    const key = apiKey(req.headers.authorization);
    if (!key) {
      return send(
        res,
        401,
        new StripeError(
          401,
          "invalid_request_error",
          "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
        ).body(),
        headers,
      );
    }
    if (key !== secretKey) {
      const shown =
        key.length > 8
          ? `${key.slice(0, 8)}${"*".repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`
          : key;
      return send(
        res,
        401,
        new StripeError(401, "invalid_request_error", `Invalid API Key provided: ${shown}`, {
          code: "api_key_invalid",
        }).body(),
        headers,
      );
    }
    const method = req.method ?? "GET";
    const raw = await readBody(req);
    const idempotencyKey = req.headers["idempotency-key"];
    try {
      const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
      if (raw && method !== "GET" && type && type !== "application/x-www-form-urlencoded") {
        throw StripeError.invalid(
          `Invalid request: unsupported Content-Type ${type}. Stripe's API takes application/x-www-form-urlencoded bodies.`,
        );
      }
      const params = decodeForm(method === "GET" || method === "DELETE" ? url.search.slice(1) : raw);
      if (method === "DELETE" && raw) Object.assign(params, decodeForm(raw));
      if (typeof idempotencyKey === "string" && idempotencyKey && method === "POST") {
        if (idempotencyKey.length > 255) {
          throw StripeError.invalid(
            "Idempotency-Key must be at most 255 characters.",
            undefined,
            "idempotency_key_in_use",
          );
        }
        const print = fingerprint(method, url.pathname, params);
        const earlier = s.store.idempotency.get(idempotencyKey);
        if (earlier) {
          if (earlier.fingerprint !== print) {
            throw new StripeError(
              400,
              "idempotency_error",
              `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            );
          }
          return send(res, earlier.status, earlier.body, {
            ...headers,
            "Request-Id": earlier.requestId,
            "Idempotency-Key": idempotencyKey,
            "Idempotent-Replayed": "true",
          });
        }
        const [status, body] = execute(method, url.pathname, params, {
          id: requestId,
          idempotency_key: idempotencyKey,
        });
        s.store.idempotency.set(idempotencyKey, { fingerprint: print, status, body, requestId });
        return send(res, status, body, { ...headers, "Idempotency-Key": idempotencyKey });
      }
      const [status, body] = execute(method, url.pathname, params, { id: requestId, idempotency_key: null });
      return send(res, status, body, headers);
    } catch (error) {
      if (error instanceof StripeError) return send(res, error.status, error.body(requestId), headers);
      throw error;
    }
  }

  /** Runs one API request; answers [status, body] (a StripeError is an answer too). */
  function execute(method, path, params, request) {
    const route = matchRoute(method, path);
    try {
      if (!route) {
        throw new StripeError(404, "invalid_request_error", `Unrecognized request URL (${method}: ${path}).`);
      }
      if (route.methodNotAllowed) {
        throw new StripeError(404, "invalid_request_error", `Unrecognized request URL (${method}: ${path}).`);
      }
      const expand = readExpand(params.expand);
      s.request = method === "GET" ? null : request;
      const result = route.handler(s, route.ids, params);
      return [200, present(s.store, result, expand)];
    } catch (error) {
      if (error instanceof StripeError) return [error.status, error.body(request.id)];
      throw error;
    } finally {
      s.request = null;
    }
  }

  async function page(req, res, kind, id) {
    const method = req.method ?? "GET";
    const form = method === "POST" ? Object.fromEntries(new URLSearchParams(await readBody(req))) : {};
    const store = s.store;
    if (kind === "checkout") {
      const session = store.find("checkout.session", id);
      if (!session)
        return html(res, 404, "<!doctype html><title>Not found</title><p>No such checkout session.</p>");
      if (method === "GET") return html(res, 200, checkoutPage(s, session));
      try {
        if (form.action === "cancel") return redirect(res, cancelSession(s, id));
        if (form.action !== "pay") return html(res, 400, checkoutPage(s, session, "Unknown action."));
        return redirect(res, paySession(s, id, form));
      } catch (error) {
        if (!(error instanceof StripeError)) throw error;
        return html(res, error.status === 409 ? 409 : 400, checkoutPage(s, session, error.message));
      }
    }
    const session = store.find("billing_portal.session", id);
    if (!session)
      return html(res, 404, "<!doctype html><title>Not found</title><p>No such portal session.</p>");
    if (method === "GET") return html(res, 200, portalPage(s, session));
    try {
      return redirect(res, portalAction(s, id, form));
    } catch (error) {
      if (!(error instanceof StripeError)) throw error;
      return html(res, 400, portalPage(s, session, error.message));
    }
  }

  async function controlRequest(req, res, url) {
    const raw = await readBody(req);
    let body;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      return send(res, 400, StripeError.invalid("The control API takes JSON bodies.").body());
    }
    const parts = url.pathname.split("/").filter(Boolean).slice(1);
    try {
      const answer = control(s, req.method ?? "GET", parts, url.searchParams, body);
      if (!answer)
        return send(res, 404, new StripeError(404, "invalid_request_error", "Unknown control path.").body());
      return send(res, answer.status, answer.body);
    } catch (error) {
      if (error instanceof StripeError) return send(res, error.status, error.body());
      throw error;
    }
  }

  return createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://stand-in");
    const requestId = newId("req_", 14);
    const [first, id, extra] = url.pathname.split("/").filter(Boolean);
    let work;
    if (first === "v1") work = api(req, res, url, requestId);
    else if ((first === "checkout" || first === "portal") && id && !extra) work = page(req, res, first, id);
    else if (first === "_standin") work = controlRequest(req, res, url);
    else
      work = Promise.resolve(
        send(
          res,
          404,
          new StripeError(
            404,
            "invalid_request_error",
            `Unrecognized request URL (${req.method}: ${url.pathname}).`,
          ).body(),
        ),
      );
    work.catch((error) => {
      s.log(`stripe stand-in: ${req.method} ${url.pathname} failed: ${error?.stack ?? error}`);
      if (!res.headersSent)
        send(res, 500, new StripeError(500, "api_error", "The stand-in failed.").body(requestId));
      else res.end();
    });
  });
}
