import { scimUserAttributes } from "../../../db/schema";
import type { Database } from "../../../platform/db";
import { ScimError } from "../errors";
import {
  attribute,
  booleanOf,
  ENTERPRISE_USER_SCHEMA,
  isObject,
  type Json,
  type ScimEmail,
} from "./resources";
import type { Attributes } from "./user-read";

/** What a User resource asks of the member, checked as RFC 7643 and this product's limits say. */

/** What a User resource (as sent, or as a PATCH left it) asks the member to be. */
export interface Desired {
  email: string;
  name: string;
  givenName: string | null;
  familyName: string | null;
  externalId: string | null;
  active: boolean;
  emails: ScimEmail[] | null;
  department: string | null;
}

function invalid(detail: string): ScimError {
  return new ScimError(400, detail, "invalidValue");
}

function optionalText(value: unknown, what: string, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalid(`${what} must be a string.`);
  const text = value.trim();
  if (text.length > max) throw invalid(`${what} is longer than ${max} characters.`);
  return text === "" ? null : text;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function emailsOf(value: unknown): ScimEmail[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw invalid("emails must be an array.");
  if (value.length > 10) throw invalid("A User has at most 10 emails.");
  return value.map((entry) => {
    if (!isObject(entry)) throw invalid("Each of emails is an object with a value.");
    const address = optionalText(attribute(entry, "value"), "emails.value", 254);
    if (!address || !EMAIL.test(address)) throw invalid("Each of emails has an e-mail address as its value.");
    const email: ScimEmail = { value: address };
    const type = optionalText(attribute(entry, "type"), "emails.type", 50);
    if (type) email.type = type;
    const primary = booleanOf(attribute(entry, "primary"));
    if (primary === "invalid") throw invalid("emails.primary must be true or false.");
    if (primary !== undefined) email.primary = primary;
    return email;
  });
}

/** The enterprise extension, sent as its own object or (PATCH without path, Entra) flattened into the resource. */
function departmentOf(resource: Json): string | null {
  const extension = attribute(resource, ENTERPRISE_USER_SCHEMA);
  if (isObject(extension)) return optionalText(attribute(extension, "department"), "department", 200);
  const flat = attribute(resource, `${ENTERPRISE_USER_SCHEMA}:department`);
  return optionalText(flat, "department", 200);
}

/**
 * The member's name from the resource. Given the resource as it was (`before`: a PUT or a PATCH), the
 * one of `name.formatted`, `displayName` or the given and family names that changed wins, so that a
 * client changing any one of them is heard; a new User takes the first it has, or the e-mail's local part.
 */
function nameOf(resource: Json, email: string, before?: Json): string {
  const name = attribute(resource, "name");
  const parts = isObject(name) ? name : {};
  const formatted = optionalText(attribute(parts, "formatted"), "name.formatted", 200);
  const display = optionalText(attribute(resource, "displayName"), "displayName", 200);
  const given = optionalText(attribute(parts, "givenName"), "name.givenName", 100);
  const family = optionalText(attribute(parts, "familyName"), "name.familyName", 100);
  const joined = [given, family].filter(Boolean).join(" ") || null;
  if (before) {
    const was = isObject(before.name) ? before.name : {};
    if (formatted && formatted !== was.formatted) return formatted;
    if (display && display !== before.displayName) return display;
    if (joined && (given !== (was.givenName ?? null) || family !== (was.familyName ?? null))) return joined;
    return String(was.formatted ?? before.displayName ?? email);
  }
  return formatted ?? display ?? joined ?? (email.split("@")[0] as string);
}

export function desiredOf(resource: unknown, before?: Json): Desired {
  if (!isObject(resource)) throw new ScimError(400, "The body must be a SCIM User object.", "invalidSyntax");
  const userName = optionalText(attribute(resource, "userName"), "userName", 254);
  if (!userName) throw invalid("userName is required.");
  if (!EMAIL.test(userName))
    throw invalid("userName must be the person's e-mail address (map the IdP's e-mail or UPN to it).");
  const email = userName.toLowerCase();
  const active = booleanOf(attribute(resource, "active"));
  if (active === "invalid") throw invalid('active must be true or false (or "True"/"False").');
  const name = attribute(resource, "name");
  const parts = isObject(name) ? name : {};
  const emails = emailsOf(attribute(resource, "emails"));
  return {
    email,
    name: nameOf(resource, email, before),
    givenName: optionalText(attribute(parts, "givenName"), "name.givenName", 100),
    familyName: optionalText(attribute(parts, "familyName"), "name.familyName", 100),
    externalId: optionalText(attribute(resource, "externalId"), "externalId", 255),
    active: active ?? true,
    // The default (the member's e-mail as its one work address) is not stored.
    emails:
      emails &&
      !(emails.length === 1 && emails[0]?.value.toLowerCase() === email && emails[0]?.type === "work")
        ? emails
        : null,
    department: departmentOf(resource),
  };
}

export function attributesRow(institutionId: string, userId: string, desired: Desired) {
  return {
    userId,
    institutionId,
    givenName: desired.givenName,
    familyName: desired.familyName,
    emails: desired.emails,
    department: desired.department,
    removedAt: null as string | null,
  };
}

export function upsertAttributes(db: Database, row: ReturnType<typeof attributesRow>) {
  const { userId: _u, institutionId: _i, ...set } = row;
  return db
    .insert(scimUserAttributes)
    .values(row)
    .onConflictDoUpdate({ target: [scimUserAttributes.userId, scimUserAttributes.institutionId], set });
}

export function sameAttributes(a: Attributes | null, b: ReturnType<typeof attributesRow>): boolean {
  const empty = !b.givenName && !b.familyName && !b.emails && !b.department;
  if (!a) return empty;
  return (
    a.removedAt === b.removedAt &&
    a.givenName === b.givenName &&
    a.familyName === b.familyName &&
    JSON.stringify(a.emails) === JSON.stringify(b.emails) &&
    a.department === b.department
  );
}
