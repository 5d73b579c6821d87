/**
 * Connection bounds (src/service/connections.ts, docs/limits.md "Connections"): a flood of idle
 * connections from one address cannot take the open files and lock other clients out; the caps
 * close the excess at once; a silent or half-sent request and an idle keep-alive connection are
 * closed by the server. Loopback only: every 127.0.0.0/8 address is this machine, so 127.0.0.2...
 * are distinct source addresses. Every socket is destroyed at the end of its test. No timing is
 * asserted: each test waits for the events (connect, close) it is about.
 */
import { connect as tcpConnect, type Socket } from "node:net";
import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { spawnServe } from "../../scripts/rbp-serve.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { addressKey, defaultConnectionLimits, openFileLimit, RESERVED_FILES } from "../../src/service/connections.js";

const sockets: Socket[] = [];
const services: LocalService[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of services.splice(0)) await s.close();
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

interface Opened {
  socket: Socket;
  /** Resolves when the connection is closed (by either side), with what the server sent first. */
  closed: Promise<string>;
}

/** Opens a TCP connection from `from` and resolves once it is established (or refused by the kernel). */
function open(url: string, from: string): Promise<Opened> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: hostname, port: Number(port), localAddress: from });
    sockets.push(socket);
    let received = "";
    socket.on("data", (d: Buffer) => (received += d.toString("latin1")));
    socket.on("error", () => undefined);
    const closed = new Promise<string>((done) => socket.on("close", () => done(received)));
    socket.once("connect", () => resolve({ socket, closed }));
    socket.once("error", () => resolve({ socket, closed }));
  });
}

function closeAll(list: Opened[]): Promise<unknown> {
  for (const o of list) o.socket.destroy();
  return Promise.all(list.map((o) => o.closed));
}

/** GET `path` on a fresh connection from `from` (127.0.0.1 unless given); the status and body. */
function get(url: string, path: string, apiKey: string, from = "127.0.0.1"): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host: hostname, port: Number(port), localAddress: from });
    sockets.push(socket);
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("utf8")));
    socket.on("error", reject);
    socket.on("connect", () => socket.write(`GET ${path} HTTP/1.1\r\nhost: x\r\nx-api-key: ${apiKey}\r\nconnection: close\r\n\r\n`));
    socket.on("close", () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!status) reject(new Error(`no HTTP reply: ${JSON.stringify(text.slice(0, 100))}`));
      else resolve({ status: Number(status[1]), body: text.slice(text.indexOf("\r\n\r\n") + 4) });
    });
  });
}

