/**
 * A small misbehaving HTTP server for the client's fault tests: on 127.0.0.1:0, it answers each
 * request with the next scripted behaviour for its method and path (the last one repeats), and
 * records every request it saw (method, path, headers, body).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  /** False when the connection dropped before the body was complete. */
  complete: boolean;
}

export type Behaviour = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void;

export interface FaultServer {
  url: string;
  port: number;
  requests: SeenRequest[];
  /** Requests seen for `method path` (path without query). */
  count(method: string, path: string): number;
  /** Scripts `method path`: each request takes the next behaviour; the last one repeats. */
  on(method: string, path: string, ...behaviours: Behaviour[]): void;
  close(): Promise<void>;
}

export async function startFaultServer(): Promise<FaultServer> {
  const scripts = new Map<string, Behaviour[]>();
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const seen: SeenRequest = { method: req.method ?? "", path, headers: req.headers, body: "", complete: false };
    requests.push(seen);
    const script = scripts.get(`${req.method} ${path}`);
    const behaviour = script === undefined ? notScripted : script.length > 1 ? script.shift()! : script[0];
    behaviour(req, res, seen);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    count: (method, path) => requests.filter((r) => r.method === method && r.path === path).length,
    on(method, path, ...behaviours) {
      scripts.set(`${method} ${path}`, behaviours);
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Reads the whole body into `seen.body`, then calls `then`. */
function readAll(req: IncomingMessage, seen: SeenRequest, then: () => void): void {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    seen.body = Buffer.concat(chunks).toString("utf8");
    seen.complete = true;
    then();
  });
}

const notScripted: Behaviour = (req, res, seen) =>
  readAll(req, seen, () => {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: `not scripted: ${req.method} ${seen.path}`, error: "not_found", status_code: 404, error_code: 1 }));
  });

/** A JSON answer. */
export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Behaviour =>
  (req, res, seen) =>
    readAll(req, seen, () => {
      const text = JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
      res.end(text);
    });

/** An HTML page (as a proxy or gateway would send), optionally echoing the request's headers. */
export const html =
  (status: number, options: { echoHeaders?: boolean } = {}): Behaviour =>
  (req, res, seen) =>
    readAll(req, seen, () => {
      const echo = options.echoHeaders ? `<pre>${JSON.stringify(req.headers)}</pre>` : "";
      const text = `<!DOCTYPE html><html><head><title>${status} Error</title><style>body{color:red}</style></head><body><h1>${status} Bad Gateway</h1><p>The upstream server sent an invalid response.</p>${echo}</body></html>`;
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
      res.end(text);
    });

/** Closes the connection without an answer, once the request's head has arrived. */
export const drop: Behaviour = (req) => {
  req.socket.destroy();
};

/** Reads the first chunk of the body, then closes the connection (a drop in the middle of a POST). */
export const dropMidBody: Behaviour = (req, _res, seen) => {
  req.once("data", (chunk: Buffer) => {
    seen.body = chunk.toString("utf8");
    req.socket.destroy();
  });
};

/** Reads the whole body, then closes the connection without an answer. */
export const dropAfterBody: Behaviour = (req, _res, seen) => readAll(req, seen, () => req.socket.destroy());

/** Reads the body and never answers. */
export const hang: Behaviour = (req, _res, seen) => readAll(req, seen, () => undefined);
