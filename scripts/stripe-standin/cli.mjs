#!/usr/bin/env node
// The stand-in on its own, for a worker started some other way (`npm run dev` starts it for you):
//   node scripts/stripe-standin/cli.mjs [--port 12111] [--webhook-url http://127.0.0.1:8787/api/billing/webhook]
// with the local key and webhook secret of scripts/stripe-standin/local.mjs (what .dev.vars gets).
import { parseArgs } from "node:util";
import { startStripeStandIn } from "./index.mjs";
import { LOCAL_PORT, LOCAL_SECRET_KEY, LOCAL_WEBHOOK_SECRET } from "./local.mjs";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: String(LOCAL_PORT) },
    "webhook-url": { type: "string" },
  },
});
const standIn = await startStripeStandIn({
  port: Number(values.port),
  secretKey: LOCAL_SECRET_KEY,
  webhookSecret: LOCAL_WEBHOOK_SECRET,
  webhookUrl: values["webhook-url"],
  log: (line) => console.log(line),
});
console.log(
  `Stripe stand-in on ${standIn.url} (key ${LOCAL_SECRET_KEY}, webhook secret ${LOCAL_WEBHOOK_SECRET})`,
);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, async () => {
    await standIn.close();
    process.exit(0);
  });
}
