// The floor of xAPI forwarding: the very request bodies Lingua sent (50 statements per POST), loaded
// into this isolate's memory beforehand, then per queue message one POST of one body to the LRS with
// the version header and Basic credentials, six at a time (as the delivery engine), its answer read,
// then the acknowledgement. No D1, no statement building, no claim, no log: what any batched
// forwarding of the same statements must cost.
let bodies = [];

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/load" && request.method === "POST") {
      bodies = await request.json();
      return Response.json({ loaded: bodies.length });
    }
    if (url.pathname === "/enqueue") {
      const target = url.searchParams.get("target");
      for (let i = 0; i < bodies.length; i += 100)
        await env.FLOOR_QUEUE.sendBatch(
          Array.from({ length: Math.min(100, bodies.length - i) }, (_, j) => ({
            body: { n: i + j, target },
            contentType: "json",
          })),
        );
      return Response.json({ enqueued: bodies.length });
    }
    return new Response("not found", { status: 404 });
  },
  async queue(batch) {
    const messages = [...batch.messages];
    let next = 0;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < messages.length) {
          const message = messages[next++];
          const response = await fetch(message.body.target, {
            method: "POST",
            headers: {
              "Content-Type": "application/json",
              "X-Experience-API-Version": "1.0.3",
              Authorization: `Basic ${btoa("lingua:bench-secret")}`,
            },
            body: bodies[message.body.n],
            redirect: "manual",
            signal: AbortSignal.timeout(10_000),
          });
          await response.text();
          if (response.ok) message.ack();
          else message.retry();
        }
      }),
    );
  },
};
