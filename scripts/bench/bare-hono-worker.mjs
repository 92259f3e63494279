// The start-up reference: Hono with one route and nothing else, bundled the same way as a Worker.
import { Hono } from "hono";

const app = new Hono();
app.get("/healthz", (c) => c.json({ status: "ok" }));

export default app;
