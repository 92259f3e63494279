import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { registerAcceptInvitation } from "./routes/accept-invitation";
import { registerMe } from "./routes/me";
import { registerSignIn } from "./routes/sign-in";

export function registerAuth(app: OpenAPIHono<AppEnv>) {
  registerSignIn(app);
  registerMe(app);
  registerAcceptInvitation(app);
}
