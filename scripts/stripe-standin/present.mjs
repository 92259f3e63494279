// Presenting stored objects: a deep copy with Stripe's `expand[]` applied (dotted paths, `data.` for
// lists, arrays of ids expanded element by element) and "includable" fields (a coupon's `applies_to`,
// a Checkout Session's `line_items`) shown only when asked for, as Stripe does.
import { StripeError } from "./errors.mjs";
import { deepCopy } from "./store.mjs";

const INCLUDABLE = { coupon: ["applies_to"], "checkout.session": ["line_items"] };

export function present(store, object, expand = []) {
  const copy = deepCopy(object);
  expandInto(
    store,
    copy,
    expand.map((p) => p.split(".")),
  );
  return copy;
}

function expandInto(store, node, paths) {
  const heads = new Map();
  for (const [head, ...rest] of paths) {
    if (!heads.has(head)) heads.set(head, []);
    if (rest.length > 0) heads.get(head).push(rest);
  }
  for (const field of INCLUDABLE[node.object] ?? []) if (!heads.has(field)) delete node[field];
  for (const [head, rests] of heads) {
    if (node.object === "list" && head === "data") {
      for (const item of node.data) expandInto(store, item, rests);
      continue;
    }
    const value = node[head];
    if (value === undefined) {
      throw StripeError.invalid(`This property cannot be expanded (${head}).`, "expand");
    }
    if (typeof value === "string") node[head] = expandRef(store, value, rests);
    else if (Array.isArray(value)) {
      node[head] = value.map((v) => {
        if (typeof v === "string") return expandRef(store, v, rests);
        if (v && typeof v === "object") expandInto(store, v, rests);
        return v;
      });
    } else if (value && typeof value === "object") expandInto(store, value, rests);
  }
}

function expandRef(store, id, rests) {
  const target = store.objects.get(id);
  if (!target) return id;
  const copy = deepCopy(target);
  expandInto(store, copy, rests);
  return copy;
}

/** The top-level attributes of `before` that differ in `after`: an event's `previous_attributes`. */
export function previousAttributes(before, after) {
  const previous = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) previous[key] = before[key] ?? null;
  }
  return previous;
}
