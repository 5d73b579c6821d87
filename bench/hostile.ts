/**
 * `npm run bench:hostile`: the local service against hostile load, over loopback, in its own
 * process (`rbp serve --port 0 --quiet`, from the sources through tsx). Prints figures; asserts
 * nothing.
 *
 * 1. Connection flood (issue 26, item 1): the server allowed 4,096 open files (`ulimit -n`), 6,000
 *    idle TCP connections opened from 127.0.0.2 (250 at a time); then 20 GET /v3/quota from
 *    127.0.0.1. Prints how many flood connections the server kept open and how many it closed at
 *    once, and each fresh GET's status and latency (p50, max) next to the same GETs with no flood.
 * 2. Upload memory (issue 26, item 2): the server's RSS (from /proc/PID/status: VmRSS now, VmHWM
 *    the peak) before, at the peak of, and 5 s after four concurrent 100 MB v2 X uploads (PUT), then
 *    one 250 MB upload (with --max-upload raised for it).
 *
 * 3. Large JSON POST bodies: the same for four concurrent v3 POSTs of 9.5 MB (X of rows of 10
 *    numbers), each parsed and checked whole and then refused for quota (a server with quota 0),
 *    so that only the reading of the bodies counts; the peak as a multiple of the bodies' size.
 *
 * `npm run bench:hostile -- 1` runs scenario 1 alone (or 2, 3).
 */
import { readFileSync } from "node:fs";
import { connect as tcpConnect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { spawnServe, type ServeProcess } from "../scripts/rbp-serve.js";

const FLOOD = { serverFiles: 4096, connections: 6000, batch: 250, gets: 20 };

function openIdle(url: string, from: string): Promise<{ socket: Socket; closedEarly: () => boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: hostname, port: Number(port), localAddress: from });
    let closed = false;
    socket.on("close", () => (closed = true));
    socket.on("error", () => undefined);
    const done = () => resolve({ socket, closedEarly: () => closed });
    socket.once("connect", done);
    socket.once("error", done);
  });
}

async function quota(url: string, apiKey: string): Promise<{ status: number | string; ms: number }> {
  const t = performance.now();
  try {
    const res = await fetch(`${url}/v3/quota`, { headers: { "x-api-key": apiKey, connection: "close" } });
    await res.text();
    return { status: res.status, ms: performance.now() - t };
  } catch (error) {
    return { status: (error as Error & { cause?: { code?: string } }).cause?.code ?? "failed", ms: performance.now() - t };
  }
}

function summary(samples: Array<{ status: number | string; ms: number }>): string {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const statuses = new Map<string, number>();
  for (const s of samples) statuses.set(String(s.status), (statuses.get(String(s.status)) ?? 0) + 1);
  return `${[...statuses].map(([s, n]) => `${n} x ${s}`).join(", ")}; p50 ${ms[Math.floor(ms.length / 2)].toFixed(1)} ms, max ${ms[ms.length - 1].toFixed(1)} ms`;
}

async function flood(): Promise<void> {
  console.log(`\n1. Connection flood: server allowed ${FLOOD.serverFiles} open files, ${FLOOD.connections} idle connections from 127.0.0.2`);
  const server = await spawnServe(["--port", "0", "--quiet", "--workers", "1"], {}, { maxOpenFiles: FLOOD.serverFiles });
  try {
    const idle: Array<{ status: number | string; ms: number }> = [];
    for (let i = 0; i < FLOOD.gets; i++) idle.push(await quota(server.url, server.apiKey!));
    console.log(`   GET /v3/quota, no flood:        ${summary(idle)}`);
    const held: Array<{ socket: Socket; closedEarly: () => boolean }> = [];
    const t = performance.now();
    for (let i = 0; i < FLOOD.connections; i += FLOOD.batch) {
      held.push(...(await Promise.all(Array.from({ length: Math.min(FLOOD.batch, FLOOD.connections - i) }, () => openIdle(server.url, "127.0.0.2")))));
    }
    const openMs = performance.now() - t;
    await new Promise((r) => setTimeout(r, 200));
    const during: Array<{ status: number | string; ms: number }> = [];
    for (let i = 0; i < FLOOD.gets; i++) during.push(await quota(server.url, server.apiKey!));
    const closed = held.filter((h) => h.closedEarly()).length;
    console.log(`   flood opened in ${openMs.toFixed(0)} ms: ${held.length - closed} kept open by the server, ${closed} closed at once`);
    console.log(`   GET /v3/quota, flood held:      ${summary(during)}`);
    for (const h of held) h.socket.destroy();
  } finally {
    server.child.kill("SIGKILL");
  }
}

