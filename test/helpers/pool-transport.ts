// How vitest (in Node) answers each workerd test file's module requests, made cheaper: the pool writes
// every answer with devalue's stringify, whose string escaping is a loop over every character of every
// module's code (some 8 MB a test file, the source maps inline). Profiled, that was a third of the vitest
// process's single thread, which both files at a time wait on (docs/design/testing.md).
import type { cloudflareTest } from "@cloudflare/vitest-pool-workers";

type Plugin = ReturnType<typeof cloudflareTest>;
// What the pool's worker is at run time; the pool's types do not name it.
interface PoolWorker {
  send(message: unknown): void;
  socket?: { send(text: string): void };
}
interface PoolRunner {
  name: string;
  createPoolWorker(options: unknown): PoolWorker;
}

class NotPlain extends Error {}

/**
 * devalue's format (what the runner in workerd parses) for plain JSON data — objects and arrays of
 * strings, finite numbers, booleans, null and undefined — written with JSON.stringify; anything else
 * (errors, binary, a shared or cyclic object) throws NotPlain and goes through the pool's own
 * stringify. Equal to devalue's output once parsed: it writes each string where devalue shares one
 * copy between equal strings, and JSON.stringify leaves U+2028/U+2029 unescaped, which JSON allows.
 */
export function stringifyPlain(value: unknown): string {
  const entries: string[] = [];
  const visited = new Set<object>();
  const flatten = (thing: unknown): number => {
    if (thing === undefined) return -1;
    if (typeof thing === "number" && (!Number.isFinite(thing) || Object.is(thing, -0))) throw new NotPlain();
    const index = entries.length;
    if (thing === null || ["string", "number", "boolean"].includes(typeof thing)) {
      entries.push(JSON.stringify(thing));
      return index;
    }
    if (typeof thing !== "object" || visited.has(thing)) throw new NotPlain();
    visited.add(thing);
    entries.push("");
    if (Array.isArray(thing) && Object.getPrototypeOf(thing) === Array.prototype) {
      const items: number[] = [];
      for (let i = 0; i < thing.length; i++) {
        if (!(i in thing)) throw new NotPlain();
        items.push(flatten(thing[i]));
      }
      entries[index] = `[${items.join(",")}]`;
      return index;
    }
    if (Object.getPrototypeOf(thing) !== Object.prototype || Object.getOwnPropertySymbols(thing).length > 0) {
      throw new NotPlain();
    }
    const fields = Object.entries(thing).map(([key, field]) => `${JSON.stringify(key)}:${flatten(field)}`);
    entries[index] = `{${fields.join(",")}}`;
    return index;
  };
  const root = flatten(value);
  return root < 0 ? `${root}` : `[${entries.join(",")}]`;
}

/** The answer to one of the runner's calls (birpc's `{ t: "s", i, r }`), the pool's source map left out as it leaves it out. */
function plainAnswer(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null || (message as { t?: unknown }).t !== "s") return;
  const answer = message as { r?: unknown };
  const result =
    typeof answer.r === "object" && answer.r !== null && "map" in answer.r
      ? { ...answer.r, map: undefined }
      : answer.r;
  try {
    return stringifyPlain({ ...answer, r: result });
  } catch (error) {
    if (error instanceof NotPlain) return;
    throw error;
  }
}

/**
 * The pool's plugin, its workers sending the runner's answers as {@link stringifyPlain} writes them.
 * The pool's own send stays for everything else (the start and run messages it rewrites, errors).
 */
export function withPlainAnswers(plugin: Plugin): Plugin {
  const configure = plugin.configureVitest;
  if (typeof configure !== "function")
    throw new Error("The workers pool's plugin no longer configures vitest");
  return {
    ...plugin,
    configureVitest(context) {
      configure.call(this, context);
      const config = context.project.config as unknown as { poolRunner?: PoolRunner };
      const pool = config.poolRunner;
      if (pool === undefined) throw new Error("The workers pool's plugin no longer sets a pool runner");
      config.poolRunner = {
        name: pool.name,
        createPoolWorker(options) {
          const worker = pool.createPoolWorker(options);
          const send = worker.send.bind(worker);
          worker.send = (message) => {
            const text = worker.socket === undefined ? undefined : plainAnswer(message);
            if (text === undefined) send(message);
            else worker.socket?.send(text);
          };
          return worker;
        },
      };
    },
  };
}
