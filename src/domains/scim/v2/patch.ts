import { scimPatch } from "scim-patch";
import { ScimError, type ScimType } from "../errors";
import { attribute, isObject, type Json, PATCH_OP_SCHEMA } from "./resources";

/**
 * A SCIM PATCH request (RFC 7644 §3.5.2) checked, then applied with `scim-patch` to the resource as
 * it is now: `add`, `replace` and `remove`, with or without `path`, value filters on multi-valued
 * attributes (`emails[type eq "work"].value`). The operation names are matched without regard to
 * case (Entra sends `Replace`). The caller stores the result as a PUT would.
 */
export interface PatchOperation {
  op: "add" | "replace" | "remove";
  path?: string;
  value?: unknown;
}

const MAX_OPERATIONS = 100;

/** The request's operations, checked; 400 `invalidSyntax` (or `invalidValue`) otherwise. */
export function patchOperations(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw new ScimError(400, "The body must be a SCIM PatchOp message.", "invalidSyntax");
  const schemas = attribute(body, "schemas");
  if (Array.isArray(schemas) && schemas.length > 0 && !schemas.includes(PATCH_OP_SCHEMA))
    throw new ScimError(400, `A PATCH body's schemas are ["${PATCH_OP_SCHEMA}"].`, "invalidSyntax");
  const operations = attribute(body, "Operations");
  if (!Array.isArray(operations) || operations.length === 0)
    throw new ScimError(400, "A PATCH body has a non-empty Operations array.", "invalidSyntax");
  if (operations.length > MAX_OPERATIONS)
    throw new ScimError(400, `A PATCH body has at most ${MAX_OPERATIONS} operations.`, "invalidSyntax");
  return operations.map((operation, i) => {
    if (!isObject(operation)) throw new ScimError(400, `Operations[${i}] is not an object.`, "invalidSyntax");
    const op = attribute(operation, "op");
    const kind = typeof op === "string" ? op.toLowerCase() : "";
    if (kind !== "add" && kind !== "replace" && kind !== "remove")
      throw new ScimError(400, `Operations[${i}].op must be add, replace or remove.`, "invalidSyntax");
    const path = attribute(operation, "path");
    if (path !== undefined && (typeof path !== "string" || path.trim() === ""))
      throw new ScimError(400, `Operations[${i}].path must be a non-empty string.`, "invalidPath");
    const value = attribute(operation, "value");
    if (kind !== "remove" && value === undefined)
      throw new ScimError(400, `Operations[${i}] (${kind}) has no value.`, "invalidValue");
    if (kind === "remove" && path === undefined)
      throw new ScimError(400, `Operations[${i}] (remove) has no path.`, "noTarget");
    return { op: kind, ...(path !== undefined ? { path: (path as string).trim() } : {}), value };
  });
}

/** Attributes a client may not change; a PATCH naming one answers 400 `mutability`. */
const READ_ONLY = new Set(["id", "meta", "groups"]);

function touchesReadOnly(operation: PatchOperation): string | null {
  if (operation.path) {
    const root = operation.path.split(/[.[]/)[0]?.toLowerCase() ?? "";
    return READ_ONLY.has(root) ? root : null;
  }
  return null;
}

/** The resource with the request's operations applied (its read-only attributes as they were). */
export function applyPatch(current: Json, body: unknown): Json {
  const operations = patchOperations(body);
  for (const operation of operations) {
    const readOnly = touchesReadOnly(operation);
    if (readOnly) throw new ScimError(400, `${readOnly} cannot be changed.`, "mutability");
  }
  try {
    // scim-patch changes the object it is given: a copy, so `current` stays what was read.
    const patched = scimPatch(structuredClone(current) as never, operations as never) as unknown as Json;
    return { ...patched, id: current.id, meta: current.meta, groups: current.groups };
  } catch (error) {
    if (error instanceof ScimError) throw error;
    const scimCode = (error as { scimCode?: string }).scimCode;
    const detail = error instanceof Error ? error.message : String(error);
    throw new ScimError(
      400,
      detail || "The PATCH operations could not be applied.",
      (scimCode as ScimType) ?? "invalidSyntax",
    );
  }
}
