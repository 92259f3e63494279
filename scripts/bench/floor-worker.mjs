// The "floor" worker of the benchmark: the least a Worker can do for each kind of request, so the
// Lingua routes can be compared with the platform's own cost in the same run on the same machine.
//   /bare  one Response, nothing else
//   /do    one RPC call to a trivial SQLite-backed Durable Object addressed by a fixed name
//   /d1    one D1 point read by primary key
//   /do-bookkeeping  diagnostic: /do plus the rate limiter's two SQLite writes inside the object
// Plain module worker, no framework, no bundling step.
import { DurableObject } from "cloudflare:workers";

export class FloorObject extends DurableObject {
  ping() {
    return { ok: true, at: Date.now() };
  }

  /**
   * Diagnostic only: the same two SQLite statements the Lingua rate limiter runs per admitted
   * request (src/platform/ratelimit/bucket-store.ts), so its bookkeeping can be told apart from
   * everything else a token route does.
   */
  pingWithBookkeeping() {
    const sql = this.ctx.storage.sql;
    if (!this.bucketsReady) {
      sql.exec("CREATE TABLE IF NOT EXISTS rate_buckets (second INTEGER PRIMARY KEY, hits INTEGER NOT NULL)");
      this.bucketsReady = true;
    }
    const now = Date.now();
    sql.exec("INSERT INTO rate_buckets (second, hits) VALUES (?, 1) ON CONFLICT(second) DO UPDATE SET hits = hits + 1", Math.floor(now / 1000));
    sql.exec("DELETE FROM rate_buckets WHERE second <= ?", Math.floor(now / 1000) - 60);
    return { ok: true, at: now };
  }
}

const ROWS = 100;
let seeded = null;

/** Creates and fills the table once per isolate; afterwards this is one settled-promise check. */
function seedOnce(db) {
  seeded ??= (async () => {
    await db.prepare("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)").run();
    const insert = db.prepare("INSERT OR IGNORE INTO items (id, name) VALUES (?, ?)");
    await db.batch(Array.from({ length: ROWS }, (_, i) => insert.bind(i + 1, `item ${i + 1}`)));
  })().catch((error) => {
    seeded = null;
    throw error;
  });
  return seeded;
}

let next = 0;

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === "/bare") return new Response("ok");
    if (pathname === "/do") {
      const stub = env.FLOOR_OBJECT.get(env.FLOOR_OBJECT.idFromName("floor"));
      return Response.json(await stub.ping());
    }
    if (pathname === "/do-bookkeeping") {
      const stub = env.FLOOR_OBJECT.get(env.FLOOR_OBJECT.idFromName("floor-bookkeeping"));
      return Response.json(await stub.pingWithBookkeeping());
    }
    if (pathname === "/d1") {
      await seedOnce(env.DB);
      next = (next % ROWS) + 1;
      const row = await env.DB.prepare("SELECT id, name FROM items WHERE id = ?").bind(next).first();
      return row ? Response.json(row) : new Response("missing row", { status: 500 });
    }
    return new Response("not found", { status: 404 });
  },
};
