/**
 * sendLargeJson writes a large reply slice by slice, waiting for the socket to drain: each wait
 * must leave no listener behind (a long reply once added a "close" listener per slice, and Node
 * warned of a leak).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { sendLargeJson } from "../../src/service/http.js";

describe("sendLargeJson", () => {
  it("a reply of 64 MB read by a client leaves at most the listeners it found on the response", async () => {
    const value = "x".repeat(64 * 1024 * 1024);
    let added = Number.NaN;
    const server = createServer((_req, res) => {
      const before = res.listenerCount("close") + res.listenerCount("drain");
      void sendLargeJson(res, 200, ['{"v":"', value, '"}']).then(() => {
        added = res.listenerCount("close") + res.listenerCount("drain") - before;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/`);
      const body = await res.arrayBuffer();
      expect(body.byteLength).toBe(value.length + 8);
      await new Promise((r) => setTimeout(r, 50));
      expect(added).toBe(0);
    } finally {
      server.close();
    }
  }, 60_000);
});
