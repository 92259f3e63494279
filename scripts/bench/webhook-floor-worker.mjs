// The floor of a webhook delivery: per queue message, an HMAC-SHA256 signature of a body the size of
// ours and a POST of it, six at a time (the Workers connection limit, as in the real consumer), then
// the acknowledgement. No D1, no claim, no log: what any signed delivery must cost.
const encoder = new TextEncoder();
let key;

async function sign(body) {
  key ??= await crypto.subtle.importKey(
    "raw",
    encoder.encode("whsec_floor"),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, body));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname !== "/enqueue") return new Response("not found", { status: 404 });
    const count = Number(url.searchParams.get("n"));
    const target = url.searchParams.get("target");
    for (let i = 0; i < count; i += 100) {
      const size = Math.min(100, count - i);
      await env.FLOOR_QUEUE.sendBatch(
        Array.from({ length: size }, (_, j) => ({ body: { n: i + j, target }, contentType: "json" })),
      );
    }
    return Response.json({ enqueued: count });
  },
  async queue(batch) {
    const messages = [...batch.messages];
    let next = 0;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < messages.length) {
          const message = messages[next++];
          const body = encoder.encode(
            JSON.stringify({
              id: `evt_${message.body.n}`,
              type: "lesson.completed",
              created_at: new Date().toISOString(),
              data: {
                user_id: "usr_bench_learner",
                lesson_id: `les_${message.body.n}`,
                course_id: "crs_bench",
                score: 1,
                items: 1,
                completed_at: new Date().toISOString(),
              },
            }),
          );
          const signature = await sign(body);
          const response = await fetch(message.body.target, {
            method: "POST",
            headers: {
              "Content-Type": "application/json",
              "X-Signature-256": signature,
              "X-Webhook-Delivery": `floor_${message.body.n}`,
            },
            body,
            redirect: "manual",
            signal: AbortSignal.timeout(10_000),
          });
          await response.body?.cancel();
          if (response.ok) message.ack();
          else message.retry();
        }
      }),
    );
  },
};
