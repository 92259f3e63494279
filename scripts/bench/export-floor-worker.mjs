// The floor of the exports benchmark (scripts/bench/exports.mjs): a plain D1 → R2 copy of the same
// rows the `activity` export writes, in one request, with nothing else — the same keyset SELECT
// (same columns, same index range), rows joined with commas (no CSV library, no quoting, no
// formula guard), 5 MiB multipart parts uploaded one after the other, no checkpoints, no queue.
//   GET /copy?institution=ID&as_of=ISO&page=5000&part=5242880  → { rows, bytes, parts, ms }
// Plain module worker, no framework, no bundling step.

const COLUMNS = `id, occurred_at, user_id, course_id, lesson_id, training_item_id, skill, cefr_level,
  round(score, 3), CASE correct WHEN 0 THEN 'false' ELSE 'true' END, duration_seconds, xp_awarded, recorded_at`;
const FIRST = `SELECT ${COLUMNS} FROM attempts WHERE institution_id = ?1 AND recorded_at <= ?2 ORDER BY occurred_at, id LIMIT ?3`;
const AFTER = `SELECT ${COLUMNS} FROM attempts WHERE institution_id = ?1 AND recorded_at <= ?2 AND (occurred_at, id) > (?4, ?5) ORDER BY occurred_at, id LIMIT ?3`;

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname !== "/copy") return new Response("not found", { status: 404 });
    const institution = url.searchParams.get("institution");
    const asOf = url.searchParams.get("as_of");
    const pageSize = Number(url.searchParams.get("page") ?? 5000);
    const partSize = Number(url.searchParams.get("part") ?? 5242880);
    const started = Date.now();
    const encoder = new TextEncoder();
    const upload = await env.BUCKET.createMultipartUpload(`floor/${crypto.randomUUID()}.csv`);
    const parts = [];
    const chunks = [];
    let buffered = 0;
    let rows = 0;
    let bytes = 0;
    const take = (n) => {
      const out = new Uint8Array(n);
      let filled = 0;
      while (filled < n) {
        const chunk = chunks[0];
        const count = Math.min(chunk.length, n - filled);
        out.set(chunk.subarray(0, count), filled);
        filled += count;
        if (count === chunk.length) chunks.shift();
        else chunks[0] = chunk.subarray(count);
      }
      buffered -= n;
      return out;
    };
    const send = async (body) => {
      parts.push(await upload.uploadPart(parts.length + 1, body));
      bytes += body.length;
    };
    let after = null;
    for (;;) {
      const statement = after
        ? env.DB.prepare(AFTER).bind(institution, asOf, pageSize, after[0], after[1])
        : env.DB.prepare(FIRST).bind(institution, asOf, pageSize);
      const page = await statement.raw();
      if (page.length > 0) {
        const text = `${page.map((row) => row.join(",")).join("\r\n")}\r\n`;
        const encoded = encoder.encode(text);
        chunks.push(encoded);
        buffered += encoded.length;
        rows += page.length;
        const last = page[page.length - 1];
        after = [last[1], last[0]];
        while (buffered >= partSize) await send(take(partSize));
      }
      if (page.length < pageSize) break;
    }
    if (buffered > 0 || parts.length === 0) await send(take(buffered));
    await upload.complete(parts);
    return Response.json({ rows, bytes, parts: parts.length, ms: Date.now() - started });
  },
};
