import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface LoopbackServer {
  url: string;
  close: () => Promise<void>;
}

/**
 * Starts `server` on a free loopback port: every counterpart the tests run (webhook receiver, DoH
 * stub, IdP, LTI platform) listens on 127.0.0.1 only, and closes its kept-alive connections on close.
 */
export function listenOnLoopback(server: Server): Promise<LoopbackServer> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