describe("connection limits", () => {
  it("derive from the open-file limit, below it", () => {
    for (const files of [1024, 4096, 65536, 1 << 20]) {
      const l = defaultConnectionLimits(files);
      expect(l.maxConnections + RESERVED_FILES).toBeLessThanOrEqual(files);
      expect(l.maxConnectionsPerAddress).toBeLessThan(l.maxConnections);
      expect(l.headersTimeoutMs).toBeLessThanOrEqual(10_000);
    }
    expect(openFileLimit()).toBeGreaterThan(0);
  });

  it("count an IPv6 address by its /64 (one host commonly holds one), IPv4 as it is", () => {
    expect(addressKey("127.0.0.2")).toBe("127.0.0.2");
    expect(addressKey("::ffff:127.0.0.2")).toBe("127.0.0.2");
    expect(addressKey("2001:db8:aa:bb:1:2:3:4")).toBe("2001:db8:aa:bb::/64");
    expect(addressKey("2001:DB8:AA:BB::9")).toBe(addressKey("2001:db8:aa:bb:ffff::1"));
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("2001:db8:0:1::1")).not.toBe(addressKey("2001:db8:0:2::1"));
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });

  it("a flood of idle connections from one address leaves the service to everyone else (server allowed few open files)", async () => {
    // The reproduction: a server allowed 4,096 files, 6,000 idle connections held from one
    // address. Scaled down when this process itself may not open that many.
    const serverFiles = Math.min(4096, Math.floor(openFileLimit() / 2));
    const flood = Math.floor(serverFiles * 1.5);
    const { child, url, apiKey } = await spawnServe(["--port", "0", "--quiet", "--workers", "1"], {}, { maxOpenFiles: serverFiles });
    children.push(child);
    const held: Opened[] = [];
    for (let i = 0; i < flood; i += 250) {
      held.push(...(await Promise.all(Array.from({ length: Math.min(250, flood - i) }, () => open(url, "127.0.0.2")))));
    }
    const quota = await get(url, "/v3/quota", apiKey!);
    expect(quota.status, quota.body).toBe(200);
    expect(JSON.parse(quota.body)).toHaveProperty("remaining");
    // A second client address is served as well.
    expect((await get(url, "/v3/quota", apiKey!, "127.0.0.3")).status).toBe(200);
    await closeAll(held);
  }, 120_000);

  it("close connections beyond the per-address cap at once, and count them", async () => {
    const service = await startLocalService({ workers: 1, connections: { maxConnections: 50, maxConnectionsPerAddress: 5 } });
    services.push(service);
    const held = await Promise.all(Array.from({ length: 5 }, () => open(service.url, "127.0.0.2")));
    const extra = await open(service.url, "127.0.0.2");
    expect(await extra.closed).toBe(""); // closed by the server before a byte
    expect(service.connections.counts.refusedPerAddress).toBe(1);
    expect((await get(service.url, "/v3/quota", service.credentials.apiKey)).status).toBe(200);
    // Once one closes, the address may open one more.
    held[0].socket.destroy();
    await held[0].closed;
    await new Promise((r) => setImmediate(r));
    const again = await get(service.url, "/v3/quota", service.credentials.apiKey, "127.0.0.2");
    expect(again.status).toBe(200);
    expect(service.connections.counts.refusedPerAddress).toBe(1);
    await closeAll(held);
  });

  it("close connections beyond the total cap at once, whatever their address", async () => {
    const service = await startLocalService({ workers: 1, connections: { maxConnections: 6, maxConnectionsPerAddress: 6 } });
    services.push(service);
    const held = await Promise.all([2, 3, 4, 5, 6, 7].map((n) => open(service.url, `127.0.0.${n}`)));
    const extra = await open(service.url, "127.0.0.8");
    expect(await extra.closed).toBe("");
    expect(service.connections.counts.refusedTotal).toBe(1);
    await closeAll(held);
  });

  it("close a connection that sends nothing, or half a request, once the headers timeout passes", async () => {
    const service = await startLocalService({ workers: 1, connections: { headersTimeoutMs: 200 } });
    services.push(service);
    const silent = await open(service.url, "127.0.0.2");
    const half = await open(service.url, "127.0.0.2");
    half.socket.write("GET /v3/quota HTTP/1.1\r\nhost: x\r\n");
    // Node answers 408 in the JSON error shape (or just closes a connection that sent nothing).
    expect(await silent.closed).toMatch(/^$|^HTTP\/1\.1 408/);
    expect(await half.closed).toMatch(/^HTTP\/1\.1 408/);
  });

  it("close an idle keep-alive connection after keepAliveTimeoutMs", async () => {
    const service = await startLocalService({ workers: 1, connections: { keepAliveTimeoutMs: 100 } });
    services.push(service);
    const c = await open(service.url, "127.0.0.2");
    c.socket.write(`GET /v3/quota HTTP/1.1\r\nhost: x\r\nx-api-key: ${service.credentials.apiKey}\r\n\r\n`);
    expect(await c.closed).toMatch(/^HTTP\/1\.1 200/);
  });

  it("refuse a connection option that is not one", async () => {
    await expect(startLocalService({ connections: { maxConnection: 5 } as never })).rejects.toThrow(/connections\.maxConnection is not/);
    await expect(startLocalService({ connections: { maxConnections: 0 } })).rejects.toThrow(/connections\.maxConnections must be an integer/);
  });
});
