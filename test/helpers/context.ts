import { env } from "cloudflare:test";
import { backgroundContext, type ServiceContext } from "../../src/platform/service/context";

/**
 * A service context for calling a service or consumer directly from a test, as the consumer
 * registry builds one: this test's `env`, the injectable clock unless `now` is given, and
 * `waitUntil` on `execution` (or left running) when the test does not hold an ExecutionContext.
 */
export function testContext(
  options: { execution?: ExecutionContext; now?: () => number } = {},
): ServiceContext {
  const execution = options.execution ?? {
    waitUntil: (promise: Promise<unknown>) => void promise.catch(() => undefined),
  };
  return backgroundContext(env, execution, "queue", options.now);
}