/** VmRSS and VmHWM of a process, in MiB. */
function rss(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { now: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/** A JSON X of at most `bytes` bytes (and within a row of it): rows of 10 numbers. */
function matrixJson(bytes: number, seed: number): Buffer {
  const row = (i: number) => `[${Array.from({ length: 10 }, (_, j) => (((i * 31 + j * 7 + seed) % 1000) / 7).toFixed(6)).join(",")}]`;
  const parts: string[] = [];
  let size = 2;
  for (let i = 0; ; i++) {
    const r = row(i);
    if (size + r.length + 1 > bytes) break;
    parts.push(r);
    size += r.length + 1;
  }
  return Buffer.from(`[${parts.join(",")}]`);
}

async function upload(server: ServeProcess, name: string, body: Buffer): Promise<number | string> {
  const headers = { "x-api-key": server.apiKey! };
  const u = await fetch(`${server.url}/v2/prediction-engine/payload/upload/url/X?file_name=${name}`, { headers });
  const { url } = (await u.json()) as { url: string };
  const res = await fetch(url, { method: "PUT", headers: { ...headers, "content-type": "application/json" }, body });
  const text = await res.text();
  return res.status === 200 ? 200 : `${res.status} ${text.slice(0, 120)}`;
}

async function uploads(): Promise<void> {
  console.log("\n2. Upload memory: the server's RSS around v2 X uploads (MiB; the peak is VmHWM)");
  const server = await spawnServe(["--port", "0", "--quiet", "--workers", "1"], {});
  try {
    const pid = server.child.pid!;
    const bodies = [0, 1, 2, 3].map((i) => matrixJson(100e6, i));
    const before = rss(pid);
    const statuses = await Promise.all(bodies.map((b, i) => upload(server, `b${i}.json`, b)));
    const peak = rss(pid).peak;
    await new Promise((r) => setTimeout(r, 5000));
    const after = rss(pid).now;
    console.log(
      `   4 x 100 MB concurrent: statuses ${statuses.join(",")}; RSS before ${before.now.toFixed(0)}, peak ${peak.toFixed(0)} (+${(peak - before.now).toFixed(0)}), 5 s after ${after.toFixed(0)} (+${(after - before.now).toFixed(0)})`,
    );
    bodies.length = 0;
    const big = matrixJson(250e6, 9);
    const before2 = rss(pid).now;
    const status = await upload(server, "big.json", big);
    const peak2 = rss(pid).peak;
    await new Promise((r) => setTimeout(r, 5000));
    const after2 = rss(pid).now;
    console.log(
      `   1 x 250 MB: status ${status}; RSS before ${before2.toFixed(0)}, peak so far ${peak2.toFixed(0)}, 5 s after ${after2.toFixed(0)} (+${(after2 - before2).toFixed(0)})`,
    );
  } finally {
    server.child.kill("SIGKILL");
  }
}

/** A v3 PSR body of about `bytes` bytes: X of rows of 10 numbers, y, one theta. */
function postJson(bytes: number, seed: number): string {
  const X = JSON.parse(matrixJson(bytes * 0.9, seed).toString()) as number[][];
  const y = X.map((row) => row[0] - row[9] / 2);
  return JSON.stringify({ access_id: "ACCESS", y, X, theta: X[0], options: { threshold: [0, 0.5] } });
}

async function posts(): Promise<void> {
  console.log("\n3. Large JSON POST bodies: the server's RSS around four concurrent 9.5 MB v3 POSTs (MiB; limit 10 MiB), each read,");
  console.log("   parsed and checked whole, then refused for quota (--quota 0: 429), so that no job's work is counted");
  const server = await spawnServe(["--port", "0", "--quiet", "--workers", "1", "--quota", "0"], {});
  try {
    const pid = server.child.pid!;
    const bodies = [0, 1, 2, 3].map((i) => postJson(9.5e6, i).replace("ACCESS", server.accessId!));
    const post = async (body: string) => {
      const res = await fetch(`${server.url}/v3/psr`, { method: "POST", headers: { "x-api-key": server.apiKey!, "content-type": "application/json" }, body });
      const text = await res.text();
      return res.status === 429 ? 429 : `${res.status} ${text.slice(0, 120)}`;
    };
    // Warm up: the parser's worker thread starts with the first large body (its own heap and modules).
    await post(postJson(400e3, 9).replace("ACCESS", server.accessId!));
    const before = rss(pid);
    const statuses = await Promise.all(bodies.map(post));
    const peak = rss(pid).peak;
    await new Promise((r) => setTimeout(r, 5000));
    const after = rss(pid).now;
    console.log(`   (the parser's worker thread started by a 0.4 MB POST first: RSS ${before.now.toFixed(0)} after it)`);
    const mb = (bodies[0].length / 1e6).toFixed(1);
    console.log(
      `   4 x ${mb} MB concurrent: statuses ${statuses.join(",")}; RSS before ${before.now.toFixed(0)}, peak ${peak.toFixed(0)} (+${(peak - before.now).toFixed(0)}, ${((peak - before.now) / ((4 * bodies[0].length) / 2 ** 20)).toFixed(1)}x the bodies), 5 s after ${after.toFixed(0)} (+${(after - before.now).toFixed(0)})`,
    );
  } finally {
    server.child.kill("SIGKILL");
  }
}

const only = process.argv[2];
console.log(`bench:hostile (node ${process.version}; the machine may be shared: figures are from this one run)`);
if (only === undefined || only === "1") await flood();
if (only === undefined || only === "2") await uploads();
if (only === undefined || only === "3") await posts();
