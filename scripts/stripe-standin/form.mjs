// Stripe's request encoding: `application/x-www-form-urlencoded` bodies (and query strings) whose keys
// use bracket notation — `metadata[institution_id]=…`, `line_items[0][price]=…`, `expand[]=…` or
// `expand[0]=…` — decoded into nested objects and arrays of strings. Values stay strings: each
// endpoint reads them with the typed readers below, which answer Stripe's 400s for bad values.
import { StripeError } from "./errors.mjs";

/** The nested parameters of a form-encoded text (a body or a query string without its `?`). */
export function decodeForm(text) {
  const root = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = keyPath(key);
    if (!path) throw StripeError.invalid(`Invalid parameter name: ${key}`, key, "parameter_unknown");
    let node = root;
    for (let i = 0; i < path.length; i++) {
      const last = i === path.length - 1;
      let part = path[i];
      if (part === "") part = String(Object.keys(node).length);
      if (last) node[part] = value;
      else {
        if (typeof node[part] !== "object" || node[part] === null) node[part] = {};
        node = node[part];
      }
    }
  }
  return arrays(root);
}

/** `a[b][0][]` → ["a", "b", "0", ""]; null for a malformed key. */
function keyPath(key) {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) return null;
  const parts = [match[1]];
  for (const m of match[2].matchAll(/\[([^[\]]*)\]/g)) parts.push(m[1]);
  return parts;
}

/** Objects whose keys are 0…n-1 become arrays (Stripe's `x[0]`, `x[1]`). */
function arrays(node) {
  if (typeof node !== "object" || node === null) return node;
  for (const k of Object.keys(node)) node[k] = arrays(node[k]);
  const keys = Object.keys(node);
  if (keys.length > 0 && keys.every((k, i) => /^\d+$/.test(k) && keys.includes(String(i)))) {
    return keys.map((_, i) => node[String(i)]);
  }
  return node;
}

/** Encodes nested parameters as Stripe's SDKs do (`a[b][0]=…`), for the stand-in's own clients. */
export function encodeForm(params) {
  const pairs = [];
  const walk = (prefix, value) => {
    if (value === undefined) return;
    if (value === null || typeof value !== "object") {
      pairs.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(String(value ?? ""))}`);
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(`${prefix}[${i}]`, v);
    } else for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix}[${k}]` : k, v);
  };
  walk("", params);
  return pairs.join("&");
}

// Typed readers: `param` is the parameter's name as Stripe reports it (`line_items[0][quantity]`).

export function readString(value, param, { required = false, oneOf } = {}) {
  if (value === undefined || value === "") {
    if (required) throw StripeError.invalid(`Missing required param: ${param}.`, param, "parameter_missing");
    return undefined;
  }
  if (typeof value !== "string") throw StripeError.invalid(`Invalid string: ${param}`, param);
  if (oneOf && !oneOf.includes(value)) {
    throw StripeError.invalid(
      `Invalid ${param}: must be one of ${oneOf.join(", ")}`,
      param,
      "parameter_invalid_string",
    );
  }
  return value;
}

export function readInteger(value, param, { required = false, min } = {}) {
  if (value === undefined || value === "") {
    if (required) throw StripeError.invalid(`Missing required param: ${param}.`, param, "parameter_missing");
    return undefined;
  }
  if (typeof value !== "string" || !/^-?\d+$/.test(value)) {
    throw StripeError.invalid(`Invalid integer: ${value}`, param, "parameter_invalid_integer");
  }
  const n = Number(value);
  if (min !== undefined && n < min) {
    throw StripeError.invalid(
      `This value must be greater than or equal to ${min}.`,
      param,
      "parameter_invalid_integer",
    );
  }
  return n;
}

export function readNumber(value, param) {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string" || !/^\d+(\.\d+)?$/.test(value)) {
    throw StripeError.invalid(`Invalid decimal: ${value}`, param);
  }
  return Number(value);
}

export function readBoolean(value, param) {
  if (value === undefined || value === "") return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  throw StripeError.invalid(`Invalid boolean: ${value}`, param);
}

/** `metadata[k]=v` as Stripe stores it: strings; an empty value removes its key; `metadata=` clears all. */
export function mergeMetadata(current, value, param = "metadata") {
  if (value === undefined) return current;
  if (value === "") return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw StripeError.invalid("Invalid hash", param);
  }
  const next = { ...current };
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw StripeError.invalid("Invalid hash", `${param}[${k}]`);
    if (v === "") delete next[k];
    else next[k] = v;
  }
  if (Object.keys(next).length > 50) {
    throw StripeError.invalid("You can only specify up to 50 metadata keys.", param);
  }
  return next;
}

/** `expand[]` as a list of dotted paths (at most 4 levels deep, as Stripe allows). */
export function readExpand(value) {
  if (value === undefined || value === "") return [];
  const list = Array.isArray(value) ? value : typeof value === "string" ? [value] : Object.values(value);
  for (const path of list) {
    if (typeof path !== "string") throw StripeError.invalid("Invalid array", "expand");
    if (path.split(".").length > 4) {
      throw StripeError.invalid(
        `You cannot expand more than 4 levels of a property. Property: ${path}`,
        "expand",
      );
    }
  }
  return list;
}

/** Rejects top-level parameters the endpoint does not know, as Stripe does (`parameter_unknown`). */
export function checkKnown(params, known) {
  for (const key of Object.keys(params)) {
    if (!known.includes(key)) {
      throw StripeError.invalid(`Received unknown parameter: ${key}`, key, "parameter_unknown");
    }
  }
}
