import { expect } from "vitest";
import { scim } from "./support";

/** A recorded exchange of an IdP's validator: the request, and what the answer must contain. */
export interface FixtureStep {
  name: string;
  request: { method: string; path: string; body?: unknown };
  response: { status: number; body?: unknown };
  /** Values of the answer kept for later steps: variable → dotted path in the body. */
  capture?: Record<string, string>;
  /** Attributes the answer must not have. */
  absent?: string[];
}

export interface Fixture {
  name: string;
  source: string;
  steps: FixtureStep[];
}

function substitute<T>(value: T, variables: Record<string, string>): T {
  const text = JSON.stringify(value).replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const found = variables[name];
    if (found === undefined) throw new Error(`fixture variable ${name} is not set`);
    return found;
  });
  return JSON.parse(text) as T;
}

function at(body: any, path: string): unknown {
  return path.split(".").reduce((value, key) => value?.[key], body);
}

/** Plays a fixture against the worker with `token`, step by step; each answer is held to the recorded one. */
export async function play(fixture: Fixture, token: string, variables: Record<string, string>) {
  const vars = { ...variables };
  for (const step of fixture.steps) {
    const request = substitute(step.request, vars);
    const { res, body } = await scim(request.path, {
      token,
      method: request.method,
      ...(request.body !== undefined ? { body: request.body } : {}),
    });
    const label = `${fixture.name} — ${step.name}: ${JSON.stringify(body)}`;
    expect(res.status, label).toBe(step.response.status);
    if (res.status !== 204) expect(res.headers.get("Content-Type"), label).toBe("application/scim+json");
    if (step.response.body !== undefined)
      expect(body, label).toMatchObject(substitute(step.response.body, vars) as object);
    for (const attribute of step.absent ?? []) expect(body, label).not.toHaveProperty(attribute);
    for (const [name, path] of Object.entries(step.capture ?? {})) {
      const value = at(body, path);
      if (typeof value !== "string") throw new Error(`${label}: nothing at ${path} to capture as ${name}`);
      vars[name] = value;
    }
  }
  return vars;
}
