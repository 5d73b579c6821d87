/**
 * Bounds on the connections one service accepts (docs/limits.md, "Connections"), so that no host
 * can take the process's open files and lock every other client out:
 *
 * - a total cap (`server.maxConnections`: node closes the excess at once, before any byte is read),
 * - a cap per remote address (an IPv6 address counted by its /64; the excess is destroyed in the
 *   `connection` event, before any byte is read),
 * - a request must arrive whole within `headersTimeoutMs` of the connection (or of the end of the
 *   previous request), checked every `checkIntervalMs`: a connection that sends nothing is closed
 *   after about 10 s instead of node's 60,
 * - a keep-alive connection idle between requests is closed after `keepAliveTimeoutMs`.
 *
 * Both caps derive from the open-file limit (RLIMIT_NOFILE, read once at start): the total leaves
 * room for the store's files, the worker threads and a database pool.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { Socket } from "node:net";

export interface ConnectionLimits {
  /** Most open connections in all. */
  maxConnections: number;
  /** Most open connections from one remote address. */
  maxConnectionsPerAddress: number;
  /** A request's headers must have arrived this long after the connection or the previous request (ms). */
  headersTimeoutMs: number;
  /** A whole request (headers and body) must have arrived this long after it began (ms). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long (ms). */
  keepAliveTimeoutMs: number;
}

/** File descriptors kept for everything but connections: store files, workers, a database pool, logs. */
export const RESERVED_FILES = 256;

/**
 * The process's soft limit on open files (RLIMIT_NOFILE): /proc/self/limits on Linux, else
 * `ulimit -n` of a shell (which inherits it); 1024 when neither answers or it is unlimited.
 *
 * @example
 * openFileLimit(); // 4096 under `ulimit -n 4096`
 */
export function openFileLimit(): number {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    if (soft !== undefined && /^\d+$/.test(soft)) return Number(soft);
    if (soft === "unlimited") return 1 << 20;
  } catch {
    // not Linux: ask a shell
  }
  const shell = spawnSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" });
  const n = Number(shell.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : shell.stdout?.trim() === "unlimited" ? 1 << 20 : 1024;
}

/**
 * The default limits for a process allowed `files` open files: three quarters of what is left
 * after RESERVED_FILES (at least 32, at most 16,384) in all, a quarter of that (at least 16) per
 * address; headers within 10 s, a whole request within 300 s, keep-alive 5 s.
 *
 * @example
 * defaultConnectionLimits(4096); // { maxConnections: 2880, maxConnectionsPerAddress: 720, ... }
 */
export function defaultConnectionLimits(files = openFileLimit()): ConnectionLimits {
  const maxConnections = Math.min(16_384, Math.max(32, Math.floor(((files - RESERVED_FILES) * 3) / 4)));
  return {
    maxConnections,
    maxConnectionsPerAddress: Math.max(16, Math.floor(maxConnections / 4)),
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 300_000,
    keepAliveTimeoutMs: 5_000,
  };
}

export interface ConnectionCounts {
  /** Open connections now. */
  open: number;
  /** Connections closed at once since the start: over the total cap, over the per-address cap. */
  refusedTotal: number;
  refusedPerAddress: number;
}

/**
 * Applies `limits` to `server` (before it listens) and returns live counts. The per-address count
 * goes down when a connection closes, whoever closes it.
 *
 * @example
 * const counts = boundConnections(server, defaultConnectionLimits());
 */
export function boundConnections(server: Server, limits: ConnectionLimits, log?: (line: string) => void): ConnectionCounts {
  const counts: ConnectionCounts = { open: 0, refusedTotal: 0, refusedPerAddress: 0 };
  const byAddress = new Map<string, number>();
  server.maxConnections = limits.maxConnections;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs);
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  let warned = 0;
  const warn = (what: string) => {
    // One line a minute at most: a flood must not flood the log too.
    const now = Date.now();
    if (now - warned < 60_000) return;
    warned = now;
    log?.(`refusing connections: ${what} (counted in the service's connection figures)`);
  };
  server.on("drop", () => {
    counts.refusedTotal++;
    warn(`${limits.maxConnections} open in all (maxConnections)`);
  });
  server.on("connection", (socket: Socket) => {
    const address = addressKey(socket.remoteAddress ?? "");
    const held = byAddress.get(address) ?? 0;
    if (held >= limits.maxConnectionsPerAddress) {
      counts.refusedPerAddress++;
      warn(`${held} open from one address (maxConnectionsPerAddress ${limits.maxConnectionsPerAddress})`);
      socket.destroy();
      return;
    }
    byAddress.set(address, held + 1);
    counts.open++;
    socket.once("close", () => {
      counts.open--;
      const n = (byAddress.get(address) ?? 1) - 1;
      if (n <= 0) byAddress.delete(address);
      else byAddress.set(address, n);
    });
  });
  return counts;
}

/**
 * What the per-address cap counts by: an IPv4 address (also IPv4-mapped IPv6) as it is, an IPv6
 * address by its /64 prefix (one host commonly holds a whole /64).
 *
 * @example
 * addressKey("2001:db8::1"); // "2001:db8:0:0::/64"
 * addressKey("::ffff:10.0.0.1"); // "10.0.0.1"
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(":")) return address;
  const [head, tail] = address.split("%")[0].split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...new Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => (g.replace(/^0+(?=.)/, "") || "0").toLowerCase())
    .join(":")}::/64`;
}

/**
 * How often node checks the headers and request timeouts: a tenth of the headers timeout, between
 * 100 ms and 1 s (node's default, 30 s, would let a silent connection live 40 s).
 */
export function checkIntervalMs(limits: ConnectionLimits): number {
  return Math.min(1000, Math.max(100, Math.floor(limits.headersTimeoutMs / 10)));
}
