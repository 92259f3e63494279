import type { XapiStatement } from "./build";

/**
 * A statement's JSON text, exactly `JSON.stringify(statement)`, assembled from the text of its
 * parts. The statements of one offer share their actor, verb, object and context objects (made once
 * per set of references: build.ts), so each of those is serialised once, not once per statement;
 * only the id, the result and the timestamp are serialised each time. A part is never changed once
 * built, which is what lets its text be kept with it.
 */
const texts = new WeakMap<object, string>();

function partText(part: object): string {
  let text = texts.get(part);
  if (text === undefined) {
    text = JSON.stringify(part);
    texts.set(part, text);
  }
  return text;
}

/** The keys in the order `built` (build.ts) gives them, so the text is JSON.stringify's. */
export function statementText(s: XapiStatement): string {
  const result = s.result ? `,"result":${JSON.stringify(s.result)}` : "";
  return `{"id":${JSON.stringify(s.id)},"actor":${partText(s.actor)},"verb":${partText(s.verb)},"object":${partText(s.object)}${result},"context":${partText(s.context)},"timestamp":${JSON.stringify(s.timestamp)}}`;
}
