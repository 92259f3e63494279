import type { Env } from "../../env";

/**
 * The D1 databases institutions live in (docs/design/multi-database.md): `DB`, the first, which also
 * holds the directory of which institution lives where, then `DB_1`, `DB_2`, … — every `[[d1_databases]]`
 * binding of wrangler.toml named so, each with the same migrations. Platform users (no institution)
 * and every institution without a directory entry live in `DB`.
 */
export type DatabaseBinding = "DB" | `DB_${number}`;

/** The first database: the directory's, and the default home of every institution. */
export const FIRST_DATABASE: DatabaseBinding = "DB";

const BINDING_NAME = /^DB(?:_[1-9][0-9]*)?$/;

export function isDatabaseBindingName(name: string): name is DatabaseBinding {
  return BINDING_NAME.test(name);
}

function ordinal(name: DatabaseBinding): number {
  return name === "DB" ? 0 : Number(name.slice(3));
}

const bindingLists = new WeakMap<object, DatabaseBinding[]>();

/** Every database binding of this deployment, `DB` first, then by number. */
export function databaseBindings(env: Env): DatabaseBinding[] {
  let list = bindingLists.get(env);
  if (!list) {
    list = Object.keys(env)
      .filter(isDatabaseBindingName)
      .filter((name) => isD1(env[name as keyof Env]))
      .sort((a, b) => ordinal(a) - ordinal(b));
    bindingLists.set(env, list);
  }
  return list;
}

function isD1(value: unknown): boolean {
  return typeof value === "object" && value !== null && typeof (value as D1Database).prepare === "function";
}

/** The binding itself; throws for a name this deployment does not have (a directory entry gone stale). */
export function databaseBinding(env: Env, name: DatabaseBinding): D1Database {
  const binding = (env as unknown as Record<string, unknown>)[name];
  if (!isDatabaseBindingName(name) || !isD1(binding))
    throw new Error(`no D1 database bound as ${name} (wrangler.toml [[d1_databases]])`);
  return binding as D1Database;
}
